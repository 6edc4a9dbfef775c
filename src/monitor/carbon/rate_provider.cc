#include "zeus/monitor/carbon/rate_provider.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "zeus/util/csv.h"
#include "zeus/util/error.h"
#include "zeus/util/parse.h"

namespace zeus {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

UtcHour utc_hour_of(double unix_seconds) {
  return static_cast<UtcHour>(std::floor(unix_seconds / kSecondsPerHour)) * kSecondsPerHour;
}

std::string format_utc(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::int64_t parse_utc_time(const std::string& text, const std::string& what) {
  const auto bad = [&] {
    throw_error(ErrorCode::kParse, fmt::format("{}: '{}' is not a UTC time; use ISO 8601 such as "
                                               "2024-05-01T13:00:00Z, or Unix seconds",
                                               what, text));
  };
  if (all_digits(text)) {
    if (text.size() > 12) bad();
    return std::stoll(text);
  }
  // YYYY-MM-DD[T ]HH:MM[:SS[.fff]][Z|+00:00]
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &consumed) != 5) {
    bad();
  }
  std::string_view rest(text);
  rest.remove_prefix(static_cast<std::size_t>(consumed));
  if (!rest.empty() && rest.front() == ':') {
    if (rest.size() < 3 || !std::isdigit(static_cast<unsigned char>(rest[1])) ||
        !std::isdigit(static_cast<unsigned char>(rest[2]))) {
      bad();
    }
    second = (rest[1] - '0') * 10 + (rest[2] - '0');
    rest.remove_prefix(3);
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) {
        rest.remove_prefix(1);
      }
    }
  }
  if (!(rest.empty() || rest == "Z" || rest == "+00:00" || rest == "+0000")) bad();
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    bad();
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<std::int64_t>(timegm(&tm));
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
                  fmt::format("{}: hour {} appears twice", where, format_utc(hour)));
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
                            path_, format_utc(hour), format_utc(rates_.begin()->first),
                            format_utc(rates_.rbegin()->first)));
  }
  return it->second;
}

}  // namespace zeus
