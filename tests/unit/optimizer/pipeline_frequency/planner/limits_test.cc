// Work estimates and limits, deep graphs, and physically bounded inputs: a
// solve that cannot finish is refused before it starts, one that can never
// overflows the stack, and no accepted input yields a non-finite result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "support/error_of.h"
#include "unit/optimizer/pipeline_frequency/planner/planner_test_helpers.h"
#include "util/json.h"
#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

StageProfile fixture_profile() {
  return StageProfile::read_file(testing::fixture("stage_profile/gpt3-175b+a100_sxm_bf16.csv"));
}

PlannerOptions fixture_options(int microbatches) {
  PlannerOptions o;
  o.microbatches = microbatches;
  o.unit_time = Seconds(0.001);
  o.p_blocking = Watts(83.64);
  o.cost_model = CostModelKind::kConvex;
  return o;
}

using zeus::testing::error_of;

// Runs `f` on a thread with a 256 KiB stack: recursion as deep as the graph
// would overflow it and crash the test.
void on_small_stack(const std::function<void()>& f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  std::function<void()> copy = f;
  ASSERT_EQ(pthread_create(&thread, &attr, body, &copy), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
}

TEST(PlannerDeepGraphTest, AChainOfAHundredThousandOpsSolvesOnASmallStack) {
  // Every augmenting path of the one step runs the whole chain (200k nodes).
  constexpr int kOps = 100'000;
  FrontierProblem p;
  p.ops.assign(kOps, testing::table({{3, 1.0}}));
  p.ops[kOps / 2] = testing::table({{1, 5.0}, {2, 2.0}});
  for (int i = 0; i + 1 < kOps; ++i) p.edges.emplace_back(i, i + 1);
  Frontier f;
  on_small_stack([&] { f = solve_frontier(p); });
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.t_max(), 3LL * (kOps - 1) + 2);
  EXPECT_EQ(f.t_min_reached(), 3LL * (kOps - 1) + 1);
  EXPECT_EQ(f.stop_reason(), "");
  EXPECT_DOUBLE_EQ(f.points()[1].cost_change, 3.0);
}

TEST(PlannerEstimateTest, MatchesTheGraphAndTheStepsOfTheSolve) {
  const auto profile = fixture_profile();
  const auto o = fixture_options(12);
  const auto e = estimate_solve(profile, o);
  const auto dag = PipelineDag::build(8, 12, PipelineSchedule::k1F1B);
  const auto g = AoaGraph::from_aon(static_cast<int>(dag.ops.size()), dag.edges);
  EXPECT_EQ(e.ops, 192);
  EXPECT_EQ(e.nodes, g.num_nodes);
  EXPECT_EQ(e.arcs, g.num_arcs() + 2);  // + the solver's two source/sink arcs
  EXPECT_EQ(e.t_max, 3457);             // the fixture README's T_max and T_min
  EXPECT_EQ(e.t_min, 2818);
  EXPECT_EQ(e.steps, 639);
  EXPECT_GT(e.memory_bytes, 0u);
  EXPECT_GT(e.time.count(), 0.0);
  const auto sol = solve_pipeline(profile, o);
  EXPECT_EQ(static_cast<std::int64_t>(sol.points().size()) - 1, e.steps);
  EXPECT_EQ(sol.estimate().steps, e.steps);
  EXPECT_THAT(e.summary(), AllOf(HasSubstr("639 steps"), HasSubstr("192 ops")));
}

TEST(PlannerEstimateTest, ATinyUnitTimeIsRefusedBeforeAnyWorkWithTheEstimate) {
  auto o = fixture_options(30000);
  o.unit_time = Seconds(1e-9);
  bool progressed = false, estimated = false;
  o.progress = [&](std::int64_t, std::int64_t) { progressed = true; };
  o.on_estimate = [&](const SolveEstimate&) { estimated = true; };
  const Error e = error_of([&] { solve_pipeline(fixture_profile(), o); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.what()),
              AllOf(HasSubstr("refusing to solve"), HasSubstr("memory"), HasSubstr("steps"),
                    HasSubstr("--unit-time"), HasSubstr("480000 ops")));
  EXPECT_FALSE(progressed);
  EXPECT_FALSE(estimated);
}

