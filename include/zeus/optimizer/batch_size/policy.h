// The policy seam: how a recurring job's next run picks its batch size and
// its power limit, and learns from each run (the Python Zeus's
// zeus._legacy.policy.interface: BatchSizeOptimizer and PowerLimitOptimizer).
// The trace simulator (`zeus simulate`, `zeus simulate paper`), the Python
// `zeuscpp._legacy.simulate.Simulator` and the batch-size service drive every
// policy through these two interfaces, built-in or not; policies are found by
// name in a PolicyRegistry. docs/extending.md shows how to write one.
//
// Everything a plug-in needs is inline in this header (interfaces, the
// descriptor), so a policy compiled into a shared object and loaded with
// load_policy_plugin() links against nothing of the library.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/util/units.h"

namespace zeus::batch_size {

// Why a run uses its batch size (the service reports it; the simulator records it).
enum class TrialKind { kExploration, kConcurrent, kSampling };

// What a policy learns about a job when it takes it on (upstream's
// register_job arguments, plus the knobs of the built-ins).
struct PolicyContext {
  std::string job;               // names the job in messages: "imagenet/resnet50 on v100"
  std::vector<int> batch_sizes;  // the feasible batch sizes, ascending
  int default_batch_size = 0;    // b0, one of batch_sizes
  double eta = 0.5;              // the cost's energy/time trade-off
  std::uint64_t seed = 1;        // the policy's own random draws
  Watts max_power{0.0};          // MaxPower of the cost
  // The power limits each batch size can run at, highest first, with what one
  // epoch takes there. Empty where nothing is profiled (the batch-size service).
  std::map<int, std::vector<PowerLimitEpoch>> power_limits;
  // Knobs of the built-in Zeus policy (ablations); others may ignore them.
  int num_pruning_rounds = 2;
  int window_size = 0;
  double prior_mean = 0.0;  // Gaussian Thompson sampling prior (flat by default)
  double prior_precision = 0.0;
  bool one_limit_per_recurrence = false;
};

// The batch size of one run. `trial_id` lets a policy tell apart runs that are
// in flight at the same time (the simulator's overlap mode, the service); a
// policy that needs no ids leaves it 0. The same choice comes back in observe().
struct BatchSizeChoice {
  std::int64_t trial_id = 0;
  int batch_size = 0;
  TrialKind kind = TrialKind::kExploration;
};

// Upstream's BatchSizeOptimizer, one object per job.
class BatchSizePolicy {
 public:
  virtual ~BatchSizePolicy() = default;
  // The batch size of the next run; it must be one of the context's batch sizes.
  virtual BatchSizeChoice predict() = 0;
  // The run of `choice` ended: its whole cost (J) and whether it reached the
  // target. A run that could not run one epoch under the early-stopping bound
  // is observed with cost 100 * beta * min_cost and converged = false.
  virtual void observe(const BatchSizeChoice& choice, Joules cost, bool converged) = 0;
};

// Upstream's PowerLimitOptimizer, one object per job.
class PowerLimitPolicy {
 public:
  virtual ~PowerLimitPolicy() = default;
  // The power limit for a run at `batch_size`, or nullopt to ask for
  // profiling: the caller then observe()s the epoch cost of every limit of
  // that batch size (highest first) and asks again; the run pays a profiling
  // epoch. The limit must be one of the batch size's limits.
  virtual std::optional<Milliwatts> predict(int batch_size) = 0;
  // One profiled epoch cost (upstream's observe).
  virtual void observe(int batch_size, Milliwatts power_limit, Joules epoch_cost) = 0;
  // A run at (choice.batch_size, power_limit) ended, as BatchSizePolicy::observe
  // sees it. Upstream's power-limit optimizers never see runs: the default ignores it.
  virtual void observe_run(const BatchSizeChoice& choice, Milliwatts power_limit, Joules cost,
                           bool converged) {
    (void)choice, (void)power_limit, (void)cost, (void)converged;
  }
};

// A policy for one job: both halves (they may share state, as grid search does).
struct Policy {
  std::unique_ptr<BatchSizePolicy> batch_size;
  std::unique_ptr<PowerLimitPolicy> power_limit;
};

// A named way to make policies.
struct PolicyInfo {
  std::string name;         // what --strategy and the job spec's "policy" accept
  std::string description;  // one line, for --help and error messages
  // Whether runs are capped at beta * min_cost (false: beta is ignored, as
  // for Default and the no-early-stop grid searches).
  bool early_stopping = true;
  std::function<Policy(const PolicyContext&)> make;
};

// The known policies by name. global() starts with the built-ins: zeus,
// default, grid, grid-noes, grid-dir, grid-dir-noes. Thread-safe; entries are
// never removed, so references stay valid.
class PolicyRegistry {
 public:
  static PolicyRegistry& global();

  // kAlreadyExists when the name is taken; kInvalidArgument for an empty or
  // malformed name (letters, digits, '-', '_', '.', at most 64) or no `make`.
  void add(PolicyInfo info);
  // kInvalidArgument naming the unknown policy and listing the known ones.
  const PolicyInfo& find(std::string_view name) const;
  const PolicyInfo* find_if(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  std::string known_names() const;         // "default, grid, ..., zeus"

 private:
  mutable std::mutex mu_;
  std::map<std::string, PolicyInfo, std::less<>> policies_;
};

// Registers the built-ins into `registry` (global() already has them).
void add_builtin_policies(PolicyRegistry& registry);
// The power-limit half of "zeus" on its own (upstream's JITPowerLimitOptimizer),
// for front ends that pair it with another batch-size half.
std::unique_ptr<PowerLimitPolicy> make_jit_power_limit_policy();

// A plug-in is a shared object exporting
//   extern "C" void zeus_policy_plugin_v1(std::vector<zeus::batch_size::PolicyInfo>& out);
// which appends its policies. load_policy_plugin() dlopen()s PATH (kept
// loaded for the life of the process), calls it and adds each policy to
// `registry`; it returns their names. kNotFound/kInvalidArgument naming the
// path when it cannot be loaded or lacks the entry point; kAlreadyExists when
// a name is taken. The plug-in must be built with the same compiler and
// standard library as the program that loads it.
inline constexpr const char* kPolicyPluginEntry = "zeus_policy_plugin_v1";
using PolicyPluginFn = void (*)(std::vector<PolicyInfo>&);
std::vector<std::string> load_policy_plugin(const std::string& path,
                                            PolicyRegistry& registry = PolicyRegistry::global());

}  // namespace zeus::batch_size
