#include "zeus/util/parse.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "zeus/util/error.h"

namespace zeus {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> split_list(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const auto item =
        trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    if (item.empty()) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: empty entry in '{}'; expected a comma-separated list", what, text));
    }
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

long long parse_int(std::string_view text, std::string_view what) {
  const auto t = trim(text);
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' is not an integer", what, text));
  }
  return v;
}

double parse_double(std::string_view text, std::string_view what) {
  const std::string t(trim(text));
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v)) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' is not a number", what, text));
  }
  return v;
}

std::vector<int> parse_int_list(std::string_view text, std::string_view what) {
  std::vector<int> out;
  for (const auto& item : split_list(text, what)) {
    const auto dash = item.find('-', 1);
    if (dash == std::string::npos) {
      out.push_back(static_cast<int>(parse_int(item, what)));
      continue;
    }
    const long long lo = parse_int(item.substr(0, dash), what);
    const long long hi = parse_int(item.substr(dash + 1), what);
    if (hi < lo) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: range '{}' ends before it starts", what, item));
    }
    for (long long v = lo; v <= hi; ++v) out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<double> parse_double_list(std::string_view text, std::string_view what) {
  std::vector<double> out;
  for (const auto& item : split_list(text, what)) out.push_back(parse_double(item, what));
  return out;
}

}  // namespace zeus
