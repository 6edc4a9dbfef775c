#include "zeusd/query.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::zeusd {
namespace {

[[noreturn]] void bad(const std::string& message) {
  throw_error(ErrorCode::kInvalidArgument, message);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > max) return std::nullopt;
  return v;
}

}  // namespace

QueryFields::QueryFields(const std::vector<std::pair<std::string, std::string>>& query,
                         const std::vector<std::string_view>& known)
    : query_(query) {
  for (std::size_t i = 0; i < query.size(); ++i) {
    const std::string& name = query[i].first;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string expected;
      for (auto k : known) expected += (expected.empty() ? "`" : ", `") + std::string(k) + "`";
      bad(fmt::format("Query deserialize error: unknown field `{}`, expected {}", printable(name),
                      expected.empty() ? "no fields" : expected));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (query[j].first == name)
        bad(fmt::format("Query deserialize error: duplicate field `{}`", name));
    }
  }
}

std::optional<std::string_view> QueryFields::get(std::string_view name) const {
  for (const auto& [k, v] : query_) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::string_view QueryFields::required(std::string_view name) const {
  const auto v = get(name);
  if (!v) bad(fmt::format("Query deserialize error: missing field `{}`", name));
  return *v;
}

bool QueryFields::boolean(std::string_view name) const {
  const auto v = optional_boolean(name);
  if (!v) bad(fmt::format("Query deserialize error: missing field `{}`", name));
  return *v;
}

std::optional<bool> QueryFields::optional_boolean(std::string_view name) const {
  const auto v = get(name);
  if (!v) return std::nullopt;
  if (*v == "true") return true;
  if (*v == "false") return false;
  bad(fmt::format("Query deserialize error: `{}` must be true or false, not '{}'", name,
                  printable(*v, 40)));
}

std::uint32_t QueryFields::u32(std::string_view name) const {
  const auto text = required(name);
  const auto v = parse_unsigned(text, 0xffffffffu);
  if (!v) {
    bad(
        fmt::format("Query deserialize error: `{}` must be a whole number from 0 to 4294967295, "
                    "not '{}'",
                    name, printable(text, 40)));
  }
  return static_cast<std::uint32_t>(*v);
}

std::optional<double> QueryFields::optional_seconds(std::string_view name, double max) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(v) || v <= 0 ||
      v > max) {
    bad(fmt::format("`{}` must be a number of seconds in (0, {:g}], not '{}'", name, max,
                    printable(*text, 40)));
  }
  return v;
}

std::vector<int> parse_device_ids(std::string_view raw, std::string_view device) {
  std::string param;
  for (char c : device)
    param.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  param += "_ids";
  if (trim(raw).empty()) bad(fmt::format("{} must contain at least one {} index", param, device));
  std::vector<int> ids;
  std::size_t start = 0;
  for (;;) {
    const auto comma = raw.find(',', start);
    const auto part = trim(raw.substr(start, comma == raw.npos ? raw.npos : comma - start));
    if (part.empty()) bad(fmt::format("{} contains an empty {} index", param, device));
    const auto v = parse_unsigned(part, 0x7fffffff);
    if (!v) bad(fmt::format("Invalid {} index: {}", device, printable(part, 40)));
    ids.push_back(static_cast<int>(*v));
    if (ids.size() > 4096) bad(fmt::format("{} lists too many indices", param));
    if (comma == raw.npos) break;
    start = comma + 1;
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace zeus::zeusd
