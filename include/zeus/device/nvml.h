// NVIDIA GPUs through NVML, loaded at run time with dlopen (never linked), so
// one binary runs on machines with and without the driver.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/error.h"

namespace zeus::device {

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
  // Plain-language notes for the user (e.g. an empty CUDA_VISIBLE_DEVICES
  // hides every GPU). Also logged at warn level.
  std::vector<std::string> notes;
};

// Loads NVML, initializes it, and opens the visible GPUs. Throws zeus::Error:
// kDriverNotLoaded ("no NVIDIA driver found: ...") when the library cannot be
// loaded or the driver is not running; kInvalidArgument for a
// CUDA_VISIBLE_DEVICES that names a missing GPU or a MIG instance. NVML stays
// initialized (and the library loaded) while any returned Gpu is alive;
// concurrent sets opened from the same library share one NVML session.
NvmlGpuSet open_nvml_gpus(const NvmlOptions& options = {});

// An error reported by an NVML call. code() is the mapped zeus::ErrorCode;
// nvml_return() the raw nvmlReturn_t and function() the NVML symbol that
// returned it, for logs and for callers that need finer distinctions.
class NvmlError : public Error {
 public:
  NvmlError(ErrorCode code, const std::string& message, int nvml_return, std::string function)
      : Error(code, message), nvml_return_(nvml_return), function_(std::move(function)) {}
  int nvml_return() const { return nvml_return_; }
  const std::string& function() const { return function_; }

 private:
  int nvml_return_;
  std::string function_;
};

// The zeus::ErrorCode an nvmlReturn_t maps to (kUnknown for codes NVML may add
// later). Exposed for tests and for backends that talk to NVML indirectly.
ErrorCode nvml_error_code(int nvml_return);

}  // namespace zeus::device