TEST(PlannerEstimateTest, LimitsOnMemoryAndTimeAreEachEnforced) {
  const auto profile = fixture_profile();
  auto o = fixture_options(12);
  o.limits.max_memory_bytes = 1000;
  EXPECT_THAT(error_of([&] { solve_pipeline(profile, o); }).what(), HasSubstr("memory"));
  o.limits.max_memory_bytes = 0;
  o.limits.max_time = Seconds(1e-6);
  EXPECT_THAT(error_of([&] { solve_pipeline(profile, o); }).what(), HasSubstr("longer"));
  o.limits.max_time = Seconds(0);  // no limit
  int estimates = 0;
  o.on_estimate = [&](const SolveEstimate& e) {
    ++estimates;
    EXPECT_EQ(e.steps, 639);
  };
  EXPECT_EQ(solve_pipeline(profile, o).points().size(), 640u);
  EXPECT_EQ(estimates, 1);
}

TEST(PlannerOptionsTest, OutOfRangeOptionsAreRejectedNotPropagated) {
  const auto profile = fixture_profile();
  for (double pb : {1e308, -1.0, std::nan(""), HUGE_VAL, 1e4 + 1}) {
    auto o = fixture_options(2);
    o.p_blocking = Watts(pb);
    const Error e = error_of([&] { solve_pipeline(profile, o); });
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << pb;
    EXPECT_THAT(e.what(), HasSubstr("--p-blocking")) << pb;
  }
  for (double tau : {0.0, -1.0, std::nan(""), HUGE_VAL, 3601.0}) {
    auto o = fixture_options(2);
    o.unit_time = Seconds(tau);
    EXPECT_THAT(error_of([&] { solve_pipeline(profile, o); }).what(), HasSubstr("--unit-time"))
        << tau;
  }
  // The largest accepted blocking power still gives finite results.
  auto o = fixture_options(2);
  o.p_blocking = Watts(1e4);
  const auto sol = solve_pipeline(profile, o);
  for (const auto& p : sol.points()) {
    ASSERT_TRUE(std::isfinite(p.energy.value()));
  }
}

constexpr const char* kHeader = "stage,instruction,frequency,time,energy\n";

std::string profile_with(const std::string& extra_row) {
  return std::string(kHeader) + "0,forward,1410,0.1,5\n0,backward,1410,0.2,9\n" + extra_row;
}

TEST(PlannerProfileBoundsTest, ImpossibleNumbersAreParseErrorsNamingTheLine) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"0,forward,1200,0.1,1e308\n", "energy"},
      {"0,forward,1200,inf,5\n", "p.csv:4"},
      {"0,forward,1200,nan,5\n", "p.csv:4"},
      {"0,forward,1200,1e6,5\n", "time"},
      {"0,forward,1200,0.1,-5\n", "energy"},
      {"0,forward,100001,0.1,5\n", "frequency"},
      {"0,forward,0,0.1,5\n", "frequency"},
      {"10000,forward,1200,0.1,5\n", "stage"},
      {"0,forward,1200,0.001,500\n", "average power"},  // 500 kW
      {"0,forward,99999999999999999999,0.1,5\n", "p.csv:4"},
  };
  for (const auto& [row, needle] : rows) {
    const std::string& line = row;  // clang 14 cannot capture a structured binding
    const Error e = error_of([&] { StageProfile::parse(profile_with(line), "p.csv"); });
    EXPECT_EQ(e.code(), ErrorCode::kParse) << row;
    EXPECT_THAT(e.what(), AllOf(HasSubstr("p.csv:4"), HasSubstr(needle))) << row;
  }
}

TEST(PlannerProfileBoundsTest, ConflictingDuplicateRowsAreRejectedIdenticalOnesDropped) {
  const Error e =
      error_of([] { StageProfile::parse(profile_with("0,forward,1410,0.1,6\n"), "p.csv"); });
  EXPECT_EQ(e.code(), ErrorCode::kParse);
  EXPECT_THAT(e.what(),
              AllOf(HasSubstr("p.csv:4"), HasSubstr("measured twice"), HasSubstr("1410 MHz")));
  const auto same = StageProfile::parse(profile_with("0,forward,1410,0.1,5\n"), "p.csv");
  EXPECT_EQ(same.entries_for(0, Instruction::kForward).size(), 1u);
  // Through the API too.
  std::vector<ProfileEntry> entries = same.entries();
  entries.push_back({0, Instruction::kBackward, Megahertz(1410), Seconds(0.3), Joules(9)});
  EXPECT_EQ(error_of([&] { StageProfile::from_entries(entries, "api"); }).code(),
            ErrorCode::kInvalidArgument);
}

