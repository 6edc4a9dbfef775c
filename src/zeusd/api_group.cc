#include "zeus/zeusd/api_group.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/parse.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::zeusd {

std::string_view api_group_name(ApiGroup group) {
  switch (group) {
    case ApiGroup::kGpuControl:
      return "gpu-control";
    case ApiGroup::kGpuRead:
      return "gpu-read";
    case ApiGroup::kCpuRead:
      return "cpu-read";
  }
  return "?";
}

std::optional<ApiGroup> parse_api_group(std::string_view name) {
  for (ApiGroup g : kAllApiGroups) {
    if (api_group_name(g) == name) return g;
  }
  return std::nullopt;
}

std::vector<ApiGroup> parse_api_groups(std::string_view list, std::string_view what) {
  std::vector<ApiGroup> out;
  for (const std::string& word : split_list(list, what)) {
    const auto g = parse_api_group(word);
    if (!g) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: unknown API group '{}'; use gpu-control, gpu-read or cpu-read",
                              what, printable(word)));
    }
    out.push_back(*g);
  }
  if (out.empty()) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("{}: name at least one API group", what));
  }
  return out;
}

bool api_group_needs_root(ApiGroup group, bool have_command_overrides) {
  switch (group) {
    case ApiGroup::kGpuControl:
      return !have_command_overrides;
    case ApiGroup::kGpuRead:
      return false;
    case ApiGroup::kCpuRead:
      return true;
  }
  return true;
}

std::optional<ApiGroup> required_scope(std::string_view path) {
  if (path.starts_with("/gpu/set_") || path.starts_with("/gpu/reset_")) {
    return ApiGroup::kGpuControl;
  }
  if (path.starts_with("/gpu/")) return ApiGroup::kGpuRead;
  if (path.starts_with("/cpu/")) return ApiGroup::kCpuRead;
  if (path.starts_with("/lease/")) return ApiGroup::kGpuControl;
  // Ours: the attribution ledger reads the whole node (processes, cgroups,
  // RAPL), served wherever cpu-read is, GPU or not.
  if (path == "/attribution" || path.starts_with("/attribution/")) return ApiGroup::kCpuRead;
  return std::nullopt;
}

}  // namespace zeus::zeusd
