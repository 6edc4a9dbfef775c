// The configuration landscape of one (GPU, workload) trace, without any
// search: the expected energy and time to accuracy of every (batch size,
// power limit), its Pareto front, and what an oracle could save over the
// default configuration (the paper's Figures 1, 2, 5 and their appendix
// versions). Pure functions of the trace, thread-safe.
#pragma once

#include <vector>

#include "zeus/sim/trace.h"

namespace zeus::sim::paper {

// One (batch size, power limit) over the trace's runs of that batch size.
struct ConfigPoint {
  int batch_size = 0;
  Milliwatts power_limit{0};
  Watts average_power{0.0};
  int runs = 0;            // training runs of this batch size in the trace
  int runs_converged = 0;  // runs that reach the target within max_epochs
  // Expected energy and time to accuracy: mean epochs to target over the
  // converged runs x energy (time) per epoch; 0 when no run converges.
  Joules eta{0.0};
  Seconds tta{0.0};
  // Spread over the converged runs (fewest and most epochs).
  Joules eta_min{0.0}, eta_max{0.0};
  // Every run converges: the configurations the optimum C*, the Pareto front
  // and the oracle savings range over (as in compute_reference).
  bool feasible() const { return runs > 0 && runs_converged == runs; }
};

// Every configuration of the trace, by ascending batch size and then
// descending power limit (the trace's order).
std::vector<ConfigPoint> configurations(const WorkloadTrace& trace);

// Indices (into `points`) of the feasible points that no other feasible point
// dominates (no more energy and no more time, and less of one), by ascending
// time. Of exact duplicates only the first is kept.
std::vector<std::size_t> pareto_front(const std::vector<ConfigPoint>& points);

// Energy savings available to an oracle (Figure 1): the default configuration
// (b0 at the maximum power limit) against the best batch size at the maximum
// limit, the best limit at b0, and the best of both jointly, each over feasible
// configurations (b0 counts as it is, so none is worse than the default).
struct Opportunity {
  Joules default_eta{0.0};
  Joules best_batch_size_eta{0.0};  // min over feasible b of ETA(b, max limit)
  int best_batch_size = 0;
  Joules best_power_limit_eta{0.0};  // min over limits p of ETA(b0, p)
  Milliwatts best_power_limit{0};
  Joules best_eta{0.0};  // min over all feasible (b, p): C* at eta = 1
  int best_joint_batch_size = 0;
  Milliwatts best_joint_power_limit{0};
};
Opportunity opportunity(const WorkloadTrace& trace);

}  // namespace zeus::sim::paper
