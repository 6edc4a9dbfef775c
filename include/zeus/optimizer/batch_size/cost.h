// The Zeus cost model of the batch-size optimizer (NSDI '23, Eq. 2 and 7) and
// its early-stopping rule. Pure functions, thread-safe.
#pragma once

#include <span>

#include "zeus/util/units.h"

namespace zeus::batch_size {

// Cost of one epoch at a power limit: (eta*AvgPower + (1-eta)*MaxPower) * T,
// i.e. zeus_cost(AvgPower*T, T, eta, MaxPower).
double epoch_cost(double eta, Watts average_power, Seconds time_per_epoch, Watts max_power);

// What one epoch costs at one power limit, as profiled just in time.
struct PowerLimitEpoch {
  Milliwatts power_limit;
  Seconds time_per_epoch;
  Watts average_power;
};

// The just-in-time power-limit choice for one batch size: the limit with the
// least epoch cost, MaxPower being the largest profiled limit; ties go to the
// higher limit. Delegates to ZeusCostSelector so the live optimizer and the
// simulator share one implementation. eta in [0,1] and a non-empty span, else
// ErrorCode::kInvalidArgument.
Milliwatts choose_power_limit(double eta, std::span<const PowerLimitEpoch> epochs);

// The early-stopping bound beta * min_cost; +inf when early stopping is off
// (beta = +inf) or no job has converged yet (min_cost = +inf).
double cost_upper_bound(double beta, double min_cost);

// Whether a running job must stop: its cumulative cost already exceeds the bound.
inline bool exceeds_cost_bound(double cost_so_far, double cost_upper_bound) {
  return cost_so_far > cost_upper_bound;
}

// How many whole epochs at a steady `cost_per_epoch` fit under the bound,
// capped at max_epochs: min(floor(bound / cost_per_epoch), max_epochs), with
// Python's float floor division so trace replays match the reference. A job
// stops right before the epoch that would cross the bound.
double epochs_within_bound(double cost_upper_bound, double cost_per_epoch, int max_epochs);

// Python's float floor division a // b (exposed for tests).
double python_floor_div(double a, double b);

}  // namespace zeus::batch_size
