// The library's one exception type. Every error carries a code (what kind of
// failure) and a message that tells the user what went wrong and what to do.
// Adapters translate codes at the edge: CLI exit status, HTTP status, Python.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace zeus {

enum class ErrorCode {
  kInvalidArgument,     // bad input from the caller (flag, file content, parameter)
  kNotSupported,        // the device or backend cannot do this; an explicit outcome
  kNoPermission,        // the OS or driver refused: needs privileges (or zeusd)
  kNotFound,            // no such device, window, file, workload...
  kAlreadyExists,       // duplicate name or registration
  kFailedPrecondition,  // the object is in the wrong state for this call
  kDriverNotLoaded,     // the vendor driver/library is missing
  kGpuLost,             // the device fell off the bus or needs a reset
  kTimeout,
  kIo,             // file system or OS call failed
  kParse,          // malformed file content
  kHeterogeneous,  // devices that must match do not
  kInternal,       // a bug in this library
  kUnknown,        // an unmapped vendor error
};

std::string_view error_code_name(ErrorCode code);

// Process exit status of a program that stops on this error: kExitUsage for
// input the user can correct (flags, files, names), kExitFailure otherwise.
// Every front end (CLI, examples, daemons) uses this one mapping.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
int exit_code_for(ErrorCode code);

// HTTP status of a request that fails with this error (400 bad input, 403 no
// permission, 404 not found, 409 conflict, 503 device unavailable, 500
// otherwise). Every HTTP adapter uses this one mapping; a service that must
// answer differently for wire compatibility says so next to its handler.
int http_status_for(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// The text of an errno value (thread-safe, unlike std::strerror).
std::string errno_text(int errnum);

[[noreturn]] inline void throw_error(ErrorCode code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace zeus
