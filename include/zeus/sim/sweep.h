// Runs the evaluation matrix (GPU x workload x eta x seed x strategy) over
// threads and summarizes each row (RunSummary). Results are in a fixed order and do
// not depend on the number of threads (each row owns its seeded RNGs).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"

namespace zeus::sim {

struct SweepSpec {
  std::vector<std::string> gpus;        // ignored with drift
  std::vector<WorkloadSpec> workloads;  // ignored with drift
  std::vector<double> etas = {0.5};
  double beta = 2.0;
  std::vector<std::uint64_t> seeds = {1};
  std::vector<Strategy> strategies = {Strategy::kZeus, Strategy::kDefault, Strategy::kGrid};
  int window_size = 0;
  int num_pruning_rounds = 2;  // zeus; 0 = no pruning (ablation)
  PowerLimitSearch power_limit_search = PowerLimitSearch::kJustInTime;  // zeus
  double overlap = 0.0;
  bool drift = false;              // replay the synthetic drifting workload instead
  bool keep_trajectories = false;  // keep every SimResult (for files and plots)
};

struct SweepRow {
  std::string gpu;
  std::string workload;  // dataset/network
  double eta = 0, beta = 0;
  std::uint64_t seed = 0;
  Strategy strategy = Strategy::kZeus;
  int default_batch_size = 0;
  int num_recurrence = 0;
  Reference reference;           // after the drift for the drifting workload
  Joules initial_opt_cost{0.0};  // C* before the drift (= reference.opt_cost otherwise)
  int drift_at = -1;             // first drifted recurrence, or -1
  RunSummary summary;
  std::shared_ptr<const SimResult> result;  // only with keep_trajectories
};

// Checks a spec before anything runs: eta in [0, 1], beta in (0, 1e6] or
// +inf, known GPUs, non-empty lists without repeats, window in [0, 1e6],
// overlap in [0, 1e6]. kInvalidArgument naming the field.
void validate(const SweepSpec& spec);

// The replayable traces a spec needs, in row order (gpu-major).
std::vector<WorkloadTrace> sweep_traces(const TraceSet* traces, const SweepSpec& spec);

// One replay of a batch: the trace must outlive the batch.
struct SimJob {
  const WorkloadTrace* trace = nullptr;
  Strategy strategy = Strategy::kZeus;
  SimOptions options;
};
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;
// Replays every job on `threads` workers (<= 0: one per core) and hands each
// result to consume(i, result) on the worker that ran job i (the result may
// be moved from), so consumers
// that write only slot i of pre-sized storage need no lock; results are
// then independent of the number of threads. `progress` is called
// serialized. The first error stops the batch and is rethrown.
void run_simulations(const std::vector<SimJob>& jobs, int threads,
                     const std::function<void(std::size_t, SimResult&&)>& consume,
                     const ProgressFn& progress = {});

// `progress(done, total)` is called from worker threads, serialized. threads
// <= 0 uses the hardware concurrency. Errors from any row are rethrown.
std::vector<SweepRow> run_sweep(const std::vector<WorkloadTrace>& traces, const SweepSpec& spec,
                                int threads = 0, const ProgressFn& progress = {});

}  // namespace zeus::sim
