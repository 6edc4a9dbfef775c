// The Zeus batch-size policy for a recurring job: pruning exploration, then
// Gaussian Thompson sampling over the surviving batch sizes. It decides which
// batch size the next job runs and learns from each job's cost; it does no I/O.
// The batch-size service and the trace simulator both drive this class.
//
// Concurrency (jobs that start before earlier ones report) is handled by
// trial ids: while pruning waits on an in-flight exploration it hands out the
// best-known batch size (a "concurrent" trial); in the sampling stage every
// decision draws independently from the current posterior.
//
// All state, the RNG included, serializes to JSON and back bit-exactly.
// Not thread-safe: the owner serializes calls (the service holds a per-job lock).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "zeus/optimizer/batch_size/gaussian_ts.h"
#include "zeus/optimizer/batch_size/pruning_explorer.h"
#include "zeus/optimizer/batch_size/rng.h"

namespace zeus::batch_size {

struct PruningGtsOptions {
  std::vector<int> batch_sizes;  // candidates (any order; kept sorted)
  int default_batch_size = 0;    // must be one of batch_sizes
  int num_pruning_rounds = 2;    // 0 skips pruning: every batch size is an arm
  GaussianTsOptions mab;         // prior, explorations per arm, window
  std::uint64_t seed = 123456;   // seeds the sampling RNG
};

enum class TrialKind { kExploration, kConcurrent, kSampling };
std::string_view trial_kind_name(TrialKind kind);

struct Trial {
  std::int64_t id = 0;  // 1, 2, ... per policy
  int batch_size = 0;
  TrialKind kind = TrialKind::kExploration;
};

enum class PolicyStage { kPruning, kSampling };

class PruningGtsPolicy {
 public:
  // Validates the options (kInvalidArgument naming the field).
  explicit PruningGtsPolicy(PruningGtsOptions options);

  // Decides the batch size of the next job.
  Trial next_trial();
  // The job of `trial_id` finished with `cost` (Zeus cost, all of it) and did
  // or did not reach its target. Unknown or already reported id: kNotFound.
  void report(std::int64_t trial_id, double cost, bool converged);
  // The job of `trial_id` died without a result: forget it (kNotFound if unknown).
  void cancel(std::int64_t trial_id);

  PolicyStage stage() const { return stage_; }
  // Cheapest converged cost reported so far, and its batch size.
  std::optional<double> min_cost() const;
  int best_batch_size() const { return best_batch_size_; }
  const PruningExplorer& explorer() const { return explorer_; }
  // Present once the sampling stage has begun.
  const std::optional<GaussianThompsonSampling>& bandit() const { return bandit_; }
  const PruningGtsOptions& options() const { return options_; }
  std::size_t num_in_flight() const { return in_flight_.size(); }

  nlohmann::json to_json() const;
  static PruningGtsPolicy from_json(const nlohmann::json& j);

 private:
  PruningGtsPolicy(PruningGtsOptions options, PruningExplorer explorer);
  void start_sampling();

  PruningGtsOptions options_;
  PruningExplorer explorer_;
  std::optional<GaussianThompsonSampling> bandit_;
  PolicyStage stage_ = PolicyStage::kPruning;
  Rng rng_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, Trial> in_flight_;
  // Costs reported per batch size during pruning (all kinds, report order):
  // the arms are fitted on them when sampling begins.
  std::map<int, std::vector<double>> pruning_costs_;
  double min_cost_;
  int best_batch_size_;
};

}  // namespace zeus::batch_size
