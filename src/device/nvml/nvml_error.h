// Turns nvmlReturn_t codes into zeus errors whose messages say which NVML call
// failed, NVML's own words for it, and what the user can do.
#pragma once

#include <string_view>

namespace zeus::nvml_internal {

// What to do about an NVML return code ("" when there is nothing useful to say).
std::string_view nvml_hint(int nvml_return);

// Throws zeus::device::NvmlError. `context` says what we were doing ("GPU 0: reading
// instant power"); `error_string` is nvmlErrorString's text; `hint` replaces
// the default advice for the code when not empty.
[[noreturn]] void throw_nvml_error(int nvml_return, std::string_view function,
                                   std::string_view error_string, std::string_view context,
                                   std::string_view hint = {});

// Advice for NO_PERMISSION on calls that only read (init, opening a handle),
// where CAP_SYS_ADMIN is not the problem.
inline constexpr std::string_view kDeviceAccessHint =
    "this user may not open the GPU device files (/dev/nvidia*); check their permissions or the "
    "container's device access";

}  // namespace zeus::nvml_internal
