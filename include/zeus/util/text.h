// Text from files, devices and users is untrusted: before it reaches a
// terminal or a log it is escaped and shortened here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zeus {

// Control characters and bytes that are not valid UTF-8 become escapes (\n,
// \t, \x1b...); text longer than `max_length` bytes is cut with "...".
// Printable ASCII and valid UTF-8 pass unchanged.
std::string printable(std::string_view text, std::size_t max_length = 80);

}  // namespace zeus
