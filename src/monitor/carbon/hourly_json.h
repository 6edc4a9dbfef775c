// JSON and CSV shapes of priced measurements, shared by every front end
// (`zeus monitor energy`, Python).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zeus/monitor/carbon/hourly_rate_monitor.h"

namespace zeus::carbon {

// {"provider", "rate_unit", "unit", "gpu": {"0": x}, "cpu", "dram", "total",
//  "error"}; device maps and total are null when the provider failed.
nlohmann::json to_json(const RateResult& r);
// [{"hour": "2024-05-01T12:00:00Z", "time_s", "energy_j", "rates": [x|null, ...]}]
nlohmann::json hours_to_json(const HourlyMeasurement& m);

// Column-name stem of a provider's results: "carbon_gco2eq" for gCO2eq,
// "cost_usd" for $, else the unit made safe for a header.
std::string result_column(const std::string& unit);

// Appends one row per window to a CSV log: start_time (Unix seconds),
// window_name, elapsed_time, gpu<i>_energy, cpu<i>_energy, dram<i>_energy,
// then per provider <dev><i>_<stem> and total_<stem> (empty when the provider
// failed). A new or empty file gets the header; an existing file must have
// the same header (kInvalidArgument otherwise, so rows never mix columns);
// kIo when it cannot be written. Not thread-safe; one writer per file.
class PricedLog {
 public:
  explicit PricedLog(std::string path) : path_(std::move(path)) {}
  void append(double start_unix, const std::string& window, const HourlyMeasurement& m);

 private:
  std::string path_;
};

}  // namespace zeus::carbon
