// Query strings of zeusd requests, read the way the upstream daemon reads them
// (serde with deny_unknown_fields): every field must be known and given once,
// booleans are exactly "true" or "false", numbers are unsigned 32-bit
// integers, and device id lists are comma-separated indices. Every error is a
// zeus::Error(kInvalidArgument) whose message the daemon returns as
// {"error": ...} with status 400.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zeus::zeusd {

class QueryFields {
 public:
  // Refuses a field not in `known` or given twice. `query` must outlive this.
  QueryFields(const std::vector<std::pair<std::string, std::string>>& query,
              const std::vector<std::string_view>& known);

  std::optional<std::string_view> get(std::string_view name) const;
  std::string_view required(std::string_view name) const;
  bool boolean(std::string_view name) const;  // required
  std::optional<bool> optional_boolean(std::string_view name) const;
  std::uint32_t u32(std::string_view name) const;  // required
  // A positive, finite number of seconds in (0, max].
  std::optional<double> optional_seconds(std::string_view name, double max) const;

 private:
  const std::vector<std::pair<std::string, std::string>>& query_;
};

// "0,2, 1" -> {0, 1, 2} (sorted, duplicates dropped, as upstream). `device`
// is "GPU" or "CPU" for messages. Refuses an empty list, an empty entry and
// anything but a non-negative integer below 2^31.
std::vector<int> parse_device_ids(std::string_view raw, std::string_view device);

}  // namespace zeus::zeusd
