// Sweeping a job's start over a signal: every policy from every start, and
// each policy's spread against the baseline (the maximum limit) at the same
// starts. Deterministic whatever the number of threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zeus/sim/carbon_aware/replay.h"

namespace zeus::sim::carbon_aware {

struct Distribution {
  double mean = 0, sd = 0, p5 = 0, p50 = 0, p95 = 0;
  std::size_t n = 0;
};
Distribution distribution(std::vector<double> values);

struct PolicySummary {
  std::string policy;
  double mean_time_s = 0, mean_energy_j = 0, mean_charge = 0;
  // Change of the mean against the baseline's mean, in percent (charge: over
  // |baseline mean|, so it stays meaningful for a price that can be negative).
  double time_change_pct = 0, energy_change_pct = 0, charge_change_pct = 0;
  // Per-start changes in percent (charge: only starts whose baseline charge
  // is positive; count in .n).
  Distribution time_change, charge_change;
  std::optional<double> mean_forecast_mape;
};

struct SweepResult {
  std::vector<std::int64_t> starts;
  std::vector<Policy> policies;  // the baseline first
  // results[policy][start]
  std::vector<std::vector<ReplayResult>> results;
  std::size_t skipped_outlasting = 0;  // starts whose job ran past the series
  std::vector<PolicySummary> summary;  // same order as policies
};

// Starts every `step_s` seconds in [from, to) (period starts; from is moved up
// to the first start with history). `max` is added first when absent. A start
// from which any policy's job outlasts the series is skipped and counted.
// threads <= 0: hardware concurrency.
SweepResult sweep_starts(const Replayer& replayer, std::vector<Policy> policies, std::int64_t from,
                         std::int64_t to, std::int64_t step_s, int threads = 0);

}  // namespace zeus::sim::carbon_aware
