// Hourly rates that turn energy into carbon emissions or money: a carbon
// intensity (gCO2eq per kWh) or an electricity price (dollars per kWh) for
// each UTC hour. Providers answer per hour because the monitors split every
// window at UTC hour boundaries (as the Python Zeus does).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace zeus::carbon {

// Seconds since the Unix epoch of the start of a UTC hour (a multiple of 3600).
using UtcHour = std::int64_t;
inline constexpr std::int64_t kSecondsPerHour = 3600;
// The UTC hour that contains `unix_seconds`.
UtcHour utc_hour_of(double unix_seconds);
// Parses ISO 8601 UTC times as the providers send them ("2024-05-01T13:00:00Z",
// "2024-05-01T13:00:00.000Z", "2024-05-01T13:00:00+00:00", "2024-05-01 13:00")
// or plain Unix seconds (src/util/iso8601.h); another offset, or no time, is
// kParse naming `what`.
std::int64_t parse_utc_time(const std::string& text, const std::string& what);

// Thread-safety: implementations are thread-safe (the monitors call them from
// their refresh thread and from end_window on the caller's thread).
class HourlyRateProvider {
 public:
  virtual ~HourlyRateProvider() = default;
  // The rate for the UTC hour starting at `hour`. Throws zeus::Error when the
  // provider cannot say (network, HTTP status, missing data), with a message
  // that says what to do.
  virtual double rate(UtcHour hour) = 0;
  // Called about once an hour by a running monitor so that long windows keep
  // the rates of their early hours (history APIs only look back so far).
  // Errors are the caller's to log; the default does nothing.
  virtual void refresh(double unix_now) { (void)unix_now; }
  // "ElectricityMaps (lat 37.5, lon -122.2)", "constant 250 gCO2eq/kWh", ...
  virtual std::string description() const = 0;
  virtual std::string unit() const = 0;  // "gCO2eq/kWh" or "$/kWh"
};

// The same rate for every hour (users without network or keys).
class ConstantRate final : public HourlyRateProvider {
 public:
  // kInvalidArgument for a negative or non-finite value, or one above kMaxRate.
  ConstantRate(double value, std::string unit);
  double rate(UtcHour) override { return value_; }
  std::string description() const override;
  std::string unit() const override { return unit_; }

 private:
  double value_;
  std::string unit_;
};

// Hourly rates from a CSV file with a header and two columns, `time` (ISO 8601
// UTC or Unix seconds; floored to its hour) and `value` (in [0, kMaxRate]). A
// missing file, or an hour the file lacks, is kNotFound naming the hour and
// the file; a file with a duplicate hour or a bad cell is kParse naming the
// line.
class CsvHourlyRates final : public HourlyRateProvider {
 public:
  CsvHourlyRates(const std::string& path, std::string unit);
  double rate(UtcHour hour) override;
  std::string description() const override { return "hourly values from " + path_; }
  std::string unit() const override { return unit_; }
  std::size_t hours() const { return rates_.size(); }

 private:
  std::string path_;
  std::string unit_;
  std::map<UtcHour, double> rates_;  // immutable after construction
};

// The largest rate accepted, in either unit. No grid's carbon intensity (coal:
// about 1,000 g/kWh) or price comes near it: a larger value is a unit mistake
// (kg for g, cents for dollars ...), and below it energy × rate stays finite.
inline constexpr double kMaxRate = 1e6;

inline constexpr const char* kCarbonIntensityUnit = "gCO2eq/kWh";
inline constexpr const char* kPriceUnit = "$/kWh";

}  // namespace zeus::carbon
