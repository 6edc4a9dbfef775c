#include "zeus/carbon/energy_cost_monitor.h"

namespace zeus {

EnergyCostMonitor::EnergyCostMonitor(const DeviceInventory& devices,
                                     std::shared_ptr<HourlyRateProvider> provider,
                                     HourlyRateMonitorOptions options)
    : monitor_(devices, {std::move(provider)}, std::move(options)) {}

void EnergyCostMonitor::begin_window(const std::string& key, bool sync_execution) {
  monitor_.begin_window(key, sync_execution);
}

EnergyCostMeasurement EnergyCostMonitor::end_window(const std::string& key, bool sync_execution) {
  HourlyMeasurement m = monitor_.end_window(key, sync_execution);
  RateResult& r = m.rates.front();
  EnergyCostMeasurement out;
  out.time = m.energy.time;
  out.gpu_energy = std::move(m.energy.gpu_energy);
  out.cpu_energy = std::move(m.energy.cpu_energy);
  out.dram_energy = std::move(m.energy.dram_energy);
  out.gpu_energy_cost = std::move(r.gpu);
  out.cpu_energy_cost = std::move(r.cpu);
  out.dram_energy_cost = std::move(r.dram);
  out.hours = std::move(m.hours);
  out.hour_price = std::move(r.hour_rates);
  out.error = std::move(r.error);
  return out;
}

}  // namespace zeus
