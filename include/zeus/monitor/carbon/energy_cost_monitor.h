// Electricity cost of measurement windows: the EnergyCostMonitor of the
// Python Zeus, over HourlyRateMonitor with one price provider (OpenEiClient,
// ConstantRate or CsvHourlyRates in $/kWh).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "zeus/monitor/carbon/hourly_rate_monitor.h"

namespace zeus::carbon {

struct EnergyCostMeasurement {
  Seconds time{};
  std::map<int, Joules> gpu_energy;
  std::map<int, Joules> cpu_energy;
  std::map<int, Joules> dram_energy;
  // Dollars per device; nullopt when the provider failed (see error).
  std::optional<std::map<int, double>> gpu_energy_cost;
  std::optional<std::map<int, double>> cpu_energy_cost;
  std::optional<std::map<int, double>> dram_energy_cost;
  std::vector<HourShare> hours;
  std::vector<std::optional<double>> hour_price;  // $/kWh, parallel to hours
  std::string error;
};

// Thread-safe, as HourlyRateMonitor.
class EnergyCostMonitor {
 public:
  EnergyCostMonitor(const device::DeviceInventory& devices,
                    std::shared_ptr<HourlyRateProvider> electricity_price_provider,
                    HourlyRateMonitorOptions options = {});
  void begin_window(const std::string& key, bool sync_execution = true);
  EnergyCostMeasurement end_window(const std::string& key, bool sync_execution = true);
  HourlyRateMonitor& monitor() { return monitor_; }

 private:
  HourlyRateMonitor monitor_;
};

}  // namespace zeus::carbon
