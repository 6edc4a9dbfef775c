// Parsing of user-facing values (flags, environment variables). Errors are
// ErrorCode::kInvalidArgument messages that name the value and what is accepted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zeus {

// "0,2,3" -> {0,2,3}; also accepts ranges "0-3" and mixes "0,2-4".
// `what` names the input in messages (e.g. "--gpus").
std::vector<int> parse_int_list(std::string_view text, std::string_view what);
// "0.1,0.5" -> {0.1, 0.5}.
std::vector<double> parse_double_list(std::string_view text, std::string_view what);
double parse_double(std::string_view text, std::string_view what);
long long parse_int(std::string_view text, std::string_view what);
// Comma-separated words, trimmed, empty entries rejected.
std::vector<std::string> split_list(std::string_view text, std::string_view what);

}  // namespace zeus
