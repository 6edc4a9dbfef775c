// Where the live carbon-aware controller reads the grid signal: one value per
// decision period. Implementations: a GridSignal (a CSV file, a scripted series
// in tests) here; the ElectricityMaps/OpenEI providers through an adapter in
// the chase part (zeus/optimizer/power_limit/carbon_aware/provider_source.h).
#pragma once

#include <cstdint>
#include <string>

#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"

namespace zeus::carbon_aware {

class SignalSource {
 public:
  virtual ~SignalSource() = default;
  // The signal's value over [start_utc, start_utc + period_s) (the mean of
  // finer samples). Throws zeus::Error when it cannot say (network, missing
  // data), with a message that says what to do.
  virtual double value(std::int64_t start_utc, std::int64_t period_s) = 0;
  virtual SignalKind kind() const = 0;
  virtual std::string description() const = 0;
};

// Values from a series held in memory. kNotFound outside it.
class GridSignalSource final : public SignalSource {
 public:
  explicit GridSignalSource(GridSignal signal) : signal_(std::move(signal)) {}
  double value(std::int64_t start_utc, std::int64_t period_s) override;
  SignalKind kind() const override { return signal_.kind(); }
  std::string description() const override { return signal_.source(); }

 private:
  GridSignal signal_;
};

}  // namespace zeus::carbon_aware
