// Trace-driven replay of recurring training jobs (the Zeus NSDI '23 simulator,
// zeus/_legacy/simulate.py): each recurrence runs until a run reaches the
// target, with per-run path sampling, just-in-time power-limit profiling, the
// beta * min_cost early-stopping cap and "could not run" tries, exactly as
// docs/reference/paper-simulator.md describes. Functions here are pure given
// their inputs (the seed fixes every random draw) and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/sim/trace.h"

namespace zeus::sim {

// The ways of choosing each recurrence's (batch size, power limit) that the
// simulator compares. Called strategies here: "policy" elsewhere in the
// project names the batch-size search and the power-limit selectors.
enum class Strategy {
  kZeus,             // pruning + Gaussian Thompson sampling + JIT power limit, beta
  kDefault,          // (b0, max power limit), no early stopping
  kGrid,             // grid search with pruning ("gs"), beta
  kGridNoEarlyStop,  // the same without early stopping ("gsnoes")
};
std::string_view strategy_name(Strategy strategy);  // zeus, default, grid, grid-noes
// kInvalidArgument listing the accepted names.
Strategy parse_strategy(std::string_view name);
// Whether the strategy runs with the early-stopping cap (Default and grid-noes do not).
bool uses_early_stopping(Strategy strategy);

// Bounds of the knobs: beyond them the replay means nothing physical.
inline constexpr double kMaxBeta = 1e6;  // beyond this, give inf (no early stopping)
inline constexpr int kMaxWindowSize = 1'000'000;
inline constexpr double kMaxOverlap = 1e6;

struct SimOptions {
  double eta = 0.5;            // energy/time trade-off, [0, 1]
  double beta = 2.0;           // early-stopping factor in (0, kMaxBeta]; +inf disables
  std::uint64_t seed = 1;      // path sampling and the strategy's draws
  int window_size = 0;         // Zeus: observations kept per arm (0 = all)
  int num_pruning_rounds = 2;  // Zeus
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
  std::vector<RecurrenceRecord> recurrences;
  std::vector<RunRecord> runs;
};

// Replays trace.num_recurrence recurrences. kInvalidArgument for eta outside
// [0,1] or beta <= 0; kInternal when the replay breaks the reference's
// invariants.
// kInvalidArgument too when the trace cannot be replayed (b0 never reaches
// the target in recurrence 1; a recurrence fails 20 tries in a row).
SimResult simulate(const WorkloadTrace& trace, Strategy strategy, const SimOptions& options);

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

struct Metrics {
  double eta_norm = 0;        // mean energy of the last 5 recurrences / expected Default ETA
  double tta_norm = 0;        // the same for time
  Joules cum_regret{0.0};     // sum over recurrences of (cost - C*)
  double cum_regret_rel = 0;  // cum_regret / C*
  int final_batch_size = 0;
  Milliwatts final_power_limit{0};
};
Metrics compute_metrics(const WorkloadTrace& trace, const SimResult& result, double eta);

}  // namespace zeus::sim
