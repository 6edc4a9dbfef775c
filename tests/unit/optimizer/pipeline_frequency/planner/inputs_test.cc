// Profiles, option menus, cost models, DAG builders and solution files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "unit/optimizer/pipeline_frequency/planner/planner_test_helpers.h"
#include "zeus/optimizer/pipeline_frequency/planner/cost_model.h"
#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/optimizer/pipeline_frequency/planner/profile.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PlannerProfileTest, ParsesAndRejectsBadInput) {
  const auto p = StageProfile::parse(
      "stage,instruction,frequency,time,energy\n0,forward,1410,0.1,5\n0,backward,1410,0.2,9\n",
      "p.csv");
  EXPECT_EQ(p.num_stages(), 1);
  EXPECT_EQ(p.entries_for(0, Instruction::kBackward).size(), 1u);
  EXPECT_THAT(error_of([] { StageProfile::parse("stage,instruction,time,energy\n", "x.csv"); }),
              HasSubstr("frequency"));
  EXPECT_THAT(error_of([] {
                StageProfile::parse("stage,instruction,frequency,time,energy\n0,forward,1410,0,5\n",
                                    "x.csv");
              }),
              HasSubstr("x.csv:2"));
  EXPECT_THAT(error_of([] {
                StageProfile::parse(
                    "stage,instruction,frequency,time,energy\n0,forward,1410,-1,5\n", "x.csv");
              }),
              HasSubstr("positive"));
  // Stage 1 missing between 0 and 2.
  EXPECT_THAT(error_of([] {
                StageProfile::parse(
                    "stage,instruction,frequency,time,energy\n"
                    "0,forward,1,1,1\n0,backward,1,1,1\n2,forward,1,1,1\n"
                    "2,backward,1,1,1\n",
                    "x.csv");
              }),
              HasSubstr("stage 1"));
  EXPECT_THAT(error_of([] {
                StageProfile::parse("stage,instruction,frequency,time,energy\n0,sideways,1,1,1\n",
                                    "x.csv");
              }),
              HasSubstr("sideways"));
  EXPECT_THAT(
      error_of([] { StageProfile::parse("stage,instruction,frequency,time,energy\n", "e"); }),
      HasSubstr("no measurements"));
}

// lowtime's own knob-mapping test (reference T5), with unit time 1.
TEST(PlannerMenuTest, FiltersDominatedOptionsAndMapsDurationsToSlowestFrequency) {
  std::vector<ProfileEntry> e = {
      {0, Instruction::kForward, Megahertz(1), Seconds(123), Joules(3.0)},
      {0, Instruction::kForward, Megahertz(2), Seconds(456), Joules(2.0)},
      {0, Instruction::kForward, Megahertz(3), Seconds(789), Joules(1.0)},
      {0, Instruction::kForward, Megahertz(4), Seconds(234), Joules(3.1)}};
  const auto menu = OptionMenu::build(e, {Seconds(1.0), Watts(0), false});
  ASSERT_EQ(menu.options().size(), 3u);
  EXPECT_EQ(menu.frequency_for(20).value(), 1);
  EXPECT_EQ(menu.frequency_for(455).value(), 1);
  EXPECT_EQ(menu.frequency_for(456).value(), 2);
  EXPECT_EQ(menu.frequency_for(788).value(), 2);
  EXPECT_EQ(menu.frequency_for(789).value(), 3);
  EXPECT_EQ(menu.frequency_for(5000).value(), 3);
  EXPECT_EQ(menu.max_duration(), 789);
}

TEST(PlannerMenuTest, QuantizesWithFloorKeepsLargerEnergyOnTiesAndSubtractsBlockingPower) {
  std::vector<ProfileEntry> e = {
      {0, Instruction::kForward, Megahertz(1500), Seconds(0.0109), Joules(10.0)},
      {0, Instruction::kForward, Megahertz(1400), Seconds(0.0102), Joules(10.5)},
      {0, Instruction::kForward, Megahertz(1300), Seconds(0.0125), Joules(9.0)}};
  // 1500 and 1400 both quantize to 10 ms; 1400 is faster and costlier, both survive
  // the Pareto filter, and the tie keeps the larger energy (1400's).
  const auto menu = OptionMenu::build(e, {Seconds(0.001), Watts(100), false});
  ASSERT_EQ(menu.options().size(), 2u);
  EXPECT_EQ(menu.options()[0].duration, 10);
  EXPECT_EQ(menu.options()[0].frequency.value(), 1400);
  EXPECT_NEAR(menu.options()[0].effective.value(), 10.5 - 100 * 0.010, 1e-12);
  EXPECT_EQ(menu.options()[1].duration, 12);
  EXPECT_THAT(error_of([&] {
                OptionMenu::build(e, {Seconds(1.0), Watts(0), false});
              }),
              HasSubstr("unit time"));
  EXPECT_THAT(error_of([&] {
                OptionMenu::build(e, {Seconds(0.0), Watts(0), false});
              }),
              HasSubstr("positive"));
}

