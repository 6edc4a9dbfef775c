// JSON of power-limit reports (`zeus power-limit --json`), kept apart from
// power_limit_report.h. Watts, joules and seconds as numbers; a fraction that
// cannot be computed (zero reference energy) is left out, never NaN.
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/optimizer/power_limit/power_limit_report.h"

namespace zeus::power_limit {

// {"power_limit_w", "energy_j", "time_s"}
nlohmann::ordered_json to_json(const PowerLimitMeasurement& m);
// {"spec", "name", "chosen_power_limit_w", "energy_saving_fraction"?, "time_change_fraction"?}
nlohmann::ordered_json to_json(const SelectorChoice& c);

}  // namespace zeus::power_limit
