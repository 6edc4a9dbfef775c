// Replaying one training job against a grid signal (carbon intensity or
// price) under a power-limit policy: the trace-driven evaluation of Chase
// (docs/chase.md). A job is a number of epochs with a measured time and
// energy per epoch at each power limit (a Zeus power trace); the signal
// charges the energy used in each of its samples at that sample's value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/optimizer/power_limit/carbon_aware/chase.h"
#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"
#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"

namespace zeus::sim::carbon_aware {

// One epoch at each limit, and the JIT-profiling epoch (every limit in turn).
struct JobProfile {
  std::vector<power_limit::PowerLimitMeasurement> per_epoch;  // any order; >= 1 limit
  Seconds profile_time{0.0};                                  // 0: profiling is never charged
  Joules profile_energy{0.0};
};

// A policy by name: "max" (the highest limit: the paper's Normal Training),
// "limit:W" (a fixed limit), "zeus-cost:ETA", "max-slowdown:FACTOR" (static
// selectors, chosen once from the profile), "chase:ETA[:FORECASTER]"
// (forecaster persistence (default), linear, svr, oracle).
struct Policy {
  enum class Kind { kMax, kFixed, kStatic, kChase };
  Kind kind = Kind::kMax;
  std::string spec;  // as given, for reports
  Milliwatts fixed{0};
  std::shared_ptr<const power_limit::PowerLimitSelector> selector;
  double eta = 0.0;
  std::string forecaster = "persistence";
};
// kInvalidArgument naming the accepted forms.
Policy parse_policy(const std::string& spec);

struct ReplayOptions {
  double epochs = 1.0;               // work, in epochs (> 0)
  std::int64_t period_s = 0;         // decision period; 0: the signal's resolution
  std::int64_t history_s = 86'400;   // the forecaster's fit and the normaliser's window
  std::optional<double> signal_max;  // Chase's normaliser; default: max over the history
  bool charge_profiling = false;     // non-max policies first spend one profiling epoch
  int world_size = 1;                // GPUs whose energy the profile sums
};

// One decision period of a replay (the rows of decisions.csv).
struct PeriodRecord {
  zeus::carbon_aware::ChaseDecision decision;  // forecast/eta_eff NaN for non-Chase policies
  double signal = 0.0;                         // the period's actual (mean) value
  Seconds time{0.0};                           // spent in the period
  Joules energy{0.0};
  double charge = 0.0;     // grams CO2 or currency
  bool profiling = false;  // the profiling epoch (limit 0)
};

struct ReplayResult {
  Seconds time{0.0};
  Joules energy{0.0};
  double charge = 0.0;
  std::optional<double> forecast_mape;  // Chase: the fitted forecaster's in-sample MAPE (%)
  std::vector<PeriodRecord> periods;    // when asked to record
};

class Replayer {
 public:
  // kInvalidArgument: an empty profile, bad options, or a period that is not
  // a positive multiple of the signal's resolution (naming both). Decision
  // periods start at UTC multiples of the period, shifted by the signal's own
  // phase (start mod resolution; 0 for hourly data on the hour).
  // `signal` is kept by reference and must outlive the replayer (a temporary
  // does not compile).
  Replayer(JobProfile profile, const zeus::carbon_aware::GridSignal& signal, ReplayOptions options);
  Replayer(JobProfile profile, zeus::carbon_aware::GridSignal&& signal,
           ReplayOptions options) = delete;

  // Replays from `start_utc`. kNotFound naming the signal's file when the
  // history before the start or the job itself is not covered (never wraps;
  // see GridSignal::periodic_extension); kInvalidArgument for a policy that
  // does not fit the profile (a fixed limit it lacks).
  ReplayResult run(const Policy& policy, std::int64_t start_utc, bool record = false) const;

  // The earliest period start whose history is covered (a job may still
  // outlast the series from a late start).
  std::int64_t first_start() const;
  std::int64_t period_s() const { return period_; }
  // Into this replayer: not on a temporary, where they would dangle.
  const zeus::carbon_aware::GridSignal& periodic_signal() const& { return periodic_; }
  const zeus::carbon_aware::GridSignal& periodic_signal() const&& = delete;
  const zeus::carbon_aware::GridSignal& signal() const& { return signal_; }
  const zeus::carbon_aware::GridSignal& signal() const&& = delete;
  const JobProfile& profile() const& { return profile_; }
  const JobProfile& profile() const&& = delete;
  const ReplayOptions& options() const& { return options_; }
  const ReplayOptions& options() const&& = delete;
  // The period start at or before t.
  std::int64_t period_floor(std::int64_t t) const;

 private:
  JobProfile profile_;
  const zeus::carbon_aware::GridSignal& signal_;
  ReplayOptions options_;
  std::int64_t period_;
  std::int64_t phase_;
  zeus::carbon_aware::GridSignal periodic_;  // the signal's mean per decision period
};

}  // namespace zeus::sim::carbon_aware
