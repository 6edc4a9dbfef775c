// The Perseus planner: from a stage profile and a pipeline schedule, the whole
// iteration-time vs energy frontier with a GPU-frequency plan for each point,
// plan selection (fastest, minimum energy T*, straggler-aware), and the files
// the CLI reads and writes. Plain values; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/perseus/cost_model.h"
#include "zeus/perseus/dag.h"
#include "zeus/perseus/frontier_solver.h"
#include "zeus/perseus/profile.h"

namespace zeus::perseus {

struct PlannerOptions {
  int microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  double unit_time_s = 0.001;  // τ
  Watts p_blocking{0.0};       // P_b, drawn while a GPU waits
  CostModelKind cost_model = CostModelKind::kExponential;
  bool noise_retry = true;  // see MenuOptions
  std::function<void(std::int64_t, std::int64_t)> progress;
};

// One frontier point in user units.
struct PlanPoint {
  std::int64_t quant_time = 0;  // units of τ
  double time_s = 0.0;          // quant_time * τ
  double energy_j = 0.0;        // effective + S * time_s * P_b (the fixtures' convention)
};

// A solved pipeline. Point 0 is T_max (all slowest); the last is T_min.
class PerseusSolution {
 public:
  const PipelineDag& dag() const { return dag_; }
  const Frontier& frontier() const { return frontier_; }
  // The generic problem solved (one cost curve per op of dag()).
  const FrontierProblem& problem() const { return problem_; }
  const std::vector<PlanPoint>& points() const { return points_; }
  double unit_time_s() const { return unit_time_s_; }
  Watts p_blocking() const { return p_blocking_; }
  // The menu and curve of (stage, instruction).
  const OptionMenu& menu(int stage, Instruction instruction) const;
  const CurveInfo& curve_info(int stage, Instruction instruction) const;
  // Frequencies of every op (indexed like dag().ops) at point i.
  std::vector<Megahertz> frequencies(std::size_t i) const;
  // Energy of every op at its fastest option, at the fastest critical path:
  // the "all max frequency" reference point (time_s, energy_j).
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
  double unit_time_s_ = 0.0;
  Watts p_blocking_{0.0};
};

// Validates options (M >= 1, τ > 0 and finite, P_b >= 0) with kInvalidArgument.
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
// Index for a straggler iteration time T' (seconds). If T' is below T_min, the
// fastest point. Energies compare per iteration including waiting until T'.
std::size_t select_straggler(const std::vector<PlanPoint>& points, double t_prime_s,
                             StragglerRule rule = StragglerRule::kSlowestThatFits);
// Energy of running point i and waiting at P_b until T' (S pipelines stages).
double energy_with_wait(const PlanPoint& point, double t_prime_s, int num_stages, Watts p_blocking);

// ---- Files. ----
// frontier.csv: time,energy for points 1..n (the fixtures' convention: the
// T_max start is not a row). plans.json: every point's frequencies as a change
// log. Both under `dir` (created).
void write_solution(const PerseusSolution& solution, const std::string& dir);

// A solution read back from a directory written by write_solution.
struct StoredSolution {
  int num_stages = 0;
  int num_microbatches = 0;
  std::string schedule;
  double unit_time_s = 0.0;
  double p_blocking_w = 0.0;
  std::vector<PipelineOp> ops;                // in plans.json op order
  std::vector<std::vector<int>> stage_order;  // op ids per stage
  std::vector<PlanPoint> points;
  std::vector<std::vector<std::pair<int, std::int64_t>>> changes;  // (op, MHz) per point
  std::vector<std::int64_t> frequencies(std::size_t i) const;
};
StoredSolution read_solution(const std::string& dir);

// Parses "fastest", "min-energy", "straggler:<seconds>" or "straggler:<x>x"
// (a multiple of T_min) into a point index; kInvalidArgument otherwise.
std::size_t select_target(const std::vector<PlanPoint>& points, std::string_view target);

// The per-stage schedule JSON for point i: {"stages": [{"stage": s,
// "frequencies": [["forward", 1410], ...]}, ...], ...}.
std::string plan_json(const StoredSolution& solution, std::size_t i, std::string_view target);

// A gnuplot script drawing frontier.csv with the all-max-frequency point and T*
// marked; `terminal` is a gnuplot terminal line such as "pngcairo size 1000,650".
std::string frontier_plot_script(const PerseusSolution& solution, const std::string& csv_path,
                                 const std::string& image_path, const std::string& terminal);

// Draws DIR/frontier.png and DIR/frontier.svg from DIR/frontier.csv with
// gnuplot (the scripts stay in DIR). kNotFound when gnuplot is missing.
void render_frontier_plots(const PerseusSolution& solution, const std::string& dir);

}  // namespace zeus::perseus
