// zeusd's API groups: what a daemon serves and what a token may use. Names
// and defaults as the upstream daemon (gpu-control, gpu-read, cpu-read).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace zeus::zeusd {

enum class ApiGroup { kGpuControl, kGpuRead, kCpuRead };

inline constexpr ApiGroup kAllApiGroups[] = {ApiGroup::kGpuControl, ApiGroup::kGpuRead,
                                             ApiGroup::kCpuRead};

std::string_view api_group_name(ApiGroup group);  // "gpu-control", ...
std::optional<ApiGroup> parse_api_group(std::string_view name);
// "gpu-control,cpu-read" -> groups in the given order. kInvalidArgument for an
// unknown name (the message lists the valid ones), an empty list or a repeat.
std::vector<ApiGroup> parse_api_groups(std::string_view list, std::string_view what);

// Whether serving the group needs root (upstream: gpu-control unless command
// overrides do the work, and cpu-read for RAPL).
bool api_group_needs_root(ApiGroup group, bool have_command_overrides);

// The scope a request path needs (upstream's rule by path prefix): set_* and
// reset_* under /gpu/ need gpu-control, the rest of /gpu/ gpu-read, /cpu/
// cpu-read; our /lease/ extension needs gpu-control, our /attribution
// (the node's ledger) cpu-read. nullopt: no scope
// (/discover, /time, /auth/whoami and unknown paths).
std::optional<ApiGroup> required_scope(std::string_view path);

}  // namespace zeus::zeusd
