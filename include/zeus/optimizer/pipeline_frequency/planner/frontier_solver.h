// The iterative min-cut (Phillips-Dessouky) time-cost tradeoff solver, as lowtime
// runs it: start with every op at its slowest (cheapest) duration, then, one time
// unit at a time, find the minimum cut of the critical DAG with lower bounds and
// speed up its forward ops / slow down its backward ops, until the critical path
// reaches its all-fastest length. Capacities are int64 in 1e-6 J units, so the
// (unique, minimal-source-side) cut does not depend on max-flow details.
// Solving is single-threaded; a Frontier is a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/planner/cost_model.h"

namespace zeus::pipeline_frequency {

// A generic problem: ops with cost curves and AON precedence edges (u before v).
struct FrontierProblem {
  std::vector<CostCurve> ops;
  std::vector<std::pair<int, int>> edges;
};

struct FrontierPoint {
  std::int64_t time = 0;          // critical path length, in units
  double effective_energy = 0.0;  // sum of op costs at this point
  double cost_change = 0.0;       // energy increase from the previous point
  std::int64_t cut_value = 0;     // min-cut value in 1e-6 units (0 for the first point)
  int num_speed_up = 0;           // forward cut ops shortened
  int num_slow_down = 0;          // backward cut ops lengthened
};

// The frontier: point 0 is the all-slowest start (T_max); each later point is
// one solver step. Per-op durations are stored as a change log.
class Frontier {
 public:
  const std::vector<FrontierPoint>& points() const { return points_; }
  std::size_t size() const { return points_.size(); }
  std::int64_t t_max() const { return points_.front().time; }
  std::int64_t t_min_reached() const { return points_.back().time; }
  std::int64_t t_min_bound() const { return t_min_bound_; }  // all-fastest critical path
  // Durations of every op at point i (replays the change log).
  std::vector<std::int64_t> durations(std::size_t i) const;
  // Changes (op, new duration) applied to get from point i-1 to point i.
  std::vector<std::pair<int, std::int64_t>> changes(std::size_t i) const;
  // Why the run stopped before t_min_bound (empty if it reached it).
  const std::string& stop_reason() const { return stop_reason_; }

 private:
  friend class FrontierSolver;
  std::vector<FrontierPoint> points_;
  std::vector<std::int64_t> initial_;
  std::vector<std::size_t> change_begin_;  // per point, index into change_log_
  std::vector<std::pair<int, std::int64_t>> change_log_;
  std::int64_t t_min_bound_ = 0;
  std::string stop_reason_;
};

struct SolverOptions {
  // Called after each step with (steps done, steps expected); may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
  // Check the max-flow/cut bookkeeping every step (slow; for tests).
  bool self_check = false;
};

// Longest path with the given per-op durations (in units).
std::int64_t critical_path_length(const FrontierProblem& problem,
                                  const std::vector<std::int64_t>& durations);

// Solves the whole frontier. kInvalidArgument for a malformed problem (cycle,
// bad op id, empty curve).
Frontier solve_frontier(const FrontierProblem& problem, const SolverOptions& options = {});

}  // namespace zeus::pipeline_frequency
