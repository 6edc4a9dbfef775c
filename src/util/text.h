// Text from files, devices and users is untrusted: before it reaches a
// terminal or a log it is escaped and shortened here, and before it goes into
// a URL it is percent-encoded here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zeus {

// Control characters and bytes that are not valid UTF-8 become escapes (\n,
// \t, \x1b...); text longer than `max_length` bytes is cut with "...".
// Printable ASCII and valid UTF-8 pass unchanged.
std::string printable(std::string_view text, std::size_t max_length = 80);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or
// code points beyond U+10FFFF): what JSON strings may carry.
bool is_valid_utf8(std::string_view text);

// Percent-encodes every byte but RFC 3986 unreserved characters (letters,
// digits, "-_.~") and those in `also_keep`.
std::string percent_encode(std::string_view text, std::string_view also_keep = {});

// ASCII case-insensitive equality (HTTP field names, tokens): no locale, so
// "Content-Length" and "content-length" are one name everywhere.
bool iequals(std::string_view a, std::string_view b);

}  // namespace zeus
