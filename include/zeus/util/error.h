// The library's one exception type. Every error carries a code (what kind of
// failure) and a message that tells the user what went wrong and what to do.
// Adapters translate codes at the edge: CLI exit status, HTTP status, Python.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "zeus/util/units.h"

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
  kIo,                 // file system or OS call failed
  kParse,              // malformed file content
  kHeterogeneous,      // devices that must match do not
  kResourceExhausted,  // a client's quota or the server's capacity is used up; retry later
  kInternal,           // a bug in this library
  kUnknown,            // an unmapped vendor error
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

// kResourceExhausted with a hint for the client: when to try again, and
// whether the caller's own share is used up (HTTP 429) or the whole server's
// (503). Services answer it with a Retry-After header.
class RetryLater : public Error {
 public:
  RetryLater(const std::string& message, Seconds retry_after, bool whole_server)
      : Error(ErrorCode::kResourceExhausted, message),
        retry_after_(retry_after),
        whole_server_(whole_server) {}
  Seconds retry_after() const { return retry_after_; }
  bool whole_server() const { return whole_server_; }
  int http_status() const { return whole_server_ ? 503 : 429; }

 private:
  Seconds retry_after_;
  bool whole_server_;
};

// The text of an errno value (thread-safe, unlike std::strerror).
std::string errno_text(int errnum);

[[noreturn]] inline void throw_error(ErrorCode code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace zeus
