// Turns amdsmi_status_t codes into zeus errors whose messages say which AMD
// SMI call failed, AMD SMI's own words for it, and what the user can do.
#pragma once

#include <cstdint>
#include <string_view>

namespace zeus::amdsmi_internal {

// What to do about a status ("" when there is nothing useful to say).
std::string_view amdsmi_hint(std::uint32_t status);

// Throws zeus::amdsmi_internal::AmdSmiError. `context` says what we were doing.
[[noreturn]] void throw_amdsmi_error(std::uint32_t status, std::string_view function,
                                     std::string_view status_string, std::string_view context);

}  // namespace zeus::amdsmi_internal
