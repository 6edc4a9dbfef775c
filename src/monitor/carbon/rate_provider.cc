#include "zeus/monitor/carbon/rate_provider.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "util/csv.h"
#include "util/iso8601.h"
#include "util/parse.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::carbon {

UtcHour utc_hour_of(double unix_seconds) {
  return static_cast<UtcHour>(std::floor(unix_seconds / kSecondsPerHour)) * kSecondsPerHour;
}

std::int64_t parse_utc_time(const std::string& text, const std::string& what) {
  std::string offset;
  const std::int64_t t = parse_iso8601(text, what, &offset);
  if (!is_utc_offset(offset)) {
    throw_error(ErrorCode::kParse,
                fmt::format("{}: '{}' is not a UTC time (offset '{}'); the providers send UTC "
                            "such as 2024-05-01T13:00:00Z",
                            what, printable(text), printable(offset)));
  }
  return t;
}

ConstantRate::ConstantRate(double value, std::string unit) : value_(value), unit_(std::move(unit)) {
  if (!std::isfinite(value) || value < 0 || value > kMaxRate) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("a constant rate must be a number in [0, {:g}] ({}), got {:g}",
                            kMaxRate, unit_, value));
  }
}

std::string ConstantRate::description() const {
  return fmt::format("constant {} {}", value_, unit_);
}

CsvHourlyRates::CsvHourlyRates(const std::string& path, std::string unit)
    : path_(path), unit_(std::move(unit)) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_error(
        ErrorCode::kNotFound,
        fmt::format("{}: no such file (hourly rates: a CSV with columns time,value)", path));
  }
  const CsvTable table = CsvTable::read_file(path);
  table.require_columns({"time", "value"});
  const std::size_t time_col = table.column("time");
  const std::size_t value_col = table.column("value");
  for (std::size_t r = 0; r < table.num_rows(); ++r) {
    const std::string where = fmt::format("{}:{}", path, table.line_of(r));
    const UtcHour hour = utc_hour_of(
        static_cast<double>(parse_utc_time(table.cell(r, time_col), where + " column 'time'")));
    const double value = table.as_finite_double(r, value_col, 0.0, kMaxRate);
    if (!rates_.emplace(hour, value).second) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: hour {} appears twice", where, format_iso8601(hour)));
    }
  }
  if (rates_.empty()) {
    throw_error(ErrorCode::kParse,
                fmt::format("{} has no rows: give one value per UTC hour", path));
  }
}

double CsvHourlyRates::rate(UtcHour hour) {
  const auto it = rates_.find(hour);
  if (it == rates_.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("{} has no value for the hour starting {} (it covers {} to {}); add "
                            "a row for it",
                            path_, format_iso8601(hour), format_iso8601(rates_.begin()->first),
                            format_iso8601(rates_.rbegin()->first)));
  }
  return it->second;
}

}  // namespace zeus::carbon
