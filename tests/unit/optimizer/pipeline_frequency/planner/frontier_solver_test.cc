// The hand-checkable instances of the reference (§5.1) with exact frontiers.
#include "zeus/optimizer/pipeline_frequency/planner/frontier_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/optimizer/pipeline_frequency/planner/planner_test_helpers.h"
#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::energies;
using testing::table;
using testing::times;

TEST(FrontierSolverTest, ChainT1HasExactFrontier) {
  FrontierProblem p;
  p.ops = {table({{3, 30}, {4, 20}, {5, 15}}), table({{2, 20}, {3, 12}})};
  p.edges = {{0, 1}};
  const Frontier f = solve_frontier(p);
  EXPECT_THAT(times(f), ElementsAre(8, 7, 6, 5));
  EXPECT_THAT(energies(f), ElementsAre(27, 32, 40, 50));
  testing::expect_frontier_invariants(p, f);
}

TEST(FrontierSolverTest, ForkJoinT2SpeedsUpTwoParallelOpsInOneCut) {
  FrontierProblem p;
  p.ops = {table({{4, 17}, {5, 13}, {6, 10}}), table({{2, 11}, {3, 8}, {4, 6}, {5, 5}})};
  const Frontier f = solve_frontier(p);
  EXPECT_THAT(times(f), ElementsAre(6, 5, 4));
  EXPECT_THAT(energies(f), ElementsAre(15, 18, 23));
  EXPECT_EQ(f.points()[2].num_speed_up, 2);
  EXPECT_THAT(f.durations(2), ElementsAre(4, 4));
  testing::expect_frontier_invariants(p, f);
}

TEST(FrontierSolverTest, BridgeT3NeedsABackwardCutArc) {
  // X Y Z W V = 0..4, durations 1..3, cost 10 + slope * (3 - d).
  auto op = [](double slope) { return table({{1, 10 + 2 * slope}, {2, 10 + slope}, {3, 10}}); };
  FrontierProblem p;
  p.ops = {op(3), op(4), op(1), op(4), op(4)};
  p.edges = {{0, 3}, {0, 2}, {2, 4}, {1, 4}};
  const Frontier f = solve_frontier(p);
  EXPECT_THAT(times(f), ElementsAre(9, 8, 7, 6, 5, 4, 3));
  EXPECT_THAT(energies(f), ElementsAre(50, 51, 52, 55, 59, 65, 74));
  // At T=4: X and V sped up, Z lengthened from 1 to 2.
  EXPECT_THAT(f.durations(5), ElementsAre(1, 3, 2, 3, 1));
  EXPECT_EQ(f.points()[5].num_slow_down, 1);
  testing::expect_frontier_invariants(p, f);
}

// The 2-stage x 2-microbatch 1F1B pipeline of T4, through the full planner.
StageProfile t4_profile() {
  std::vector<ProfileEntry> e;
  auto add = [&](int stage, Instruction ins, std::map<int, double> menu) {
    for (const auto& [d, c] : menu) {
      // Unit time 1 s; times slightly above the integer so floor gives d.
      e.push_back({stage, ins, Megahertz(2000 - 100 * d), Seconds(d + 0.25), Joules(c)});
    }
  };
  add(0, Instruction::kForward, {{1, 10}, {2, 7}});
  add(0, Instruction::kBackward, {{2, 20}, {3, 16}, {4, 14}});
  add(1, Instruction::kForward, {{2, 20}, {3, 16}});
  add(1, Instruction::kBackward, {{4, 40}, {5, 34}, {6, 31}});
  return StageProfile::from_entries(e, "t4");
}

PerseusSolution solve_t4(double p_blocking) {
  PlannerOptions o;
  o.microbatches = 2;
  o.unit_time = Seconds(1.0);
  o.p_blocking = Watts(p_blocking);
  o.cost_model = CostModelKind::kConvex;
  return solve_pipeline(t4_profile(), o);
}

