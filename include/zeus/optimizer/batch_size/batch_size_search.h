// The Zeus batch-size search for a recurring job: pruning exploration, then
// Gaussian Thompson sampling over the surviving batch sizes. It decides which
// batch size the next run of the job uses and learns from each run's cost;
// it does no I/O. The batch-size optimizer service and the trace simulator
// both drive this class.
//
// Concurrency (runs that start before earlier ones report) is handled by
// trial ids: while pruning waits on an in-flight exploration it hands out the
// batch size of the cheapest run so far (a "concurrent" trial); in the
// sampling stage every decision draws independently from the current posterior.
//
// The minimum cost follows the service's rule (zeus-inventory §4.3): every
// reported run counts, converged or not; the early-stopping bound is
// beta * min_cost() (cost.h). All state, the RNG included, round-trips through
// JSON bit-exactly (state_json.h).
// Not thread-safe: the owner serializes calls (the service holds a per-job lock).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "zeus/optimizer/batch_size/gaussian_ts.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/optimizer/batch_size/pruning_explorer.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/util/units.h"

namespace zeus::batch_size {

struct BatchSizeSearchOptions {
  std::vector<int> batch_sizes;  // candidates (any order; kept sorted)
  int default_batch_size = 0;    // must be one of batch_sizes
  int num_pruning_rounds = 2;    // 0 skips pruning: every batch size is an arm
  GaussianTsOptions mab;         // prior, explorations per arm, window
  std::uint64_t seed = 123456;   // seeds the sampling RNG
  // A pruning round in which no batch size converged: false keeps the
  // previous round's list (the paper simulator); true makes next_trial()
  // fail with kFailedPrecondition, since the target is out of reach (the service).
  bool fail_on_round_without_survivor = false;
};

std::string_view trial_kind_name(TrialKind kind);  // exploration, concurrent, sampling
// kParse for other names.
TrialKind parse_trial_kind(std::string_view name);

struct Trial {
  std::int64_t id = 0;  // 1, 2, ... per search
  int batch_size = 0;
  TrialKind kind = TrialKind::kExploration;
};

enum class SearchStage { kPruning, kSampling };

class BatchSizeSearch {
 public:
  // Everything besides the options, the explorer and the bandit.
  struct State {
    SearchStage stage = SearchStage::kPruning;
    Rng rng;
    std::int64_t next_trial_id = 1;
    std::map<std::int64_t, Trial> in_flight;
    // Costs reported per batch size during pruning (all kinds, report order):
    // the arms are fitted on them when sampling begins.
    std::map<int, std::vector<Joules>> pruning_costs;
    Joules min_cost{0};  // +inf until the first report
    int min_cost_batch_size = 0;
  };

  // Validates the options (kInvalidArgument naming the field).
  explicit BatchSizeSearch(BatchSizeSearchOptions options);
  // A search with exactly this saved state (state_json.h).
  static BatchSizeSearch restore(BatchSizeSearchOptions options, PruningExplorer explorer,
                                 std::optional<GaussianThompsonSampling> bandit, State state);

  // Decides the batch size of the next run. kFailedPrecondition (state
  // unchanged) when fail_on_round_without_survivor is set and a round ended
  // with nothing converged.
  Trial next_trial();
  // The run of `trial_id` finished with `cost` (all of it) and did or did not
  // reach its target. Unknown or already reported id: kNotFound.
  void report(std::int64_t trial_id, Joules cost, bool converged);
  // The run of `trial_id` died without a result: forget it (kNotFound if unknown).
  void cancel(std::int64_t trial_id);

  SearchStage stage() const { return state_.stage; }
  // Cheapest reported cost so far (converged or not), and its batch size
  // (the default batch size until the first report).
  std::optional<Joules> min_cost() const;
  int min_cost_batch_size() const { return state_.min_cost_batch_size; }
  const PruningExplorer& explorer() const { return explorer_; }
  // Present once the sampling stage has begun.
  const std::optional<GaussianThompsonSampling>& bandit() const { return bandit_; }
  const BatchSizeSearchOptions& options() const { return options_; }
  const State& state() const { return state_; }
  std::size_t num_in_flight() const { return state_.in_flight.size(); }
  bool is_in_flight(std::int64_t trial_id) const { return state_.in_flight.count(trial_id) > 0; }

 private:
  BatchSizeSearch(BatchSizeSearchOptions options, PruningExplorer explorer);
  void start_sampling();

  BatchSizeSearchOptions options_;
  PruningExplorer explorer_;
  std::optional<GaussianThompsonSampling> bandit_;
  State state_;
};

}  // namespace zeus::batch_size
