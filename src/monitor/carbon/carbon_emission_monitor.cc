#include "zeus/monitor/carbon/carbon_emission_monitor.h"

#include "monitor/carbon/single_rate_measurement.h"

namespace zeus::carbon {
namespace {

constexpr carbon_internal::RateFields<CarbonEmissionMeasurement> kEmissionFields{
    &CarbonEmissionMeasurement::gpu_carbon_emission,
    &CarbonEmissionMeasurement::cpu_carbon_emission,
    &CarbonEmissionMeasurement::dram_carbon_emission, &CarbonEmissionMeasurement::hour_intensity};

}  // namespace

CarbonEmissionMonitor::CarbonEmissionMonitor(const device::DeviceInventory& devices,
                                             std::shared_ptr<HourlyRateProvider> provider,
                                             HourlyRateMonitorOptions options)
    : monitor_(devices, {std::move(provider)}, std::move(options)) {}

void CarbonEmissionMonitor::begin_window(const std::string& key, bool sync_execution) {
  monitor_.begin_window(key, sync_execution);
}

CarbonEmissionMeasurement CarbonEmissionMonitor::end_window(const std::string& key,
                                                            bool sync_execution) {
  return carbon_internal::single_rate_measurement(monitor_.end_window(key, sync_execution),
                                                  kEmissionFields);
}

}  // namespace zeus::carbon