TEST(PlannerCostModelTest, ConvexHullDropsPointsAboveTheHullAndInterpolates) {
  const auto c = convex_hull_curve({1, 2, 4}, {10, 9, 4});  // (2,9) lies above 1->4
  EXPECT_EQ(c.min_duration(), 1);
  EXPECT_EQ(c.max_duration(), 4);
  EXPECT_THAT(c.costs(), ElementsAre(10, 8, 6, 4));
  EXPECT_TRUE(c.is_convex_non_increasing());
  EXPECT_FALSE(CostCurve(0, {1, 2}).is_convex_non_increasing());
}

TEST(PlannerCostModelTest, ExponentialFitRecoversAKnownCurve) {
  std::vector<double> x, y;
  for (int d = 50; d <= 80; d += 2) {
    x.push_back(d);
    y.push_back(30.0 * std::exp(-0.05 * (d - 50)) + 12.0);
  }
  const auto fit = fit_exponential(x, y, Seconds(0.001));
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.b, -0.05, 1e-6);
  EXPECT_NEAR(fit.a * std::exp(fit.b * (50 - fit.d0)), 30.0, 1e-4);
  EXPECT_NEAR(fit.c, 12.0, 1e-4);
  EXPECT_LT(fit.mse, 1e-12);
  // Too few points or an increasing curve: rejected (the planner falls back).
  EXPECT_FALSE(fit_exponential({1, 2, 3}, {3, 2, 1}, Seconds(0.001)).ok);
  std::vector<double> up;
  for (double v : x) up.push_back(std::exp(0.05 * (v - 50)));
  EXPECT_FALSE(fit_exponential(x, up, Seconds(0.001)).ok);
}

TEST(PlannerCostModelTest, ExponentialFallsBackToConvexForTinyMenus) {
  std::vector<ProfileEntry> e = {
      {0, Instruction::kForward, Megahertz(2), Seconds(1.5), Joules(3.0)},
      {0, Instruction::kForward, Megahertz(1), Seconds(2.5), Joules(2.0)}};
  const auto menu = OptionMenu::build(e, {Seconds(1.0), Watts(0), true});
  CurveInfo info;
  const auto c = build_cost_curve(menu, CostModelKind::kExponential, Seconds(1.0), &info);
  EXPECT_EQ(info.used, CostModelKind::kConvex);
  EXPECT_THAT(c.costs(), ElementsAre(3.0, 2.0));
}

