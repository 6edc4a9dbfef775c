#include "zeus/util/error.h"

#include <string.h>

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
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string errno_text(int errnum) {
  char buf[256];
  // GNU strerror_r returns the message, which may or may not live in buf.
  return ::strerror_r(errnum, buf, sizeof buf);
}

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kNotFound:
    case ErrorCode::kAlreadyExists:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

int http_status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kNotSupported:
    case ErrorCode::kHeterogeneous:
      return 400;
    case ErrorCode::kNoPermission:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kFailedPrecondition:
      return 409;
    case ErrorCode::kDriverNotLoaded:
    case ErrorCode::kGpuLost:
      return 503;
    case ErrorCode::kTimeout:
      return 504;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kIo:
    case ErrorCode::kInternal:
    case ErrorCode::kUnknown:
      return 500;
  }
  return 500;
}

}  // namespace zeus