TEST(FrontierSolverTest, PipelineT4IntrinsicBloatWithoutBlockingPower) {
  const auto sol = solve_t4(0.0);
  std::vector<double> e;
  std::vector<std::int64_t> t;
  for (const auto& p : sol.points()) {
    e.push_back(p.energy.value());
    t.push_back(p.quant_time);
  }
  EXPECT_THAT(t, ElementsAre(24, 23, 22, 21, 20, 19, 18, 17, 16, 15));
  EXPECT_THAT(e, ElementsAre(136, 138, 141, 144, 147, 151, 155, 159, 165, 171));
  EXPECT_DOUBLE_EQ(sol.all_max_frequency_point().energy.value(), 180);
  EXPECT_EQ(sol.all_max_frequency_point().quant_time, 15);
  // Plan at T=15: F00=1 F01=2 B00=4 B01=2 F10=2 B10=4 F11=2 B11=4.
  const auto d = sol.frontier().durations(sol.points().size() - 1);
  std::map<std::string, std::int64_t> by_name;
  for (std::size_t k = 0; k < d.size(); ++k) {
    const auto& op = sol.dag().ops[k];
    by_name[std::string(op.instruction == Instruction::kForward ? "F" : "B") +
            std::to_string(op.stage) + std::to_string(op.microbatch)] = d[k];
  }
  EXPECT_EQ(by_name["F00"], 1);
  EXPECT_EQ(by_name["F01"], 2);
  EXPECT_EQ(by_name["B00"], 4);
  EXPECT_EQ(by_name["B01"], 2);
  EXPECT_EQ(by_name["F10"], 2);
  EXPECT_EQ(by_name["B10"], 4);
  EXPECT_EQ(by_name["F11"], 2);
  EXPECT_EQ(by_name["B11"], 4);
  // Frequencies: the slowest option meeting each duration.
  const auto f = sol.frequencies(sol.points().size() - 1);
  for (std::size_t k = 0; k < d.size(); ++k) EXPECT_EQ(f[k].value(), 2000 - 100 * d[k]);
}

TEST(FrontierSolverTest, PipelineT4WithBlockingPowerFindsTStarAndStragglerPlans) {
  const auto sol = solve_t4(5.0);
  std::vector<double> e;
  for (const auto& p : sol.points()) e.push_back(p.energy.value());
  EXPECT_THAT(e, ElementsAre(226, 223, 221, 219, 217, 216, 215, 214, 215, 216));
  EXPECT_DOUBLE_EQ(sol.all_max_frequency_point().energy.value(), 240);
  const auto& pts = sol.points();
  EXPECT_EQ(pts[select_min_energy(pts)].quant_time, 17);
  EXPECT_EQ(pts[select_fastest(pts)].quant_time, 15);
  const std::size_t artifact = select_straggler(pts, Seconds(20.0), StragglerRule::kArtifact);
  const std::size_t slowest = select_straggler(pts, Seconds(20.0), StragglerRule::kSlowestThatFits);
  EXPECT_EQ(pts[artifact].quant_time, 17);
  EXPECT_EQ(pts[slowest].quant_time, 20);
  EXPECT_DOUBLE_EQ(energy_with_wait(pts[artifact], Seconds(20.0), 2, Watts(5)).value(), 244);
  EXPECT_DOUBLE_EQ(energy_with_wait(pts[slowest], Seconds(20.0), 2, Watts(5)).value(), 217);
  // A straggler slower than T_max takes the slowest plan; one faster than
  // T_min cannot be met and takes the fastest.
  EXPECT_EQ(pts[select_straggler(pts, Seconds(100.0))].quant_time, 24);
  EXPECT_EQ(pts[select_straggler(pts, Seconds(1.0))].quant_time, 15);
  EXPECT_EQ(pts[select_target(pts, "straggler:20")].quant_time, 20);
  EXPECT_EQ(pts[select_target(pts, "straggler:1.2x")].quant_time, 18);
  EXPECT_EQ(pts[select_target(pts, "min-energy")].quant_time, 17);
  EXPECT_THROW(select_target(pts, "straggler:abc"), Error);
  EXPECT_THROW(select_target(pts, "slowest"), Error);
}

TEST(FrontierSolverTest, FixedAndSingleOpProblems) {
  FrontierProblem p;
  p.ops = {table({{3, 5}})};
  const Frontier f = solve_frontier(p);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.t_max(), 3);
  FrontierProblem empty;
  EXPECT_EQ(solve_frontier(empty).t_max(), 0);
}

TEST(FrontierSolverTest, RejectsCyclesAndBadEdges) {
  FrontierProblem p;
  p.ops = {table({{1, 2}, {2, 1}}), table({{1, 2}, {2, 1}})};
  p.edges = {{0, 1}, {1, 0}};
  EXPECT_THROW(solve_frontier(p), Error);
  p.edges = {{0, 5}};
  EXPECT_THROW(solve_frontier(p), Error);
}

}  // namespace
}  // namespace zeus::pipeline_frequency
