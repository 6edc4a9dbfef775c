// Parsing of user-facing values (flags, environment variables). Errors are
// ErrorCode::kInvalidArgument messages that name the value and what is
// accepted. Bounds are checked before anything is expanded or narrowed, and
// the user's text is echoed escaped and shortened (see printable()).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace zeus {

// An integer in [min, max]. `what` names the input in messages (e.g. "--gpus").
long long parse_int(std::string_view text, std::string_view what,
                    long long min = std::numeric_limits<long long>::min(),
                    long long max = std::numeric_limits<long long>::max());
// A finite number in [min, max].
double parse_double(std::string_view text, std::string_view what,
                    double min = std::numeric_limits<double>::lowest(),
                    double max = std::numeric_limits<double>::max());

// "0,2,3" -> {0,2,3}; also accepts ranges "0-3" and mixes "0,2-4". Every value
// must lie in [min, max], which is checked before a range is expanded; a list
// may not name a value twice nor hold more than max_count values.
std::vector<int> parse_int_list(std::string_view text, std::string_view what,
                                int min = std::numeric_limits<int>::min(),
                                int max = std::numeric_limits<int>::max(),
                                std::size_t max_count = 4096);
// "0.1,0.5" -> {0.1, 0.5}: finite values in [min, max], none given twice.
std::vector<double> parse_double_list(std::string_view text, std::string_view what,
                                      double min = std::numeric_limits<double>::lowest(),
                                      double max = std::numeric_limits<double>::max());
// Comma-separated words, trimmed; empty entries and repeated words rejected.
std::vector<std::string> split_list(std::string_view text, std::string_view what);

}  // namespace zeus
