// AMD GPUs through AMD SMI (libamd_smi.so from ROCm 6.3 and newer), loaded at
// run time with dlopen, never linked, so one binary runs with and without ROCm.
//
// Which library: AMD SMI ships one soname per ABI major: libamd_smi.so.24
// (ROCm 6.3), .25 (ROCm 6.4) and .26 (ROCm 7.x). The search follows upstream
// zeusd: with $AMDSMI_LIB_DIR set only that directory, else with $ROCM_PATH
// set only $ROCM_PATH/lib, else /opt/rocm/lib, the newest /opt/rocm-X.Y.Z/lib
// and finally the dynamic loader's paths; in each place the newest ABI first.
// The ABI actually loaded is read back from amdsmi_get_lib_version.
//
// Indices are HIP indices (what PyTorch on ROCm calls cuda:k), after
// ROCR_VISIBLE_DEVICES and then HIP_VISIBLE_DEVICES (or, when that is unset,
// CUDA_VISIBLE_DEVICES) are applied, as the HIP runtime does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/error.h"

namespace zeus::amdsmi_internal {

struct AmdSmiOptions {
  // A library file to load, skipping the search. Empty: $ZEUS_AMDSMI_LIBRARY,
  // else the search described above.
  std::string library_path;
  // Search overrides; nullopt: the environment variable of the same name.
  std::optional<std::string> amdsmi_lib_dir;  // $AMDSMI_LIB_DIR
  std::optional<std::string> rocm_path;       // $ROCM_PATH
  // Where /opt/rocm and /opt/rocm-X.Y.Z are looked for (tests point it elsewhere).
  std::string opt_dir = "/opt";
  // Visibility variables; nullopt: read the environment.
  std::optional<std::string> rocr_visible_devices;
  std::optional<std::string> hip_visible_devices;  // falls back to CUDA_VISIBLE_DEVICES
  // Serialize every AMD SMI call through one mutex. nullopt: only for AMD SMI
  // older than ROCm 7.2 (library below 26.3), whose calls are not thread-safe.
  std::optional<bool> serialize_calls;
};

struct AmdSmiGpuSet {
  // Entry k is HIP device k of this process; hip_indices[k] its index among
  // all the node's AMD GPUs.
  std::vector<std::unique_ptr<device::Gpu>> gpus;
  std::vector<unsigned> hip_indices;
  std::string library_path;     // the file that was loaded
  std::string library_version;  // "24.7.1.0", "26.2.0", ...
  int abi = 0;                  // 24, 25 or 26
  bool serialized = false;      // calls go through one mutex
  // Plain-language notes (MI250 dies, an empty visibility variable...). Also logged.
  std::vector<std::string> notes;
};

// Loads AMD SMI, initializes it for AMD GPUs and opens the visible GPUs.
// Throws zeus::Error: kDriverNotLoaded ("no AMD SMI found: ...", listing every
// place tried) when no supported library loads or the amdgpu driver is not
// running; kInvalidArgument for a visibility variable that names no GPU.
// AMD SMI stays initialized while any returned Gpu is alive.
AmdSmiGpuSet open_amdsmi_gpus(const AmdSmiOptions& options = {});

// The library files tried, in order (see the search above). Exposed for tests
// and for `zeus show-env`.
std::vector<std::string> amdsmi_library_candidates(const std::optional<std::string>& amdsmi_lib_dir,
                                                   const std::optional<std::string>& rocm_path,
                                                   const std::string& opt_dir = "/opt");

// An error reported by an AMD SMI call: status() is the raw amdsmi_status_t,
// function() the AMD SMI symbol that returned it.
class AmdSmiError : public Error {
 public:
  AmdSmiError(ErrorCode code, const std::string& message, std::uint32_t status,
              std::string function)
      : Error(code, message), status_(status), function_(std::move(function)) {}
  std::uint32_t status() const { return status_; }
  const std::string& function() const { return function_; }

 private:
  std::uint32_t status_;
  std::string function_;
};

// The zeus::ErrorCode an amdsmi_status_t maps to (kUnknown for new codes).
ErrorCode amdsmi_error_code(std::uint32_t status);

}  // namespace zeus::amdsmi_internal
