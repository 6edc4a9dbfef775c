// Trace-driven replay of recurring training jobs (the Zeus NSDI '23 simulator,
// zeus/_legacy/simulate.py): each recurrence runs until a run reaches the
// target, with per-run path sampling, just-in-time power-limit profiling, the
// beta * min_cost early-stopping cap and "could not run" tries, exactly as
// docs/reference/paper-simulator.md describes. Functions here are pure given
// their inputs (the seed fixes every random draw) and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/sim/trace.h"

namespace zeus::sim {

// A policy of the registry (zeus/optimizer/batch_size/policy.h) by name: how
// each recurrence's (batch size, power limit) is chosen. Called strategies
// here for the paper's baselines; any registered name works (plug-ins too).
class Strategy {
 public:
  Strategy() : name_("zeus") {}
  explicit Strategy(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  auto operator<=>(const Strategy&) const = default;

  static const Strategy kZeus;             // pruning + Gaussian TS + JIT power limit, beta
  static const Strategy kDefault;          // (b0, max power limit), no early stopping
  static const Strategy kGrid;             // grid search with pruning ("gs"), beta
  static const Strategy kGridNoEarlyStop;  // the same without early stopping ("gsnoes")
  static const Strategy kGridDirectional;  // directional grid search from b0 ("gsdir"), beta
  static const Strategy
      kGridDirectionalNoEarlyStop;  // the same without early stopping ("gsdirnoes")

 private:
  std::string name_;
};
inline const Strategy Strategy::kZeus{"zeus"};
inline const Strategy Strategy::kDefault{"default"};
inline const Strategy Strategy::kGrid{"grid"};
inline const Strategy Strategy::kGridNoEarlyStop{"grid-noes"};
inline const Strategy Strategy::kGridDirectional{"grid-dir"};
inline const Strategy Strategy::kGridDirectionalNoEarlyStop{"grid-dir-noes"};

// The paper's six baselines, in the order above.
const std::vector<Strategy>& all_strategies();
inline std::string_view strategy_name(const Strategy& strategy) { return strategy.name(); }
// A registered policy; kInvalidArgument naming it and listing the known ones.
Strategy parse_strategy(std::string_view name);
// Whether the policy runs with the early-stopping cap (Default and grid-noes do not).
bool uses_early_stopping(const Strategy& strategy);

// Bounds of the knobs: beyond them the replay means nothing physical.
inline constexpr double kMaxBeta = 1e6;  // beyond this, give inf (no early stopping)
inline constexpr int kMaxWindowSize = 1'000'000;
inline constexpr double kMaxOverlap = 1e6;
inline constexpr int kMaxPruningRounds = 100;
inline constexpr int kMaxTriesLimit = 100'000;

// How Zeus finds the power limit of a batch size it runs for the first time.
enum class PowerLimitSearch {
  // The first epoch of that run is spread over every limit (the paper's
  // just-in-time profiling), then the cheapest limit is used.
  kJustInTime,
  // Ablation (Figure 13): no profiling; each of the batch size's next runs
  // uses one untried limit (highest first), a whole recurrence per limit,
  // until all are tried; then the same choice rule picks the limit.
  kOnePerRecurrence,
};

struct SimOptions {
  double eta = 0.5;            // energy/time trade-off, [0, 1]
  double beta = 2.0;           // early-stopping factor in (0, kMaxBeta]; +inf disables
  std::uint64_t seed = 1;      // path sampling and the strategy's draws
  int window_size = 0;         // Zeus: observations kept per arm (0 = all)
  int num_pruning_rounds = 2;  // Zeus; 0 = no pruning (every batch size is an arm), ablation
  // Runs a recurrence may take before the replay gives up (the reference's 20).
  int max_tries = 20;
  // When a recurrence uses up max_tries: false raises (the reference's
  // RuntimeError); true ends the replay there and sets SimResult::stuck_at
  // (sequential replays only, not with overlap), so an ablation that gets
  // stuck can be reported as such.
  bool stop_when_stuck = false;
  PowerLimitSearch power_limit_search = PowerLimitSearch::kJustInTime;  // Zeus
  // Overlapping arrivals: 0 replays recurrences one after another (the
  // paper's run_single). x > 0 submits recurrence i at i * TTA_default / x,
  // so about x jobs are in flight; each run's outcome is reported when it ends.
  double overlap = 0.0;
};

// One training run (one try) of a recurrence.
struct RunRecord {
  int recurrence = 0;
  int batch_size = 0;
  Milliwatts power_limit{0};
  Joules energy{0.0};  // 0 for "could not run"
  Seconds time{0.0};
  Joules cost{0.0};  // the Zeus cost: eta * energy + (1 - eta) * max power * time
  bool reached = false;
  bool profiled = false;       // paid the JIT-profiling epoch
  bool could_not_run = false;  // the cap allowed no epoch at all
  batch_size::TrialKind kind = batch_size::TrialKind::kExploration;
  Seconds start_time{0.0};   // overlap mode: submission clock
  int others_in_flight = 0;  // overlap mode: runs already running at its start
};

// One recurrence: the sum over its runs, and the configuration that reached.
struct RecurrenceRecord {
  int batch_size = 0;
  Milliwatts power_limit{0};
  int runs = 0;
  Joules energy{0.0};
  Seconds time{0.0};
  Joules cost{0.0};
};

struct SimResult {
  std::vector<RecurrenceRecord> recurrences;  // only the completed ones when stuck
  std::vector<RunRecord> runs;
  std::optional<int> stuck_at;  // with stop_when_stuck: the recurrence that never finished
};

// Replays trace.num_recurrence recurrences. kInvalidArgument for eta outside
// [0,1] or beta <= 0; kInternal when the replay breaks the reference's
// invariants.
// kInvalidArgument too when the trace cannot be replayed (b0 never reaches
// the target in recurrence 1; a recurrence fails 20 tries in a row).
SimResult simulate(const WorkloadTrace& trace, const Strategy& strategy, const SimOptions& options);

// What a policy of one replay is told about the job (PolicyContext from the
// trace and the options).
batch_size::PolicyContext policy_context(const WorkloadTrace& trace, const SimOptions& options);
// The same replay with a policy already made (a Python policy, for instance);
// `name` names it in errors. Everything it returns is checked: a batch size
// or power limit the trace does not have, or no power limit after profiling,
// is kInvalidArgument naming the policy and the job; an exception it throws
// is rethrown with the same code, prefixed by the policy and the job.
SimResult simulate(const WorkloadTrace& trace, batch_size::Policy& policy, const std::string& name,
                   bool early_stopping, const SimOptions& options);

// The normalisers and the optimum of one pair (docs/reference §7).
struct Reference {
  Joules default_eta{0.0};   // expected Default energy-to-accuracy
  Seconds default_tta{0.0};  // expected Default time-to-accuracy
  Joules opt_cost{0.0};      // C*: least expected cost over (b, p) that always converge
  int opt_batch_size = 0;
  Milliwatts opt_power_limit{0};
};
// `after_drift` uses the drifted runs of a drifting workload.
Reference compute_reference(const WorkloadTrace& trace, double eta, bool after_drift = false);

struct RunSummary {
  double eta_norm = 0;     // mean energy of the last 5 recurrences / expected Default ETA
  double tta_norm = 0;     // the same for time
  Joules cum_energy{0.0};  // sum over all recurrences (every run, failed ones included)
  Seconds cum_time{0.0};
  Joules cum_cost{0.0};
  Joules cum_regret{0.0};     // sum over recurrences of (cost - C*)
  double cum_regret_rel = 0;  // cum_regret / C*
  int final_batch_size = 0;
  Milliwatts final_power_limit{0};
};
RunSummary summarize_run(const WorkloadTrace& trace, const SimResult& result, double eta);

}  // namespace zeus::sim
