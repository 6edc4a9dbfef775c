// CUDA_VISIBLE_DEVICES the way CUDA applies it, kept apart from NVML so the
// simulated backend honours it too and it can be tested on its own. Pure
// functions; thread-safe.
//
// Entries: GPU indices ("0,2") and GPU UUIDs ("GPU-8932f937-..." in full or
// any unique prefix), whitespace around them ignored. Integer entries are
// taken as NVML indices, which match CUDA's numbering when
// CUDA_DEVICE_ORDER=PCI_BUS_ID (UUIDs are unambiguous either way). As in
// CUDA, the entries count in order up to the first invalid one (malformed,
// negative such as -1, an index with no GPU, a UUID matching no GPU or
// several, a GPU named twice): that entry and every later one are hidden, so
// an invalid first entry (or an empty value) hides every GPU. The only error
// is a MIG instance ("MIG-..."): NVML cannot measure a slice on its own.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::nvml_internal {

struct VisibleDevices {
  std::vector<unsigned> indices;  // device indices, in the order CUDA numbers them
  // Why entries were hidden (the first invalid entry and what it hid), for a
  // note to the user; empty when every entry counted.
  std::string hidden;
};

// `find_uuid(prefix)` returns the device indices whose UUID starts with
// `prefix` (case-insensitively). kInvalidArgument for a MIG entry.
VisibleDevices apply_cuda_visible_devices(
    std::string_view value, unsigned device_count,
    const std::function<std::vector<unsigned>(std::string_view uuid_prefix)>& find_uuid);

// Whether `uuid` starts with `prefix`, ignoring ASCII case.
bool uuid_has_prefix(std::string_view uuid, std::string_view prefix);

}  // namespace zeus::nvml_internal
