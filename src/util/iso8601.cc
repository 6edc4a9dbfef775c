#include "util/iso8601.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <string>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus {

std::int64_t parse_iso8601(std::string_view text, std::string_view what, std::string* offset) {
  const auto bad = [&]() -> std::int64_t {
    throw_error(ErrorCode::kParse,
                fmt::format("{}: '{}' is not a time; use ISO 8601 such as 2022-01-01T00:00:00Z "
                            "or 2022-01-01 00:00:00+01:00, or Unix seconds",
                            what, printable(text)));
  };
  const std::string s(text);
  if (offset) offset->clear();
  if (!s.empty() && s.size() <= 12 &&
      std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    if (offset)
      offset->push_back('Z');  // cleared above; assign() trips a GCC 12 -Wrestrict false positive
    return std::stoll(s);
  }
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &consumed) != 5) {
    return bad();
  }
  std::string_view rest(s);
  rest.remove_prefix(static_cast<std::size_t>(consumed));
  int second = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (!rest.empty() && rest.front() == ':') {
    if (rest.size() < 3 || !digit(rest[1]) || !digit(rest[2])) return bad();
    second = (rest[1] - '0') * 10 + (rest[2] - '0');
    rest.remove_prefix(3);
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      while (!rest.empty() && digit(rest.front())) rest.remove_prefix(1);
    }
  }
  int offset_s = 0;
  if (!rest.empty() && rest != "Z") {
    // ±HH:MM or ±HHMM: the minutes start after the optional colon.
    const std::size_t minutes_at = rest.size() == 6 && rest[3] == ':' ? 4 : 3;
    if (rest.size() != minutes_at + 2 || (rest[0] != '+' && rest[0] != '-') || !digit(rest[1]) ||
        !digit(rest[2]) || !digit(rest[minutes_at]) || !digit(rest[minutes_at + 1])) {
      return bad();
    }
    const int hh = (rest[1] - '0') * 10 + (rest[2] - '0');
    const int mm = (rest[minutes_at] - '0') * 10 + (rest[minutes_at + 1] - '0');
    if (hh > 14 || mm > 59) return bad();
    offset_s = (rest[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
  }
  if (offset) *offset = std::string(rest);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::int64_t t = static_cast<std::int64_t>(timegm(&tm));
  if (tm.tm_mday != day) return bad();  // 31 February and the like
  return t - offset_s;
}

std::string format_iso8601(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

bool is_utc_offset(std::string_view offset) {
  return offset.empty() || offset == "Z" || offset == "+00:00" || offset == "+0000" ||
         offset == "-00:00";
}

}  // namespace zeus
