// NVIDIA GPUs through NVML, loaded at run time with dlopen (never linked), so
// one binary runs on machines with and without the driver.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"

namespace zeus {

struct NvmlOptions {
  // Library to dlopen. Empty: $ZEUS_NVML_LIBRARY, else "libnvidia-ml.so.1".
  std::string library_path;
  // CUDA_VISIBLE_DEVICES value to honour. nullopt: read the environment.
  std::optional<std::string> cuda_visible_devices;
};

struct NvmlGpuSet {
  // In this process's index order: entry k is CUDA device k (after
  // CUDA_VISIBLE_DEVICES), nvml_indices[k] its NVML index.
  std::vector<std::unique_ptr<Gpu>> gpus;
  std::vector<unsigned> nvml_indices;
  std::string driver_version;  // empty when NVML does not say
  std::string nvml_version;
};

// Loads NVML, initializes it, and opens the visible GPUs. Throws zeus::Error:
// kDriverNotLoaded ("no NVIDIA driver found: ...") when the library cannot be
// loaded or the driver is not running; kInvalidArgument for a
// CUDA_VISIBLE_DEVICES that names a missing GPU or a MIG instance.
NvmlGpuSet open_nvml_gpus(const NvmlOptions& options = {});

}  // namespace zeus
