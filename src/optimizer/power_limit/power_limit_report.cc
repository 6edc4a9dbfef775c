#include "zeus/optimizer/power_limit/power_limit_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "zeus/util/error.h"

namespace zeus::power_limit {

std::string selector_spec_for_gpus(std::string_view spec, int gpus) {
  constexpr std::string_view kPrefix = "zeus-cost:";
  if (!spec.starts_with(kPrefix) || gpus <= 1) return std::string(spec);
  if (spec.find(':', kPrefix.size()) != std::string_view::npos) return std::string(spec);
  return fmt::format("{}:{}", spec, gpus);
}

const PowerLimitMeasurement* find_measurement(std::span<const PowerLimitMeasurement> measurements,
                                              Milliwatts limit) {
  const auto it = std::find_if(measurements.begin(), measurements.end(),
                               [&](const auto& m) { return m.power_limit == limit; });
  return it == measurements.end() ? nullptr : &*it;
}

std::optional<PowerLimitSaving> compare_limits(std::span<const PowerLimitMeasurement> measurements,
                                               Milliwatts chosen, Milliwatts maximum) {
  const PowerLimitMeasurement* at_chosen = find_measurement(measurements, chosen);
  const PowerLimitMeasurement* at_max = find_measurement(measurements, maximum);
  if (at_chosen == nullptr || at_max == nullptr) return std::nullopt;
  return PowerLimitSaving{chosen,         maximum,         at_chosen->energy,
                          at_max->energy, at_chosen->time, at_max->time};
}

std::vector<SelectorChoice> compare_selectors(std::span<const PowerLimitMeasurement> measurements,
                                              Milliwatts maximum, int gpus,
                                              const std::vector<std::string>& extra_specs) {
  std::vector<std::string> specs = {"time", "energy", selector_spec_for_gpus("zeus-cost:0.5", gpus),
                                    "max-slowdown:1.1"};
  for (const auto& spec : extra_specs) {
    const std::string sized = selector_spec_for_gpus(spec, gpus);
    if (std::find(specs.begin(), specs.end(), sized) == specs.end()) specs.push_back(sized);
  }
  std::vector<SelectorChoice> out;
  for (const auto& spec : specs) {
    const auto selector = make_power_limit_selector(spec);
    const Milliwatts chosen = selector->select(measurements);
    out.push_back({spec, selector->name(), chosen, compare_limits(measurements, chosen, maximum)});
  }
  return out;
}

int run_until_profiled(GlobalPowerLimitOptimizer& optimizer, int max_epochs, int steps_per_epoch,
                       const std::function<void()>& step) {
  int steps = 0;
  optimizer.on_train_begin();
  for (int epoch = 0; epoch < max_epochs && !optimizer.done(); ++epoch) {
    optimizer.on_epoch_begin();
    for (int s = 0; s < steps_per_epoch && !optimizer.done(); ++s) {
      optimizer.on_step_begin();
      step();
      optimizer.on_step_end();
      ++steps;
    }
    optimizer.on_epoch_end();
  }
  optimizer.on_train_end();
  if (!optimizer.done()) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("profiling did not finish in {} epochs of {} steps ({} candidate "
                            "limits, each needing its warm-up and profile steps); raise the "
                            "number of epochs",
                            max_epochs, steps_per_epoch, optimizer.candidate_limits().size()));
  }
  return steps;
}

}  // namespace zeus::power_limit
