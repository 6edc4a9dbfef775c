// amdsmi_status_t -> zeus::ErrorCode, and what the user can do about each.
#include "device/amd/amdsmi_error.h"

#include <fmt/format.h>

#include "device/amd/amdsmi_api.h"
#include "device/amdsmi.h"

namespace zeus::amdsmi_internal {

namespace abi = amdsmi_abi;

ErrorCode amdsmi_error_code(std::uint32_t status) {
  switch (status) {
    case abi::kInval:
    case abi::kInputOutOfBounds:
    case abi::kArgPtrNull:
      return ErrorCode::kInvalidArgument;
    case abi::kNotSupported:
    case abi::kNotYetImplemented:
    case abi::kSettingUnavailable:
      return ErrorCode::kNotSupported;
    case abi::kNoPerm:
      return ErrorCode::kNoPermission;
    case abi::kNotFound:
    case abi::kNoData:
    case abi::kFileNotFound:
      return ErrorCode::kNotFound;
    case abi::kDriverNotLoaded:
    case abi::kFailLoadModule:
    case abi::kFailLoadSymbol:
    case abi::kNoDrv:
      return ErrorCode::kDriverNotLoaded;
    case abi::kTimeout:
      return ErrorCode::kTimeout;
    case abi::kIo:
    case abi::kFileError:
    case abi::kDrmError:
    case abi::kInterrupt:
    case abi::kAddressFault:
      return ErrorCode::kIo;
    case abi::kBusy:
    case abi::kRetry:
    case abi::kNotInit:
    case abi::kInitError:
    case abi::kOutOfResources:
    case abi::kNoSlot:
      return ErrorCode::kFailedPrecondition;
    case abi::kInsufficientSize:
    case abi::kUnexpectedSize:
      return ErrorCode::kInternal;  // we size every buffer ourselves
    default:
      return ErrorCode::kUnknown;
  }
}

std::string_view amdsmi_hint(std::uint32_t status) {
  switch (status) {
    case abi::kNoPerm:
      return "changing GPU settings needs root (or CAP_SYS_ADMIN); run as root or go through "
             "zeusd";
    case abi::kNotSupported:
    case abi::kNotYetImplemented:
      return "this GPU, its driver or this AMD SMI version does not support it";
    case abi::kDriverNotLoaded:
    case abi::kNoDrv:
      return "load the amdgpu kernel driver (check that `amd-smi list` works), or set "
             "ZEUS_GPU_BACKEND=sim to use simulated GPUs";
    case abi::kInval:
    case abi::kInputOutOfBounds:
      return "check the value against what the GPU supports";
    case abi::kTimeout:
    case abi::kBusy:
    case abi::kRetry:
      return "the driver is busy; retry, and check dmesg";
    case abi::kUnexpectedData:
      return "the driver returned data this AMD SMI does not understand; make sure the amdgpu "
             "driver and ROCm come from the same release";
    case abi::kNotInit:
      return "AMD SMI was not initialized (a bug in zeus; please report it)";
    case abi::kFileError:
    case abi::kIo:
      return "reading the GPU's sysfs files failed; check the permissions of /sys/class/drm and "
             "/dev/kfd";
    default:
      return "";
  }
}

void throw_amdsmi_error(std::uint32_t status, std::string_view function,
                        std::string_view status_string, std::string_view context) {
  const ErrorCode code = amdsmi_error_code(status);
  const std::string_view hint = amdsmi_hint(status);
  std::string message;
  if (code == ErrorCode::kDriverNotLoaded) {
    message = fmt::format("no AMD GPU driver found: {}: {} returned '{}' (AMD SMI status {})",
                          context, function, status_string, status);
  } else {
    message = fmt::format("{}: AMD SMI {} failed: {} (AMD SMI status {})", context, function,
                          status_string, status);
  }
  if (!hint.empty()) message += fmt::format("; {}", hint);
  throw AmdSmiError(code, message, status, std::string(function));
}

}  // namespace zeus::amdsmi_internal
