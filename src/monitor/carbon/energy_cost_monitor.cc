#include "zeus/monitor/carbon/energy_cost_monitor.h"

#include "monitor/carbon/single_rate_measurement.h"

namespace zeus::carbon {
namespace {

constexpr carbon_internal::RateFields<EnergyCostMeasurement> kCostFields{
    &EnergyCostMeasurement::gpu_energy_cost, &EnergyCostMeasurement::cpu_energy_cost,
    &EnergyCostMeasurement::dram_energy_cost, &EnergyCostMeasurement::hour_price};

}  // namespace

EnergyCostMonitor::EnergyCostMonitor(const device::DeviceInventory& devices,
                                     std::shared_ptr<HourlyRateProvider> provider,
                                     HourlyRateMonitorOptions options)
    : monitor_(devices, {std::move(provider)}, std::move(options)) {}

void EnergyCostMonitor::begin_window(const std::string& key, bool sync_execution) {
  monitor_.begin_window(key, sync_execution);
}

EnergyCostMeasurement EnergyCostMonitor::end_window(const std::string& key, bool sync_execution) {
  return carbon_internal::single_rate_measurement(monitor_.end_window(key, sync_execution),
                                                  kCostFields);
}

}  // namespace zeus::carbon
