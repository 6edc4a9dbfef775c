#include "device/nvml/nvml_error.h"

#include <fmt/format.h>

#include "device/nvml/nvml_api.h"
#include "zeus/device/nvml.h"

namespace zeus::device {

namespace abi = nvml_abi;

ErrorCode nvml_error_code(int nvml_return) {
  switch (nvml_return) {
    case abi::kErrorInvalidArgument:
    case abi::kErrorFreqNotSupported:
      return ErrorCode::kInvalidArgument;
    case abi::kErrorNotSupported:
    case abi::kErrorFunctionNotFound:
    case abi::kErrorVgpuEccNotSupported:
    case abi::kErrorArgumentVersionMismatch:
    case abi::kErrorDeprecated:
    case abi::kErrorResetTypeNotSupported:
      return ErrorCode::kNotSupported;
    case abi::kErrorNoPermission:
    case abi::kErrorOperatingSystem:
      return ErrorCode::kNoPermission;
    case abi::kErrorNotFound:
    case abi::kErrorGpuNotFound:
    case abi::kErrorNoData:
      return ErrorCode::kNotFound;
    case abi::kErrorDriverNotLoaded:
    case abi::kErrorLibraryNotFound:
    case abi::kErrorLibRmVersionMismatch:
      return ErrorCode::kDriverNotLoaded;
    case abi::kErrorGpuIsLost:
    case abi::kErrorResetRequired:
      return ErrorCode::kGpuLost;
    case abi::kErrorTimeout:
      return ErrorCode::kTimeout;
    case abi::kErrorIrqIssue:
      return ErrorCode::kIo;
    case abi::kErrorUninitialized:
    case abi::kErrorAlreadyInitialized:
    case abi::kErrorInsufficientPower:
    case abi::kErrorCorruptedInforom:
    case abi::kErrorInUse:
    case abi::kErrorMemory:
    case abi::kErrorInsufficientResources:
    case abi::kErrorNotReady:
    case abi::kErrorInvalidState:
      return ErrorCode::kFailedPrecondition;
    case abi::kErrorInsufficientSize:
      return ErrorCode::kInternal;  // we size every buffer ourselves
    default:
      return ErrorCode::kUnknown;
  }
}

}  // namespace zeus::device

namespace zeus::nvml_internal {

namespace abi = nvml_abi;

std::string_view nvml_hint(int nvml_return) {
  switch (nvml_return) {
    case abi::kErrorNoPermission:
      return "changing GPU settings needs CAP_SYS_ADMIN (run as root, add the capability, or go "
             "through zeusd: run `zeusd serve` as root and set ZEUSD_SOCK_PATH, see "
             "docs/zeusd.md)";
    case abi::kErrorNotSupported:
      return "this GPU or its driver does not support it";
    case abi::kErrorGpuIsLost:
      return "the GPU fell off the bus; reset or reboot";
    case abi::kErrorResetRequired:
      return "the GPU needs a reset (nvidia-smi -r) or a reboot";
    case abi::kErrorDriverNotLoaded:
    case abi::kErrorLibraryNotFound:
      return "install the NVIDIA driver and check that nvidia-smi works, or set "
             "ZEUS_GPU_BACKEND=sim to use simulated GPUs";
    case abi::kErrorLibRmVersionMismatch:
      return "the NVML library and the loaded kernel driver have different versions (driver "
             "updated without a reboot?); reboot or reload the nvidia kernel module";
    case abi::kErrorInvalidArgument:
      return "check the value against what the GPU supports";
    case abi::kErrorFreqNotSupported:
      return "pick a clock from the GPU's supported clocks";
    case abi::kErrorTimeout:
      return "the driver did not answer in time; retry, and check dmesg";
    case abi::kErrorInsufficientPower:
      return "a power cable of the GPU is not connected properly";
    case abi::kErrorIrqIssue:
      return "the kernel has an interrupt problem with the GPU; check dmesg";
    case abi::kErrorCorruptedInforom:
      return "the GPU's infoROM is corrupted; contact the hardware vendor";
    case abi::kErrorOperatingSystem:
      return "the operating system or a container's device cgroup blocked access to the GPU";
    case abi::kErrorUninitialized:
      return "NVML was not initialized (a bug in zeus; please report it)";
    case abi::kErrorFunctionNotFound:
    case abi::kErrorArgumentVersionMismatch:
    case abi::kErrorDeprecated:
      return "the driver is too old or too new for this call; update the NVIDIA driver or zeus";
    case abi::kErrorInUse:
      return "another process holds the GPU in a conflicting mode; retry later";
    case abi::kErrorNotReady:
      return "the GPU is not ready yet; retry";
    case abi::kErrorMemory:
    case abi::kErrorInsufficientResources:
      return "the driver ran out of resources; retry later";
    case abi::kErrorNoData:
      return "the driver has no data for this yet; retry later";
    default:
      return "";
  }
}

void throw_nvml_error(int nvml_return, std::string_view function, std::string_view error_string,
                      std::string_view context, std::string_view hint_override) {
  const ErrorCode code = device::nvml_error_code(nvml_return);
  const std::string_view hint = hint_override.empty() ? nvml_hint(nvml_return) : hint_override;
  std::string message;
  if (code == ErrorCode::kDriverNotLoaded) {
    // Discovery recognises a missing driver by this prefix-like wording too.
    message = fmt::format("no NVIDIA driver found: {}: {} returned '{}' (NVML error {})", context,
                          function, error_string, nvml_return);
  } else {
    message = fmt::format("{}: NVML {} failed: {} (NVML error {})", context, function, error_string,
                          nvml_return);
  }
  if (!hint.empty()) message += fmt::format("; {}", hint);
  throw device::NvmlError(code, message, nvml_return, std::string(function));
}

}  // namespace zeus::nvml_internal
