// A brute force over the raw trace files (data/zeus-traces/*.csv), written
// for the tests from the reference's definitions (paper-simulator.md §1, §2,
// §7) without the library's trace loader, so that what the paper figures
// plot can be checked against numbers derived here independently.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zeus/sim/trace.h"

namespace zeus::sim::raw {

// One (batch size, power limit) row of summary_power_<gpu>.csv.
struct RawLimit {
  double time_per_epoch_s = 0, average_power_w = 0;
  double energy_per_epoch_j() const { return time_per_epoch_s * average_power_w; }
};

// One workload on one GPU, straight from the files.
struct RawWorkload {
  int max_epochs = 0;
  int b0 = 0;                  // min(paper b0, largest batch size in the power file)
  double gpu_max_limit_w = 0;  // largest power limit anywhere in the GPU's power file
  // Batch sizes present in both files; epochs to target per run (NaN: never
  // reached) and the power rows keyed by the limit in watts.
  std::map<int, std::vector<double>> epochs;
  std::map<int, std::map<double, RawLimit>> limits;

  // Mean epochs over the runs that reach the target within max_epochs (NaN
  // when none does), and whether every run does (the optimum's feasibility).
  double mean_converged_epochs(int batch_size) const;
  bool all_converge(int batch_size) const;
  // Mean epochs over all runs (the expected Default's definition).
  double mean_epochs(int batch_size) const;
  // Expected energy to accuracy: mean_converged_epochs x energy per epoch.
  double eta_j(int batch_size, double limit_w) const;
  // Expected Default ETA / TTA at (b0, its largest limit), over all b0's runs.
  double default_eta_j() const;
  double default_tta_s() const;
  // Zeus cost per epoch: eta * energy + (1 - eta) * gpu_max_limit_w * time.
  double epoch_cost(double eta, int batch_size, double limit_w) const;
};

RawWorkload raw_workload(const std::string& gpu, const WorkloadSpec& spec);

// The optimum C* (least mean_epochs x epoch_cost over batch sizes whose runs
// all converge; ties keep the higher limit) and where it is.
struct RawOptimum {
  double cost = 0;
  int batch_size = 0;
  double limit_w = 0;
};
RawOptimum raw_optimum(const RawWorkload& w, double eta);

}  // namespace zeus::sim::raw
