// The power-limit optimizer's profile file, kept apart from the optimizer:
// {"measurements": [{"power_limit": W, "energy": J, "time": s}, ...]}
// (the Python Zeus format).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"

namespace zeus::power_limit_internal {

// Parses a profile's text and checks it against the GPUs' candidate limits.
// Throws a FieldError naming `source` and the field: kParse for malformed
// JSON or a wrong shape, kInvalidArgument for values that are not finite and
// positive, off the candidate grid or measured twice. Messages say to delete
// the file to profile again.
std::vector<power_limit::PowerLimitMeasurement> parse_power_limit_profile(
    std::string_view text, const std::string& source, const std::vector<Milliwatts>& candidates);

// The profile's JSON text (limits in whole watts when they are).
std::string power_limit_profile_json(
    const std::vector<power_limit::PowerLimitMeasurement>& measurements);

}  // namespace zeus::power_limit_internal
