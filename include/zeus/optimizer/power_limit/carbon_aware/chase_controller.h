// The live Chase optimizer: after the power-limit optimizer's usual
// just-in-time profiling, re-pick the limit at every period boundary (UTC
// multiples of the period) from the stored profile, trading the forecast grid
// signal (carbon intensity or price) against time. See docs/chase.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/optimizer/callback/callback.h"
#include "zeus/optimizer/power_limit/carbon_aware/chase.h"
#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_source.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/reducer.h"

namespace zeus::carbon_aware {

struct ChaseControllerOptions {
  double eta = 0.25;                       // carbon (or cost) vs time, [0, 1]
  std::int64_t period_s = 3600;            // decision period (> 0; boundaries at UTC multiples)
  std::int64_t history_s = 86'400;         // forecaster fit and normaliser window
  std::optional<double> signal_max;        // the normaliser; default: max over the history
  std::string forecaster = "persistence";  // persistence, linear or svr
  // Refit the forecaster on the trailing history every this many decision
  // periods (0: fit once, at the first decision). The normaliser stays the
  // one of the first fit (the history before the job), so the knob does not drift.
  int refit_periods = 0;
  // GPUs of the job (MaxPower = max limit x this); 0: the optimizer's GPUs,
  // summed over the ranks when a reducer is given.
  int world_size = 0;
  // Agreement across the ranks of a distributed job (the same Reducer the
  // optimizer uses). Every rank calls the controller the same number of times;
  // at each check the ranks agree on the latest period any of them has reached
  // (one all-reduce), rank 0 alone reads the source and decides, and every rank
  // applies rank 0's decision. nullptr or world size 1: one process, no
  // collective calls. Must outlive the controller.
  power_limit::Reducer* reducer = nullptr;
  // Look at the clock every this many steps after profiling (>= 1). Across
  // ranks each look is one all-reduce; a boundary is seen up to
  // check_steps - 1 steps late.
  int check_steps = 1;
  // Unix seconds now; default: the system clock. Tests inject a scripted clock.
  std::function<double()> unix_now;
};

// A training Callback that wraps the GlobalPowerLimitOptimizer: give it to the
// loop instead of the optimizer (it forwards every hook). Not thread-safe
// (the training thread calls it). The optimizer and source must outlive it.
class ChaseController final : public callback::Callback {
 public:
  // kInvalidArgument for bad options (naming the option).
  ChaseController(power_limit::GlobalPowerLimitOptimizer& optimizer, SignalSource& source,
                  ChaseControllerOptions options = {});

  void on_step_begin() override;
  void on_epoch_end() override;

  // Every decision so far (period, signal seen, forecast, eta_eff, limit).
  const std::vector<ChaseDecision>& decisions() const { return decisions_; }
  // The decisions as CSV: period_start_utc,signal_seen,forecast,eta_eff,power_limit_w.
  std::string decisions_csv() const;
  // Periods where the source failed and the last limit was kept.
  int failed_periods() const { return failed_periods_; }
  // Why the last failed period failed; empty once a decision succeeds again.
  const std::string& last_error() const { return last_error_; }
  // The job's GPU count MaxPower uses (after the default is resolved).
  int world_size() const { return options_.world_size; }
  // The fitted forecaster (null before the first decision).
  const SignalForecaster* forecaster() const { return forecaster_.get(); }

 private:
  void decide(std::int64_t period_start);
  // Rank 0's decision, shared with every rank (nullopt: no decision this period).
  std::optional<ChaseDecision> agree(std::int64_t period_start, std::optional<ChaseDecision> local);
  ChaseDecision choose(std::int64_t period_start);
  void prepare(std::int64_t period_start);
  bool refit_due(std::int64_t period_start) const;
  bool distributed() const { return reducer_ != nullptr; }

  power_limit::GlobalPowerLimitOptimizer& optimizer_;
  SignalSource& source_;
  ChaseControllerOptions options_;
  std::optional<ChasePolicy> policy_;
  std::unique_ptr<SignalForecaster> forecaster_;
  power_limit::Reducer* reducer_ = nullptr;  // null in one process
  long long steps_done_ = 0;                 // steps since profiling ended
  std::optional<std::int64_t> fitted_at_;    // the period the forecaster was last fitted at
  std::optional<std::int64_t> last_period_;
  std::vector<ChaseDecision> decisions_;
  bool warned_ = false;
  int failed_periods_ = 0;
  std::string last_error_;
};

}  // namespace zeus::carbon_aware
