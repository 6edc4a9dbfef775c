// The Perseus planner: from a stage profile and a pipeline schedule, the whole
// iteration-time vs energy frontier with a GPU-frequency plan for each point,
// an estimate of the work before it starts, and plan selection (fastest,
// minimum energy T*, straggler-aware). Files: plans_json.h; figures:
// frontier_plot.h. Plain values; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/planner/cost_model.h"
#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/optimizer/pipeline_frequency/planner/frontier_solver.h"
#include "zeus/optimizer/pipeline_frequency/planner/profile.h"

namespace zeus::pipeline_frequency {

// What one solve may take before solve_pipeline refuses it (kInvalidArgument
// with the estimate). The defaults keep a solve within this machine.
struct SolveLimits {
  std::uint64_t max_memory_bytes = 0;  // 0: 80% of this machine's physical memory
  Seconds max_time{24.0 * 3600.0};     // estimated solver time; 0 = no limit
};

// The largest sensible inputs: beyond them nothing physical is being planned.
inline constexpr double kMaxUnitTimeS = 3600.0;
inline constexpr double kMaxBlockingPowerW = 1e4;

// The size of a solve, known before it starts: the graph (from stages and
// microbatches), the number of steps T_max - T_min (from the critical paths
// with every op at its slowest and fastest option), memory and time.
struct SolveEstimate {
  int stages = 0;
  int microbatches = 0;
  Seconds unit_time{0.0};
  std::int64_t ops = 0, nodes = 0, arcs = 0;  // the min-cut graph
  std::int64_t t_max = 0, t_min = 0;          // in units of τ (0 until known)
  std::int64_t steps = 0;                     // t_max - t_min
  std::uint64_t memory_bytes = 0;             // estimated peak
  Seconds time{0.0};                          // estimated solver time on this machine
  std::string summary() const;                // one line for people
};

struct PlannerOptions {
  int microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  Seconds unit_time{0.001};  // τ
  Watts p_blocking{0.0};     // P_b, drawn while a GPU waits
  CostModelKind cost_model = CostModelKind::kExponential;
  bool noise_retry = true;  // see MenuOptions
  SolveLimits limits;
  // Called once the estimate is known and within limits, before solving.
  std::function<void(const SolveEstimate&)> on_estimate;
  // Called after each solver step with (steps done, steps expected).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

// Builds the menus and the pipeline's critical paths (cheap: no cost curves,
// no solving) and estimates the solve. Validates options like solve_pipeline.
// Refuses (kInvalidArgument) only a graph too large to even measure.
SolveEstimate estimate_solve(const StageProfile& profile, const PlannerOptions& options);

// kInvalidArgument with the estimate and what to change when `estimate`
// exceeds `limits`.
void check_solve_limits(const SolveEstimate& estimate, const SolveLimits& limits);

// One frontier point in user units.
struct PlanPoint {
  std::int64_t quant_time = 0;  // units of τ
  Seconds time{0.0};            // quant_time * τ
  Joules energy{0.0};           // effective + S * time * P_b (the fixtures' convention)
};

// A solved pipeline. Point 0 is T_max (all slowest); the last is T_min.
class PerseusSolution {
 public:
  const PipelineDag& dag() const { return dag_; }
  const Frontier& frontier() const { return frontier_; }
  // The generic problem solved (one cost curve per op of dag()).
  const FrontierProblem& problem() const { return problem_; }
  const std::vector<PlanPoint>& points() const { return points_; }
  Seconds unit_time() const { return unit_time_; }
  Watts p_blocking() const { return p_blocking_; }
  CostModelKind cost_model() const { return cost_model_; }
  const SolveEstimate& estimate() const { return estimate_; }
  // The menu and curve of (stage, instruction).
  const OptionMenu& menu(int stage, Instruction instruction) const;
  const CurveInfo& curve_info(int stage, Instruction instruction) const;
  // Frequencies of every op (indexed like dag().ops) at point i.
  std::vector<Megahertz> frequencies(std::size_t i) const;
  // Energy of every op at its fastest option, at the fastest critical path:
  // the "all max frequency" reference point.
  PlanPoint all_max_frequency_point() const { return all_max_; }

 private:
  friend PerseusSolution solve_pipeline(const StageProfile&, const PlannerOptions&);
  PipelineDag dag_;
  std::vector<OptionMenu> menus_;  // index stage*2 + instruction
  std::vector<CurveInfo> infos_;
  FrontierProblem problem_;
  Frontier frontier_;
  std::vector<PlanPoint> points_;
  PlanPoint all_max_;
  Seconds unit_time_{0.0};
  Watts p_blocking_{0.0};
  CostModelKind cost_model_ = CostModelKind::kExponential;
  SolveEstimate estimate_;
};

// Validates options (1 <= M, 0 < τ <= kMaxUnitTimeS, 0 <= P_b <=
// kMaxBlockingPowerW, all finite) with kInvalidArgument, estimates the solve
// and refuses it beyond options.limits, then solves. Every point is finite.
PerseusSolution solve_pipeline(const StageProfile& profile, const PlannerOptions& options);

// ---- Plan selection over a frontier (points ordered slowest first). ----
enum class StragglerRule {
  kSlowestThatFits,  // largest T <= T': never worse under the energy model
  kArtifact,         // the artifact notebook: min refined energy among T <= T'
};
// Index of the fastest point (T_min).
std::size_t select_fastest(const std::vector<PlanPoint>& points);
// Index of the minimum refined energy point (T*); ties pick the faster point.
std::size_t select_min_energy(const std::vector<PlanPoint>& points);
// Index for a straggler iteration time T'. If T' is below T_min, the fastest
// point. Energies compare per iteration including waiting until T'.
std::size_t select_straggler(const std::vector<PlanPoint>& points, Seconds t_prime,
                             StragglerRule rule = StragglerRule::kSlowestThatFits);
// Energy of running point i and waiting at P_b until T' (S pipelines stages).
Joules energy_with_wait(const PlanPoint& point, Seconds t_prime, int num_stages, Watts p_blocking);

// Parses "fastest", "min-energy", "straggler:<seconds>" or "straggler:<x>x"
// (a multiple of T_min) into a point index; kInvalidArgument otherwise.
std::size_t select_target(const std::vector<PlanPoint>& points, std::string_view target);

}  // namespace zeus::pipeline_frequency
