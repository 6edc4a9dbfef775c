// The Zeus cost model of the batch-size optimizer (NSDI '23, Eq. 2 and 7) and
// its early-stopping rule. Costs are joules: eta * energy + (1 - eta) *
// MaxPower * time. Pure functions, thread-safe.
#pragma once

#include <span>

#include "zeus/util/units.h"

namespace zeus::batch_size {

// Cost of one epoch at a power limit: (eta*AvgPower + (1-eta)*MaxPower) * T.
Joules epoch_cost(double eta, Watts average_power, Seconds time_per_epoch, Watts max_power);

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
// (beta = +inf) or there is no minimum yet (min_cost = +inf).
Joules cost_upper_bound(double beta, Joules min_cost);

// Whether a running job must stop: its cumulative cost already exceeds the bound.
inline bool exceeds_cost_bound(Joules cost_so_far, Joules cost_upper_bound) {
  return cost_so_far > cost_upper_bound;
}

// How many whole epochs at a steady `cost_per_epoch` fit under the bound,
// capped at max_epochs: min(floor(bound / cost_per_epoch), max_epochs), with
// Python's float floor division so trace replays match the reference. A job
// stops right before the epoch that would cross the bound.
double epochs_within_bound(Joules cost_upper_bound, Joules cost_per_epoch, int max_epochs);

// Python's float floor division a // b (exposed for tests).
double python_floor_div(double a, double b);

// The service's rule for one epoch report of a running trial (zeus-inventory
// §4.3): given the trial's cumulative cost so far, whether it reached the
// target metric, and its epoch, continue or stop, and how it ended.
struct StopRule {
  double beta = 2.0;  // +inf disables early stopping
  int max_epochs = 100;
  double target_metric = 0.5;
  bool higher_is_better = true;
};
enum class TrialEnd {
  kContinue,       // keep training
  kConverged,      // reached the target within the cost bound
  kOverCostBound,  // the cost exceeds beta * min_cost
  kMaxEpochs,      // max_epochs reached without the target
};
struct EpochVerdict {
  TrialEnd end = TrialEnd::kContinue;
  Joules cost_upper_bound{0};
  bool converged() const { return end == TrialEnd::kConverged; }
  bool stop() const { return end != TrialEnd::kContinue; }
};
// `min_cost` is the search's minimum so far (+inf if none). A trial that
// reaches the target but costs more than the bound has not converged.
EpochVerdict judge_epoch(const StopRule& rule, Joules min_cost, Joules cost, double metric,
                         int epoch);

}  // namespace zeus::batch_size
