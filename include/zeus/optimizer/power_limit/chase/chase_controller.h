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

namespace zeus {

struct ChaseControllerOptions {
  double eta = 0.25;                       // carbon (or cost) vs time, [0, 1]
  std::int64_t period_s = 3600;            // decision period (> 0; boundaries at UTC multiples)
  std::int64_t history_s = 86'400;         // forecaster fit and normaliser window
  std::optional<double> signal_max;        // the normaliser; default: max over the history
  std::string forecaster = "persistence";  // persistence, linear or svr
  // GPUs of the job (MaxPower = max limit x this); 0: the optimizer's GPUs.
  int world_size = 0;
  // Unix seconds now; default: the system clock. Tests inject a scripted clock.
  std::function<double()> unix_now;
};

// A training Callback that wraps the GlobalPowerLimitOptimizer: give it to the
// loop instead of the optimizer (it forwards every hook). Not thread-safe
// (the training thread calls it). The optimizer and source must outlive it.
class ChaseController final : public Callback {
 public:
  // kInvalidArgument for bad options (naming the option).
  ChaseController(GlobalPowerLimitOptimizer& optimizer, SignalSource& source,
                  ChaseControllerOptions options = {});

  void on_step_begin() override;
  void on_epoch_end() override;

  // Every decision so far (period, signal seen, forecast, eta_eff, limit).
  const std::vector<ChaseDecision>& decisions() const { return decisions_; }
  // The decisions as CSV: period_start_utc,signal_seen,forecast,eta_eff,power_limit_w.
  std::string decisions_csv() const;
  // Periods where the source failed and the last limit was kept.
  int failed_periods() const { return failed_periods_; }
  // The fitted forecaster (null before the first decision).
  const SignalForecaster* forecaster() const { return forecaster_.get(); }

 private:
  void decide(std::int64_t period_start);
  void prepare(std::int64_t period_start);

  GlobalPowerLimitOptimizer& optimizer_;
  SignalSource& source_;
  ChaseControllerOptions options_;
  std::optional<ChasePolicy> policy_;
  std::unique_ptr<SignalForecaster> forecaster_;
  std::optional<std::int64_t> last_period_;
  std::vector<ChaseDecision> decisions_;
  bool warned_ = false;
  int failed_periods_ = 0;
};

}  // namespace zeus
