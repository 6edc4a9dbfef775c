// ISO 8601 times as grid-signal files and carbon/price providers write them:
// the one parser and formatter of the project (CSV signals, ElectricityMaps
// and OpenEI answers, reports).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zeus {

// Parses an ISO 8601 time "YYYY-MM-DD[T ]HH:MM[:SS[.f]][Z|±HH:MM|±HHMM]" (or
// Unix seconds) to Unix seconds; `offset` receives the offset as written ("" for
// a naive time, read as UTC). kParse naming `what` otherwise.
std::int64_t parse_iso8601(std::string_view text, std::string_view what,
                           std::string* offset = nullptr);
// "2022-01-01T00:00:00Z" (always UTC, whole seconds).
std::string format_iso8601(std::int64_t unix_seconds);

// True for the offsets that spell UTC: "" (a naive time, read as UTC), "Z",
// "+00:00", "+0000", "-00:00".
bool is_utc_offset(std::string_view offset);

}  // namespace zeus
