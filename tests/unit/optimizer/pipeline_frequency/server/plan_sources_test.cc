// Plans as data: lowtime's freqs_pipeline_%05d.py read by a strict parser
// (never executed), plan.json and frontier points.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// What lowtime's run_optimization.py writes: "[\n", one repr(list of
// tuples) + ",\n" per stage, "]\n", then three comment lines.
constexpr const char* kLowtimeFile =
    "[\n"
    "[('forward', 1410), ('forward', 1395), ('backward', 1380), ('backward', 1410)],\n"
    "[('forward', 1200), ('backward', 1005), ('forward', 1410), ('backward', 810)],\n"
    "]\n"
    "# Iteration 12 cost change: 3.25\n"
    "# Iteration 12 total cost: 5000.5\n"
    "# Iteration 12 total cost with P2P: 5656.25\n";

TEST(PipelineFrequencyPlanSourcesTest, ReadsLowtimesFormat) {
  const auto plan = parse_lowtime_plan(kLowtimeFile, "freqs_pipeline_00012.py");
  ASSERT_EQ(plan.stages.size(), 2u);
  ASSERT_EQ(plan.stages[0].size(), 4u);
  EXPECT_EQ(plan.stages[0][1], (ScheduleEntry{"forward", Megahertz(1395)}));
  EXPECT_EQ(plan.stages[1][3], (ScheduleEntry{"backward", Megahertz(810)}));
  EXPECT_EQ(plan.iteration.value(), 12);
  EXPECT_DOUBLE_EQ(plan.energy_j.value(), 5656.25);
}

TEST(PipelineFrequencyPlanSourcesTest, AcceptsWhatPythonWouldReadTheSameWay) {
  const auto plan = parse_lowtime_plan(
      "( # stages\n  [[\"forward\", 1_410,], ('backward', 0)],\n  (('forward', 900),),\n)", "p.py");
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0][0].frequency, Megahertz(1410));
  EXPECT_EQ(plan.stages[0][1].frequency, Megahertz(0));
  EXPECT_EQ(plan.stages[1][0].instruction, "forward");
  EXPECT_FALSE(plan.iteration.has_value());
}

TEST(PipelineFrequencyPlanSourcesTest, RefusesAnythingButDataWithLineAndColumn) {
  const auto error_of = [](const std::string& text) {
    try {
      parse_lowtime_plan(text, "f.py");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParse) << text;
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(error_of("__import__('os').system('touch /tmp/pwned')"),
              HasSubstr("f.py:1:1: unexpected '_'"));
  EXPECT_THAT(error_of("[\n[('forward', 1410)],\n[('backward', 14.5)]\n]"), HasSubstr("f.py:3:"));
  EXPECT_THAT(error_of("[[('forward', -5)]]"), HasSubstr("cannot be negative"));
  EXPECT_THAT(error_of("[[('for\\x77ard', 5)]]"), HasSubstr("escapes"));
  EXPECT_THAT(error_of("[[('forward', 1410)]] + [[('b', 1)]]"), HasSubstr("unexpected '+'"));
  EXPECT_THAT(error_of("[[('forward', 1410)]] [[('b', 1)]]"), HasSubstr("after the plan"));
  EXPECT_THAT(error_of("[[('forward', 1410)]"), HasSubstr("expected ',' or ']'"));
  EXPECT_THAT(error_of("[]"), HasSubstr("no stages"));
  EXPECT_THAT(error_of("[[]]"), HasSubstr("stage 0 has no instructions"));
  EXPECT_THAT(error_of("[(('forward', 1))]"), HasSubstr("trailing comma"));
  EXPECT_THAT(error_of("[[('forward', 0123)]]"), HasSubstr("leading zeros"));
  EXPECT_THAT(error_of("[[('forward', 99999999999)]]"), HasSubstr("out of range"));
  EXPECT_THAT(error_of("[[('forward', 1410, 5)]]"), HasSubstr("end of the (instruction"));
  EXPECT_THAT(error_of("[[('forward)]]"), HasSubstr("unterminated"));
  EXPECT_THAT(error_of(""), HasSubstr("expected the plan"));
}

TEST(PipelineFrequencyPlanSourcesTest, PlanFilesFromDiskAndTheirKinds) {
  TempDir dir;
  const std::string py = dir.path() + "/freqs_pipeline_00012.py";
  write_file_atomically(py, kLowtimeFile);
  EXPECT_EQ(solution_kind(py), SolutionKind::kLowtimePlan);
  EXPECT_EQ(read_lowtime_plan(py).stages.size(), 2u);
  const std::string txt = dir.path() + "/plan.txt";
  write_file_atomically(txt, kLowtimeFile);
  EXPECT_THROW(read_lowtime_plan(txt), Error);  // upstream requires .py
  EXPECT_THROW(solution_kind(txt), Error);
  EXPECT_THROW(solution_kind(dir.path() + "/missing.py"), Error);

  const std::string sol = dir.path() + "/sol";
  testing::write_two_stage_frontier(sol);
  EXPECT_EQ(solution_kind(sol), SolutionKind::kFrontier);
  EXPECT_EQ(solution_kind(sol + "/plans.json"), SolutionKind::kFrontier);
  EXPECT_EQ(frontier_file(sol), sol + "/plans.json");
  const auto frontier = pipeline_frequency::read_solution(sol);
  const std::size_t fastest = pipeline_frequency::select_fastest(frontier.points);
  const auto plan = stage_plan(frontier, fastest);
  ASSERT_EQ(plan.size(), 2u);
  ASSERT_EQ(plan[0].size(), 6u);  // 3 microbatches, forward and backward
  // 1F1B: stage 0 runs F0 F1 B0 F2 B1 B2; stage 1 alternates.
  EXPECT_EQ(plan[0][0].instruction, "forward");
  EXPECT_EQ(plan[0][2].instruction, "backward");
  EXPECT_EQ(plan[1][1].instruction, "backward");
  // The same point through `zeus perseus plan`'s JSON.
  const std::string pj = dir.path() + "/plan.json";
  write_file_atomically(pj, pipeline_frequency::plan_json(frontier, fastest, "fastest"));
  EXPECT_EQ(solution_kind(pj), SolutionKind::kPlan);
  EXPECT_EQ(parse_plan_json(read_file(pj), pj), plan);
  EXPECT_THROW(parse_plan_json(R"({"stages": [{"stage": 1, "frequencies": [["f", 1]]}]})", "x"),
               Error);
}

}  // namespace
}  // namespace zeus::pipeline_frequency
