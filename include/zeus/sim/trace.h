// The Zeus NSDI '23 traces (summary_train.csv + summary_power_<gpu>.csv),
// joined and indexed for replay. Loading validates the files and names the
// file and line of anything malformed. Loaded traces are immutable and may be
// shared between threads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/csv.h"
#include "zeus/util/units.h"

namespace zeus::sim {

// One recurring job of the paper's evaluation (run_alibaba.get_job_with_defaults).
struct WorkloadSpec {
  std::string dataset;
  std::string network;
  std::string optimizer;
  double target_metric = 0.0;  // matched exactly against the train trace
  int max_epochs = 0;
  int paper_default_batch_size = 0;  // b0 before capping to the GPU's largest size
  std::string name() const { return dataset + "/" + network; }
};

// The six workloads, in the paper's order.
const std::vector<WorkloadSpec>& paper_workloads();
// The four GPUs with a power trace: v100, a40, p100, rtx6000.
const std::vector<std::string>& trace_gpus();

// One power limit of one batch size.
struct PowerLimitPoint {
  Milliwatts power_limit;
  Seconds time_per_epoch{0.0};
  Watts average_power{0.0};
  Joules energy_per_epoch{0.0};  // time * power
};

// What a trace may contain: finite values in physically possible ranges, so
// that nothing derived from them (costs, regrets, sums over recurrences)
// overflows. Anything else is kParse naming the file and line.
inline constexpr int kMaxTraceBatchSize = 10'000'000;
inline constexpr double kMaxTracePowerW = 10'000.0;           // power limit, average power
inline constexpr double kMaxTraceEpochTimeS = 30 * 86'400.0;  // one epoch
inline constexpr double kMaxTraceTargetEpoch = 1e6;
inline constexpr double kMaxTraceTargetMetric = 1e9;

// Everything the replay needs about one batch size.
struct BatchSizeTrace {
  int batch_size = 0;
  std::vector<PowerLimitPoint> limits;  // descending power limit
  // Epochs to reach the target, one per training run in train-file order;
  // NaN when the run never reached it.
  std::vector<double> target_epochs;
  // Per-epoch means over the power limits: the JIT-profiling epoch.
  Joules profile_energy_per_epoch{0.0};
  Seconds profile_time_per_epoch{0.0};
  // kNotFound if absent. Not on a temporary (the reference would dangle).
  const PowerLimitPoint& at(Milliwatts pl) const&;
  const PowerLimitPoint& at(Milliwatts pl) const&& = delete;
};

// One (GPU, workload) pair, ready to replay.
struct WorkloadTrace {
  std::string gpu;
  WorkloadSpec spec;
  int default_batch_size = 0;               // min(paper b0, largest batch size in the power trace)
  Watts max_power{0.0};                     // largest power limit in the whole GPU trace
  std::vector<BatchSizeTrace> batch_sizes;  // ascending
  int num_power_limits = 0;                 // |P| over the joined, target-filtered table
  int num_recurrence = 0;                   // 2 |B| |P| unless set otherwise
  // Synthetic data drift: from recurrence `drift_at` on, runs are drawn from
  // `drifted_target_epochs` (same order as batch_sizes) instead.
  std::optional<int> drift_at;
  std::vector<std::vector<double>> drifted_target_epochs;

  std::string name() const { return spec.name(); }
  // kNotFound if absent. Not on a temporary (TraceSet::workload returns by
  // value; `set.workload(...).batch(b)` would dangle): name the trace first.
  const BatchSizeTrace& batch(int batch_size) const&;
  const BatchSizeTrace& batch(int batch_size) const&& = delete;
  std::vector<int> batch_size_list() const;
  // The runs to sample from in recurrence `i` (not on a temporary either).
  const std::vector<double>& runs(const BatchSizeTrace& b, int recurrence) const&;
  const std::vector<double>& runs(const BatchSizeTrace& b, int recurrence) const&& = delete;
};

// All traces of a directory, loaded once.
class TraceSet {
 public:
  // Reads DIR/summary_train.csv and DIR/summary_power_<gpu>.csv for each GPU.
  // Missing files: kNotFound naming the path; a directory or special file in
  // their place kInvalidArgument; malformed or out-of-range content kParse
  // with file:line.
  static TraceSet load(const std::string& dir, const std::vector<std::string>& gpus);
  // The same from file contents: `power_csv` maps a GPU name to its
  // summary_power file; `dir` names the source in messages.
  static TraceSet parse(std::string_view train_csv,
                        const std::map<std::string, std::string>& power_csv,
                        const std::string& dir);

  // The replayable trace of one pair; kNotFound when the GPU was not loaded or
  // the workload has no rows on it.
  WorkloadTrace workload(const std::string& gpu, const WorkloadSpec& spec) const;
  const std::string& directory() const { return dir_; }

 private:
  static TraceSet from_tables(const std::string& dir, const CsvTable& train,
                              const std::map<std::string, CsvTable>& power);
  struct TrainRow {
    std::string dataset, network, optimizer;
    int batch_size;
    double target_metric, target_epoch;
  };
  struct PowerRow {
    std::string dataset, network, optimizer;
    int batch_size;
    Milliwatts power_limit;
    Seconds time_per_epoch;
    Watts average_power;
  };
  std::string dir_;
  std::vector<TrainRow> train_;
  std::map<std::string, std::vector<PowerRow>> power_;  // per GPU
};

// Finds a workload by "dataset/network" (kNotFound listing the known ones).
const WorkloadSpec& find_workload(const std::string& name);

// A synthetic drifting workload (the Capriccio idea): five batch sizes with the
// same per-epoch cost, so cost follows epochs-to-target; the cheapest batch
// size is 64 before recurrence `drift_at` and 256 from then on. Power limits
// and timings are synthetic. Documented in docs/simulator.md.
WorkloadTrace make_drifting_workload(int num_recurrence = 300, int drift_at = 150);

}  // namespace zeus::sim
