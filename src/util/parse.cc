#include "util/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void invalid(std::string_view what, std::string_view text, std::string_view why) {
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("{}: '{}' {}", what, printable(text, 60), why));
}

std::string bounds_text(long long min, long long max) {
  const bool has_min = min != std::numeric_limits<long long>::min();
  const bool has_max = max != std::numeric_limits<long long>::max();
  if (has_min && has_max) return fmt::format("must be between {} and {}", min, max);
  if (has_min) return fmt::format("must be at least {}", min);
  return fmt::format("must be at most {}", max);
}

std::string bounds_text(double min, double max) {
  const bool has_min = min != std::numeric_limits<double>::lowest();
  const bool has_max = max != std::numeric_limits<double>::max();
  if (has_min && has_max) return fmt::format("must be between {:g} and {:g}", min, max);
  if (has_min) return fmt::format("must be at least {:g}", min);
  return fmt::format("must be at most {:g}", max);
}

}  // namespace

std::vector<std::string> split_list(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const auto item =
        trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    if (item.empty()) invalid(what, text, "has an empty entry; expected a comma-separated list");
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      invalid(what, item, "is given twice; name each entry once");
    }
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

long long parse_int(std::string_view text, std::string_view what, long long min, long long max) {
  const auto t = trim(text);
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ptr != t.data() + t.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    invalid(what, text, "is not an integer");
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    invalid(what, text, "is out of range: " + bounds_text(min, max));
  }
  return v;
}

double parse_double(std::string_view text, std::string_view what, double min, double max) {
  const std::string t(trim(text));
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) invalid(what, text, "is not a number");
  if (errno == ERANGE && std::isinf(v)) invalid(what, text, "is too large to be a number");
  if (!std::isfinite(v)) invalid(what, text, "is not a finite number");
  if (v < min || v > max) invalid(what, text, "is out of range: " + bounds_text(min, max));
  return v;
}

std::vector<int> parse_int_list(std::string_view text, std::string_view what, int min, int max,
                                std::size_t max_count) {
  std::vector<int> out;
  std::set<int> seen;
  const auto add = [&](long long v, std::string_view item) {
    if (!seen.insert(static_cast<int>(v)).second) {
      invalid(what, item, fmt::format("names {} twice; give each value once", v));
    }
    out.push_back(static_cast<int>(v));
  };
  for (const auto& item : split_list(text, what)) {
    const auto dash = item.find('-', 1);
    if (dash == std::string::npos) {
      add(parse_int(item, what, min, max), item);
      continue;
    }
    const long long lo = parse_int(item.substr(0, dash), what, min, max);
    const long long hi = parse_int(item.substr(dash + 1), what, min, max);
    if (hi < lo) invalid(what, item, "is a range that ends before it starts");
    // Bounded before expanding: a huge range is refused, not allocated.
    if (static_cast<unsigned long long>(hi - lo) >= max_count ||
        out.size() + static_cast<std::size_t>(hi - lo + 1) > max_count) {
      invalid(what, item, fmt::format("expands to more than {} values", max_count));
    }
    for (long long v = lo; v <= hi; ++v) add(v, item);
  }
  if (out.size() > max_count)
    invalid(what, text, fmt::format("has more than {} values", max_count));
  return out;
}

std::vector<double> parse_double_list(std::string_view text, std::string_view what, double min,
                                      double max) {
  std::vector<double> out;
  for (const auto& item : split_list(text, what)) {
    const double v = parse_double(item, what, min, max);
    if (std::find(out.begin(), out.end(), v) != out.end()) {
      invalid(what, item, "is given twice; give each value once");
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace zeus
