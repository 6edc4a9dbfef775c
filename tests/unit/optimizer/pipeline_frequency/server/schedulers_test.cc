// Schedulers: a fixed plan, the 3D-parallel wrapper (copies and per-stage
// aggregation), and the straggler-aware scheduler's plan switches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/straggler_scheduler.h"
#include "zeus/optimizer/pipeline_frequency/server/three_d_parallel.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::HasSubstr;

StagePlan two_stage_plan() {
  return {{{"forward", Megahertz(1410)}, {"backward", Megahertz(1200)}},
          {{"forward", Megahertz(1005)}, {"backward", Megahertz(810)}}};
}

JobInfo job(int pp, int dp, int tp) {
  JobInfo j;
  j.pp_degree = pp;
  j.dp_degree = dp;
  j.tp_degree = tp;
  j.world_size = pp * dp * tp;
  return j;
}

// Ranks laid out like Megatron (tp fastest, then dp, then pp).
std::vector<RankInfo> ranks(int pp, int dp, int tp) {
  std::vector<RankInfo> out;
  for (int p = 0; p < pp; ++p) {
    for (int d = 0; d < dp; ++d) {
      for (int t = 0; t < tp; ++t) {
        out.push_back(RankInfo{static_cast<int>(out.size()), d, p, t, testing::a100_clocks()});
      }
    }
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(error_code_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

ProfilingResult result(int rank, std::vector<double> times, std::vector<double> energies) {
  ProfilingResult r;
  r.rank = rank;
  for (double t : times) r.iter_time.emplace_back(t);
  for (double e : energies) r.iter_energy.emplace_back(e);
  return r;
}

TEST(PipelineFrequencyPointSolutionTest, HandsEachRankItsScheduleAndRefusesOtherJobSizes) {
  const auto f = make_point_solution(two_stage_plan(), "plan.py");
  EXPECT_EQ(f->name(), "PointSolution");
  auto s = f->create(job(2, 1, 1), ranks(2, 1, 1));
  const auto round = s->next_schedule();
  ASSERT_EQ(round.size(), 2u);
  EXPECT_EQ(round[1].rank, 1);
  EXPECT_EQ(round[1].frequencies, two_stage_plan()[1]);
  s->observe({result(0, {1.0}, {5.0}), result(1, {1.0}, {5.0})});
  EXPECT_EQ(s->next_schedule(), round);  // a fixed plan stays
  EXPECT_THAT(error_of([&] { s->set_straggler(Seconds(2.0)); }),
              HasSubstr("failed_precondition: this server serves a fixed plan"));
  EXPECT_THAT(error_of([&] { f->check_job(job(4, 1, 1)); }),
              HasSubstr("invalid_argument: the plan plan.py has 2 stage schedules but the job "
                        "has 4 ranks (pp 4 x dp 1 x tp 1)"));
  EXPECT_THAT(error_of([&] { f->check_job(job(2, 2, 1)); }), HasSubstr("PointSolution3D"));
}

// The class: unknown instruction names in plans served to ranks.
TEST(PipelineFrequencyPointSolutionTest, RefusesPlansNamingInstructionsRanksDoNotRun) {
  for (const char* bad : {"Forward", "fwd", "forward ", "optimizer_step"}) {
    StagePlan plan = two_stage_plan();
    plan[1][1].instruction = bad;
    const std::string why = error_of([&] { make_point_solution(plan, "plan.py"); });
    EXPECT_THAT(why, HasSubstr(std::string("names instruction '") + bad + "' (stage 1, entry 1)"));
    EXPECT_THAT(why, HasSubstr("only 'forward' and 'backward'"));
  }
}

TEST(PipelineFrequencyThreeDParallelTest, CopiesStageSchedulesAndAggregatesPerStage) {
  const auto f = make_3d_parallel(make_point_solution(two_stage_plan(), "plan.py"));
  EXPECT_EQ(f->name(), "PointSolution3D");
  EXPECT_NO_THROW(f->check_job(job(2, 2, 2)));
  EXPECT_THAT(error_of([&] { f->check_job(job(3, 2, 1)); }), HasSubstr("has 2 stage schedules"));
  const auto rs = ranks(2, 2, 2);  // ranks 0-3 are stage 0, 4-7 stage 1
  auto s = f->create(job(2, 2, 2), rs);
  const auto round = s->next_schedule();
  ASSERT_EQ(round.size(), 8u);
  for (const auto& sched : round) {
    EXPECT_EQ(sched.frequencies, two_stage_plan()[sched.rank < 4 ? 0 : 1]) << sched.rank;
  }

  std::vector<ProfilingResult> results;
  for (int r = 0; r < 8; ++r) results.push_back(result(r, {1.0 + r, 2.0}, {10.0 * r, 1.0}));
  results[3].iter_time.pop_back();  // a shorter list cuts the stage's aggregate
  results[5].time_breakdown["forward"] = {{Seconds(0.5), Seconds(0.7)}};
  const auto agg = aggregate_per_stage(results, rs, 2);
  ASSERT_EQ(agg.size(), 2u);
  EXPECT_EQ(agg[0].rank, 0);
  ASSERT_EQ(agg[0].iter_time.size(), 1u);
  EXPECT_DOUBLE_EQ(agg[0].iter_time[0].count(), 4.0);                 // max of 1..4
  EXPECT_DOUBLE_EQ(agg[0].iter_energy[0].value(), 0 + 10 + 20 + 30);  // sum
  EXPECT_DOUBLE_EQ(agg[0].iter_energy[1].value(), 4.0);
  EXPECT_DOUBLE_EQ(agg[1].iter_time[0].count(), 8.0);
  EXPECT_DOUBLE_EQ(agg[1].iter_energy[0].value(), 40 + 50 + 60 + 70);
  EXPECT_TRUE(agg[1].time_breakdown.empty());  // only rank 5 broke "forward" down
}

class PipelineFrequencyStragglerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_two_stage_frontier(dir_.path());
    frontier_ = std::make_shared<const pipeline_frequency::StoredSolution>(
        pipeline_frequency::read_solution(dir_.path()));
  }
  testing::TempDir dir_;
  std::shared_ptr<const pipeline_frequency::StoredSolution> frontier_;
};

TEST_F(PipelineFrequencyStragglerTest, SwitchesToTheSlowestPlanThatMeetsAMeasuredStraggler) {
  const auto& pts = frontier_->points;
  const std::size_t star = pipeline_frequency::select_min_energy(pts);
  const std::size_t fastest = pipeline_frequency::select_fastest(pts);
  ASSERT_NE(star, 0u) << "the test frontier needs room beyond T*";
  StragglerOptions o;
  o.initial_target = "fastest";
  const auto f = make_straggler_aware(frontier_, "plans.json", o);
  EXPECT_EQ(f->name(), "StragglerAware");
  auto s = f->create(job(2, 1, 1), ranks(2, 1, 1));
  const auto at = [&](std::size_t i) {
    const auto plan = stage_plan(*frontier_, i);
    return std::vector<FrequencySchedule>{{0, plan[0]}, {1, plan[1]}};
  };
  EXPECT_EQ(s->next_schedule(), at(fastest));
  const double t_min = pts[fastest].time.count();

  // Within the tolerance of the plan's own time: no straggler.
  s->observe({result(0, {t_min * 1.02}, {1}), result(1, {t_min}, {1})});
  EXPECT_EQ(s->next_schedule(), at(fastest));

  // Every pipeline waits for a straggler at T' = 1.5 T_min: the slowest plan
  // that still meets it.
  log::ScopedSink quiet(std::make_shared<log::CapturingSink>());
  const double t_prime = pts.front().time.count() * 0.999;
  s->observe({result(0, {t_prime, t_prime}, {1, 1}), result(1, {t_min, t_prime}, {1, 1})});
  const std::size_t expected = pipeline_frequency::select_straggler(pts, Seconds(t_prime));
  EXPECT_NE(expected, fastest);
  EXPECT_LE(pts[expected].time.count(), t_prime);
  EXPECT_EQ(s->next_schedule(), at(expected));
  // The pipeline now runs at T' itself: no further switch (no ratchet).
  s->observe({result(0, {t_prime * 1.01}, {1}), result(1, {t_prime}, {1})});
  EXPECT_EQ(s->next_schedule(), at(expected));

  // Announced: recovery goes back to the initial target; a new straggler switches.
  s->set_straggler(std::nullopt);
  EXPECT_EQ(s->next_schedule(), at(fastest));
  s->set_straggler(Seconds(pts[star].time.count()));
  EXPECT_EQ(s->next_schedule(), at(pipeline_frequency::select_straggler(pts, pts[star].time)));
}

TEST_F(PipelineFrequencyStragglerTest, ChecksItsJobAndOptions) {
  StragglerOptions o;
  const auto f = make_straggler_aware(frontier_, "plans.json", o);
  EXPECT_THAT(error_of([&] { f->check_job(job(2, 2, 1)); }),
              HasSubstr("for 2 stages but the job has 4 ranks"));
  EXPECT_NO_THROW(
      make_3d_parallel(make_straggler_aware(frontier_, "p", o))->check_job(job(2, 2, 1)));
  o.tolerance = 0.0;
  EXPECT_THAT(error_of([&] { make_straggler_aware(frontier_, "p", o); }), HasSubstr("tolerance"));
  o.tolerance = 0.03;
  o.initial_target = "slowest";
  EXPECT_THAT(error_of([&] { make_straggler_aware(frontier_, "p", o); }),
              HasSubstr("invalid_argument"));
}

}  // namespace
}  // namespace zeus::pipeline_frequency
