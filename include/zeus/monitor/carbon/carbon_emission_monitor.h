// Carbon emissions of measurement windows: the CarbonEmissionMonitor of the
// Python Zeus, over HourlyRateMonitor with one carbon-intensity provider
// (ElectricityMapsClient, ConstantRate or CsvHourlyRates in gCO2eq/kWh).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "zeus/monitor/carbon/hourly_rate_monitor.h"

namespace zeus::carbon {

struct CarbonEmissionMeasurement {
  Seconds time{};
  std::map<int, Joules> gpu_energy;
  std::map<int, Joules> cpu_energy;
  std::map<int, Joules> dram_energy;
  // gCO2eq per device; nullopt when the provider failed (see error).
  std::optional<std::map<int, double>> gpu_carbon_emission;
  std::optional<std::map<int, double>> cpu_carbon_emission;
  std::optional<std::map<int, double>> dram_carbon_emission;
  std::vector<HourShare> hours;
  std::vector<std::optional<double>> hour_intensity;  // gCO2eq/kWh, parallel to hours
  std::string error;
};

// Thread-safe, as HourlyRateMonitor.
class CarbonEmissionMonitor {
 public:
  CarbonEmissionMonitor(const device::DeviceInventory& devices,
                        std::shared_ptr<HourlyRateProvider> carbon_intensity_provider,
                        HourlyRateMonitorOptions options = {});
  void begin_window(const std::string& key, bool sync_execution = true);
  CarbonEmissionMeasurement end_window(const std::string& key, bool sync_execution = true);
  HourlyRateMonitor& monitor() { return monitor_; }

 private:
  HourlyRateMonitor monitor_;
};

}  // namespace zeus::carbon
