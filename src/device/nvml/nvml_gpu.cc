// TEMPORARY placeholder until the NVML backend lands (helper task).
#include "zeus/device/nvml.h"
#include "zeus/util/error.h"

namespace zeus {
NvmlGpuSet open_nvml_gpus(const NvmlOptions&) {
  throw_error(ErrorCode::kDriverNotLoaded, "no NVIDIA driver found: NVML backend not built yet");
}
}  // namespace zeus
