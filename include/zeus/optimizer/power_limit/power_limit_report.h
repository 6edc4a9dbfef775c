// What a power-limit profile says: each selector's choice and what it saves
// against the maximum limit, and the loop that runs a workload until the
// optimizer has profiled it. Shared by `zeus power-limit`, the example and
// the optimizer itself, so the arithmetic exists once.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/power_limit/power_limit_optimizer.h"

namespace zeus::power_limit {

// One selector's choice from a set of measurements.
struct SelectorChoice {
  std::string spec;  // as given, e.g. "zeus-cost:0.5:2"
  std::string name;  // the selector's name()
  Milliwatts power_limit{0};
  // Against the maximum limit; nullopt when either limit was not measured.
  std::optional<PowerLimitSaving> saving;
};

// "zeus-cost:ETA" without a world size gets `gpus`, the number of GPUs whose
// energy the measurements sum, so its MaxPower term is right for several
// GPUs. Other specs come back unchanged.
std::string selector_spec_for_gpus(std::string_view spec, int gpus);

// The measurement at `limit`, or nullptr.
const PowerLimitMeasurement* find_measurement(std::span<const PowerLimitMeasurement> measurements,
                                              Milliwatts limit);

// `chosen` against `maximum`, from their measurements; nullopt unless both
// were measured.
std::optional<PowerLimitSaving> compare_limits(std::span<const PowerLimitMeasurement> measurements,
                                               Milliwatts chosen, Milliwatts maximum);

// The standard selectors (time, energy, zeus-cost:0.5, max-slowdown:1.1; the
// zeus-cost one sized for `gpus`) and then every spec of `extra_specs` not
// among them, each applied to the same measurements. kInvalidArgument for a
// bad spec or no measurements.
std::vector<SelectorChoice> compare_selectors(std::span<const PowerLimitMeasurement> measurements,
                                              Milliwatts maximum, int gpus,
                                              const std::vector<std::string>& extra_specs);

// Runs a training loop around `step` (one step of the workload) with the
// optimizer's callbacks until it has a choice: at most max_epochs epochs of
// steps_per_epoch steps. Returns the number of steps run. kFailedPrecondition,
// saying to raise the epochs, when profiling did not finish.
int run_until_profiled(GlobalPowerLimitOptimizer& optimizer, int max_epochs, int steps_per_epoch,
                       const std::function<void()>& step);

}  // namespace zeus::power_limit
