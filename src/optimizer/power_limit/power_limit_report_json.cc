#include "optimizer/power_limit/power_limit_report_json.h"

namespace zeus::power_limit {

nlohmann::ordered_json to_json(const PowerLimitMeasurement& m) {
  return {{"power_limit_w", to_watts(m.power_limit).value()},
          {"energy_j", m.energy.value()},
          {"time_s", m.time.count()}};
}

nlohmann::ordered_json to_json(const SelectorChoice& c) {
  nlohmann::ordered_json j = {{"spec", c.spec},
                              {"name", c.name},
                              {"chosen_power_limit_w", to_watts(c.power_limit).value()}};
  if (c.saving) {
    if (const auto e = c.saving->energy_saving_fraction()) j["energy_saving_fraction"] = *e;
    if (const auto t = c.saving->time_change_fraction()) j["time_change_fraction"] = *t;
  }
  return j;
}

}  // namespace zeus::power_limit
