// The carbon/price providers (ElectricityMaps, OpenEI, CSV hourly rates,
// constants) as the Chase controller's signal source.
#pragma once

#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_source.h"

namespace zeus::carbon_aware {

// Hourly rates averaged over each period (weighted by overlap). The kind
// follows the provider's unit (gCO2eq/kWh: carbon; anything else: price).
// The provider must outlive this object. Provider errors pass through.
class ProviderSignalSource final : public SignalSource {
 public:
  explicit ProviderSignalSource(carbon::HourlyRateProvider& provider) : provider_(provider) {}
  double value(std::int64_t start_utc, std::int64_t period_s) override;
  SignalKind kind() const override;
  std::string description() const override { return provider_.description(); }

 private:
  carbon::HourlyRateProvider& provider_;
};

}  // namespace zeus::carbon_aware
