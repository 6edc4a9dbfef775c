// ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES: which AMD GPUs a process sees
// and in which order, kept apart from AMD SMI so it can be tested on its own.
// Pure functions; thread-safe.
//
// As the ROCm runtime does: ROCR_VISIBLE_DEVICES selects and orders GPUs among
// all of the node's (by HIP index or by UUID "GPU-..."); HIP_VISIBLE_DEVICES
// (or CUDA_VISIBLE_DEVICES when it is unset) then selects among those by their
// position. An empty value hides every GPU. Malformed, duplicate or
// out-of-range entries are kInvalidArgument.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::amdsmi_internal {

struct HipDevice {
  unsigned hip_index = 0;
  std::string uuid;  // "GPU-..." as HIP names it; empty when unknown
};

struct VisibilitySettings {
  std::optional<std::string> rocr;  // ROCR_VISIBLE_DEVICES
  std::optional<std::string> hip;   // HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES
  std::string hip_variable = "HIP_VISIBLE_DEVICES";  // which one `hip` came from, for messages
};

// Returns the visible devices' positions in `devices` (which is in HIP index
// order), in this process's order.
std::vector<std::size_t> apply_visibility(const std::vector<HipDevice>& devices,
                                          const VisibilitySettings& settings);

}  // namespace zeus::amdsmi_internal
