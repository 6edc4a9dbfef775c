// CUDA_VISIBLE_DEVICES parsing and mapping to NVML device indices, kept apart
// from NVML so it can be tested on its own. Pure functions; thread-safe.
//
// Accepted, as CUDA does: a comma list of GPU indices ("0,2") and GPU UUIDs
// ("GPU-8932f937-..." in full or any unique prefix). Integer entries are taken
// as NVML indices, which match CUDA's numbering when CUDA_DEVICE_ORDER=PCI_BUS_ID
// (UUIDs are unambiguous either way). An empty value hides every GPU (CUDA's
// behaviour). Rejected with kInvalidArgument: MIG instances ("MIG-..."; NVML
// cannot measure a MIG slice on its own), malformed or duplicate entries, and
// entries that name no GPU.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::nvml_internal {

struct VisibleDevice {
  enum class Kind { kIndex, kUuid };
  Kind kind = Kind::kIndex;
  unsigned index = 0;  // kIndex
  std::string uuid;    // kUuid: the full entry, "GPU-" prefix included
};

// Parses a CUDA_VISIBLE_DEVICES value. Whitespace around entries is ignored.
std::vector<VisibleDevice> parse_cuda_visible_devices(std::string_view value);

// Maps parsed entries to NVML indices, in order. `find_uuid(entry)` returns the
// NVML indices whose UUID starts with `entry` (case-insensitively).
std::vector<unsigned> resolve_visible_devices(
    const std::vector<VisibleDevice>& entries, unsigned device_count,
    const std::function<std::vector<unsigned>(std::string_view uuid_prefix)>& find_uuid);

// Whether `uuid` starts with `prefix`, ignoring ASCII case.
bool uuid_has_prefix(std::string_view uuid, std::string_view prefix);

}  // namespace zeus::nvml_internal
