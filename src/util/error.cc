#include "zeus/util/error.h"

namespace zeus {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotSupported:
      return "not_supported";
    case ErrorCode::kNoPermission:
      return "no_permission";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kFailedPrecondition:
      return "failed_precondition";
    case ErrorCode::kDriverNotLoaded:
      return "driver_not_loaded";
    case ErrorCode::kGpuLost:
      return "gpu_lost";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kParse:
      return "parse";
    case ErrorCode::kHeterogeneous:
      return "heterogeneous";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace zeus