TEST(PlannerDagTest, OneFOneBOrderMatchesTheReferenceTable) {
  auto names = [](int s) {
    std::string out;
    for (const auto& [ins, m] : one_f_one_b_order(s, 4, 6)) {
      out += (ins == Instruction::kForward ? "F" : "B") + std::to_string(m) + " ";
    }
    return out;
  };
  EXPECT_EQ(names(0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  EXPECT_EQ(names(1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
  EXPECT_EQ(names(2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5 ");
  EXPECT_EQ(names(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
}

TEST(PlannerDagTest, SizesAndTerminalsOfEightByThirtyTwo) {
  const auto dag = PipelineDag::build(8, 32, PipelineSchedule::k1F1B);
  EXPECT_EQ(dag.ops.size(), 512u);
  EXPECT_EQ(dag.edges.size() + 2, 954u);  // + source and sink edges
  const auto g = AoaGraph::from_aon(static_cast<int>(dag.ops.size()), dag.edges);
  EXPECT_EQ(g.num_nodes, 1028);
  EXPECT_EQ(g.num_arcs(), 1468);
  std::vector<int> indeg(dag.ops.size()), outdeg(dag.ops.size());
  for (const auto& [u, v] : dag.edges) {
    ++outdeg[static_cast<std::size_t>(u)];
    ++indeg[static_cast<std::size_t>(v)];
  }
  for (std::size_t k = 0; k < dag.ops.size(); ++k) {
    const auto& op = dag.ops[k];
    const bool f00 = op.stage == 0 && op.instruction == Instruction::kForward && op.microbatch == 0;
    const bool b0last =
        op.stage == 0 && op.instruction == Instruction::kBackward && op.microbatch == 31;
    EXPECT_EQ(indeg[k] == 0, f00);
    EXPECT_EQ(outdeg[k] == 0, b0last);
  }
  for (int e = 0; e < g.num_arcs(); ++e) {
    EXPECT_LT(g.tail[static_cast<std::size_t>(e)], g.head[static_cast<std::size_t>(e)]);
  }
  EXPECT_THROW(PipelineDag::build(8, 0, PipelineSchedule::k1F1B), Error);
  EXPECT_THROW(PipelineDag::build(0, 4, PipelineSchedule::kGPipe), Error);
}

TEST(PlannerDagTest, GPipeRunsAllForwardsThenBackwardsInReverse) {
  const auto dag = PipelineDag::build(2, 3, PipelineSchedule::kGPipe);
  std::string out;
  for (int id : dag.stage_order[1]) {
    const auto& op = dag.ops[static_cast<std::size_t>(id)];
    out += (op.instruction == Instruction::kForward ? "F" : "B") + std::to_string(op.microbatch);
  }
  EXPECT_EQ(out, "F0F1F2B2B1B0");
}

TEST(PlannerTest, RejectsBadOptions) {
  const auto p = StageProfile::parse(
      "stage,instruction,frequency,time,energy\n0,forward,1410,0.1,5\n0,backward,1410,0.2,9\n",
      "p.csv");
  PlannerOptions o;
  o.microbatches = 0;
  EXPECT_THAT(error_of([&] { solve_pipeline(p, o); }), HasSubstr("microbatches"));
  o.microbatches = 2;
  o.unit_time = Seconds(-1);
  EXPECT_THAT(error_of([&] { solve_pipeline(p, o); }), HasSubstr("unit-time"));
  o.unit_time = Seconds(std::nan(""));
  EXPECT_THROW(solve_pipeline(p, o), Error);
}

TEST(PlannerTest, SolutionFilesRoundTripIntoPerStagePlans) {
  const auto profile =
      StageProfile::read_file(testing::fixture("stage_profile/bloom+a100_sxm_bf16.csv"));
  PlannerOptions o;
  o.microbatches = 4;
  o.unit_time = Seconds(0.001);
  o.p_blocking = Watts(83.64);
  o.cost_model = CostModelKind::kConvex;
  const auto sol = solve_pipeline(profile, o);
  const testing::TempDir tmp;
  const std::string dir = tmp.path() + "/solution";
  write_solution(sol, dir);
  const std::string csv = read_file(dir + "/frontier.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(sol.points().size()));
  const auto stored = read_solution(dir);
  ASSERT_EQ(stored.points.size(), sol.points().size());
  for (std::size_t i = 0; i < sol.points().size(); i += 7) {
    const auto f = sol.frequencies(i);
    const auto g = stored.frequencies(i);
    for (std::size_t k = 0; k < f.size(); ++k) ASSERT_EQ(f[k], g[k]);
  }
  const std::size_t i = select_target(stored.points, "fastest");
  const auto j = nlohmann::json::parse(plan_json(stored, i, "fastest"));
  ASSERT_EQ(j.at("stages").size(), 8u);
  const auto& s0 = j.at("stages").at(0).at("frequencies");
  ASSERT_EQ(s0.size(), 8u);  // 4 forwards + 4 backwards in 1F1B order
  EXPECT_EQ(s0.at(0).at(0), "forward");
  EXPECT_EQ(s0.at(4).at(0), "backward");
  EXPECT_GT(s0.at(0).at(1).get<int>(), 0);
  EXPECT_THROW(read_solution(dir + "/missing"), Error);
  write_file_atomically(dir + "/plans.json", "{\"format\": 3}");
  EXPECT_THAT(error_of([&] { read_solution(dir); }), HasSubstr("plans.json"));
}

}  // namespace
}  // namespace zeus::pipeline_frequency