TEST(PlannerProfileBoundsTest, TextFromTheFileIsEscapedInMessages) {
  const Error e =
      error_of([] { StageProfile::parse(profile_with("0,\x1b[31mred,1200,0.1,5\n"), "p.csv"); });
  EXPECT_THAT(e.what(), HasSubstr("\\x1b[31mred"));
  EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace zeus::pipeline_frequency

namespace zeus::pipeline_frequency {
namespace {

// Special files where a profile or plans.json should be: an error at once,
// never a hang (FIFO) or an unbounded read (/dev/zero).
TEST(PlannerSpecialFilesTest, DirectoriesDevicesAndFifosAreRefused) {
  const testing::TempDir tmp;
  const std::string fifo = tmp.path() + "/fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {tmp.path(), std::string("/dev/zero"), fifo}) {
    try {
      StageProfile::read_file(path);
      ADD_FAILURE() << path;
    } catch (const Error& e) {
      EXPECT_EQ(exit_code_for(e.code()), kExitUsage) << path << ": " << e.what();
    }
  }
  EXPECT_EQ(error_of([&] { StageProfile::read_file(tmp.path() + "/none.csv"); }).code(),
            ErrorCode::kNotFound);
  // plans.json as a FIFO, then as a directory.
  ASSERT_EQ(::mkfifo((tmp.path() + "/plans.json").c_str(), 0600), 0);
  EXPECT_EQ(exit_code_for(error_of([&] { read_solution(tmp.path()); }).code()), kExitUsage);
  std::filesystem::remove(tmp.path() + "/plans.json");
  std::filesystem::create_directory(tmp.path() + "/plans.json");
  EXPECT_THAT(error_of([&] { read_solution(tmp.path()); }).what(), HasSubstr("directory"));
}

TEST(PlannerPlansJsonTest, MalformedFieldsAreNamed) {
  const auto profile = StageProfile::parse(
      "stage,instruction,frequency,time,energy\n0,forward,1410,0.010,2.0\n"
      "0,forward,1200,0.013,1.8\n0,backward,1410,0.020,4.0\n0,backward,1200,0.025,3.5\n",
      "p.csv");
  PlannerOptions o;
  o.microbatches = 2;
  o.unit_time = Seconds(0.001);
  o.cost_model = CostModelKind::kConvex;
  const std::string good = plans_json(solve_pipeline(profile, o));
  const auto stored = parse_plans_json(good, "plans.json");
  EXPECT_EQ(stored.ops.size(), 4u);
  EXPECT_GT(stored.points.size(), 1u);
  auto field_of = [](const std::string& text) {
    try {
      parse_plans_json(text, "plans.json");
    } catch (const FieldError& e) {
      return e.field();
    } catch (const Error& e) {
      return std::string("not a FieldError: ") + e.what();
    }
    return std::string("accepted");
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_EQ(field_of(replaced("\"unit_time_s\":0.001", "\"unit_time_s\":1e308")), "unit_time_s");
  EXPECT_EQ(field_of(replaced("\"p_blocking_w\":0", "\"p_blocking_w\":-1")), "p_blocking_w");
  EXPECT_EQ(field_of(replaced("\"num_stages\":1", "\"num_stages\":4294967297")), "num_stages");
  EXPECT_EQ(field_of(replaced("[0,\"forward\",0]", "[0,\"sideways\",0]")), "ops[0][1]");
  EXPECT_EQ(field_of(replaced("\"changes\":[[0,", "\"changes\":[[7,")), "points[0].changes[0][0]");
  EXPECT_EQ(field_of(replaced("\"format\":\"zeus-perseus-plans/1\"", "\"format\":\"x\"")),
            "format");
  EXPECT_EQ(field_of(good.substr(0, good.size() / 2)), "");  // truncated: not JSON
}

}  // namespace
}  // namespace zeus::pipeline_frequency

namespace zeus::pipeline_frequency {
namespace {

TEST(PlannerEstimateTest, PathLengthsThatWouldOverflowAreRefused) {
  // One option per computation (no cost tables to speak of), each a day long,
  // at a unit time that splits a day into 8.64e11 steps.
  const auto profile = StageProfile::parse(
      "stage,instruction,frequency,time,energy\n0,forward,1410,86400,5\n0,backward,1410,86400,9\n",
      "day.csv");
  PlannerOptions o;
  o.microbatches = 10'000'000;
  o.unit_time = Seconds(1e-7);
  const Error e = error_of([&] { estimate_solve(profile, o); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("cannot be added up"));
}

}  // namespace
}  // namespace zeus::pipeline_frequency
