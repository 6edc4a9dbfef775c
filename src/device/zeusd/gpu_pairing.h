// Which of zeusd's GPUs is which GPU of this process (private to src/device).
// zeusd numbers the GPUs as it sees them, which need not be this process's
// order: CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES reorder and hide GPUs,
// and the daemon may run with another device order. So, as upstream, local
// and daemon GPUs are paired by PCI address; by index only where an address
// is missing on one side, and then a note says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/zeusd_backend.h"

namespace zeus::device_internal {

// One spelling for both vendors: NVML prints "00000000:3B:00.0", AMD SMI
// "0000:3b:00.0"; both become "0000:3b:00.0". Text that is not a PCI
// address comes back lower-cased and trimmed, so it still compares equal to
// itself.
std::string normalized_pci_address(std::string_view address);

struct LocalGpuAddress {
  std::string pci_address;  // as the local backend says it; "" when it cannot
  unsigned physical_index = 0;
};

struct GpuPairing {
  // Per local GPU: the daemon's id for it, or nullopt when the daemon does
  // not serve it.
  std::vector<std::optional<int>> daemon_ids;
  // How the pairing fell back to indices, or which GPUs the daemon does not
  // serve ("" when every GPU paired by its address).
  std::vector<std::string> notes;
};

GpuPairing pair_with_daemon_gpus(const std::vector<LocalGpuAddress>& local,
                                 const std::vector<device::ZeusdStatus::GpuInfo>& daemon);

}  // namespace zeus::device_internal
