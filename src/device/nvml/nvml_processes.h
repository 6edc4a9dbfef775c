// The parts of "who runs on the GPU" (nvml_processes.cc) that depend only on
// which entry points a library exports, apart so tests can hold them to
// libraries the fakes cannot play (a driver with only _v2, an early R535 one).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "device/nvml/nvml_library.h"
#include "zeus/device/gpu_processes.h"

namespace zeus::nvml_internal {

// Which nvmlDeviceGetComputeRunningProcesses to call, and how big each entry
// it writes is. _v3 where exported, else _v2; fn is nullptr when neither is.
//
// _v3's entry size is not fixed: header 12.2 (early R535 drivers) declared
// nvmlProcessInfo_t with usedGpuCcProtectedMemory (32 bytes), later headers
// went back to the 24-byte layout of _v2. Drivers that export
// nvmlDeviceGetConfComputeMemSizeInfo (new in 12.2) but not yet
// nvmlDeviceGetRunningProcessDetailList (which took that field over) write 32.
struct ComputeProcessesEntry {
  nvml_abi::DeviceGetComputeRunningProcessesFn fn = nullptr;
  const char* symbol = "nvmlDeviceGetComputeRunningProcesses_v3";
  std::size_t entry_size = sizeof(nvml_abi::nvmlProcessInfo_v2_t);
};
ComputeProcessesEntry compute_processes_entry(const NvmlLibrary::Api& api);

// The first `count` entries of `entry_size` bytes in `bytes` (entries that do
// not fit are dropped). usedGpuMemory NOT_AVAILABLE becomes 0.
std::vector<device::GpuProcess> decode_process_infos(std::span<const std::byte> bytes,
                                                     unsigned count, std::size_t entry_size);

}  // namespace zeus::nvml_internal
