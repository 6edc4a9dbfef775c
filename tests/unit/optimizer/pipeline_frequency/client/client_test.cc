// The per-rank client: the frequency controller (off-thread, change-only,
// restored) and PipelineFrequencyOptimizer against a real server on loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"
#include "util/json.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/optimizer/pipeline_frequency/client/pipeline_frequency_optimizer.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/straggler_scheduler.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::RecordingGpu;
using testing::RunningServer;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(error_code_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

class PipelineFrequencyControllerTest : public ::testing::Test {
 protected:
  std::shared_ptr<RecordingGpu> make_gpu() {
    auto sim = std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock_);
    sim->set_power_limit(Milliwatts(200'000));  // the user's own setting
    sim_ = sim;
    return std::make_shared<RecordingGpu>(sim);
  }
  ManualClock clock_;
  std::shared_ptr<device::SimGpu> sim_;
  log::ScopedSink quiet_{std::make_shared<log::CapturingSink>()};
};

TEST_F(PipelineFrequencyControllerTest, StartsAtMaxAppliesChangesOnlyAndRestores) {
  auto gpu = make_gpu();
  {
    FrequencyController c(gpu);
    EXPECT_EQ(c.max_frequency(), Megahertz(1410));
    EXPECT_THAT(gpu->locks(), ElementsAre(Megahertz(1410)));
    EXPECT_EQ(gpu->memory_lock(), Megahertz(1215));
    EXPECT_EQ(sim_->power_limit(), Milliwatts(300'000));  // upstream: the default limit
    c.set_frequency(Megahertz(1410));                     // unchanged: never reaches the driver
    c.set_frequency(Megahertz(1200));
    c.set_frequency(Megahertz(1200));
    c.set_frequency(Megahertz(0));  // upstream: 0 means "leave it"
    c.flush();
    c.set_frequency(Megahertz(1005));
    c.set_frequency(Megahertz(1005));
    c.flush();
    EXPECT_THAT(gpu->locks(), ElementsAre(Megahertz(1410), Megahertz(1200), Megahertz(1005)));
    EXPECT_EQ(c.current_frequency(), Megahertz(1005));
    EXPECT_EQ(c.changes(), 2u);
    EXPECT_EQ(gpu->resets(), 0);
  }
  EXPECT_EQ(gpu->resets(), 1);                          // locked clocks reset
  EXPECT_EQ(gpu->memory_resets(), 1);                   // memory clocks too
  EXPECT_EQ(sim_->power_limit(), Milliwatts(200'000));  // the user's limit is back
}

TEST_F(PipelineFrequencyControllerTest, ReturnsAtOnceWhileTheDriverIsBusyAndAppliesTheNewest) {
  auto gpu = make_gpu();
  FrequencyController c(gpu);
  gpu->hold();
  c.set_frequency(Megahertz(1200));
  gpu->wait_for_blocked_call();  // the controller's thread is stuck in the driver
  // A controller that called the driver on this thread would never return
  // here (the driver is held until release()).
  auto requests = std::async(std::launch::async, [&] {
    c.set_frequency(Megahertz(1100));
    c.set_frequency(Megahertz(1000));
  });
  ASSERT_EQ(requests.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(gpu->blocked_calls(), 1);
  gpu->release();
  c.flush();
  // 1410 at start, 1200 (already in the driver), then only the newest: 1100 is skipped.
  EXPECT_THAT(gpu->locks(), ElementsAre(Megahertz(1410), Megahertz(1200), Megahertz(1000)));
  EXPECT_EQ(c.current_frequency(), Megahertz(1000));
}

TEST_F(PipelineFrequencyControllerTest, ADriverFailureReachesTheTrainingThreadOnce) {
  auto gpu = make_gpu();
  FrequencyController c(gpu);
  gpu->fail_at(Megahertz(900), ErrorCode::kGpuLost);
  c.set_frequency(Megahertz(900));
  EXPECT_THAT(error_of([&] { c.flush(); }), HasSubstr("gpu_lost: injected failure at 900 MHz"));
  c.set_frequency(Megahertz(1005));  // the error was delivered; carry on
  c.flush();
  EXPECT_EQ(c.current_frequency(), Megahertz(1005));
}

TEST_F(PipelineFrequencyControllerTest, RefusedStartUpThrowsAndLeavesNothingChanged) {
  auto gpu = make_gpu();
  gpu->fail_at(Megahertz(1410), ErrorCode::kNoPermission);
  EXPECT_THAT(error_of([&] { FrequencyController c(gpu); }), HasSubstr("no_permission"));
  EXPECT_EQ(sim_->power_limit(), Milliwatts(200'000));
  EXPECT_EQ(gpu->memory_resets(), 1);
}

// Two ranks of a 2-stage job against a server on loopback.
class PipelineFrequencyOptimizerTest : public ::testing::Test {
 protected:
  PipelineFrequencyOptimizerOptions options(int rank, const std::string& url) {
    PipelineFrequencyOptimizerOptions o;
    o.rank = rank;
    o.pp_rank = rank;
    o.pp_degree = 2;
    o.world_size = 2;
    o.server_url = url;
    o.clock = &clock_;
    o.broadcast_job_id = [this](const std::optional<std::string>& id) {
      if (id) {
        job_id_.set_value(*id);
        return *id;
      }
      return job_id_future_.get();
    };
    return o;
  }
  std::shared_ptr<RecordingGpu> gpu() {
    return std::make_shared<RecordingGpu>(
        std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock_));
  }
  ManualClock clock_;
  std::promise<std::string> job_id_;
  std::shared_future<std::string> job_id_future_ = job_id_.get_future().share();
  testing::TempDir dir_;
  log::ScopedSink quiet_{std::make_shared<log::CapturingSink>()};
};

StagePlan plan2() {
  return {{{"forward", Megahertz(1410)},
           {"forward", Megahertz(1200)},
           {"backward", Megahertz(1200)},
           {"backward", Megahertz(1005)}},
          {{"forward", Megahertz(1005)},
           {"backward", Megahertz(810)},
           {"forward", Megahertz(1005)},
           {"backward", Megahertz(810)}}};
}

TEST_F(PipelineFrequencyOptimizerTest, RanksRegisterFetchAndApplyTheirStagesSchedule) {
  JobManagerOptions jo;
  jo.dump_dir = dir_.path();
  RunningServer server(make_point_solution(plan2(), "plan"), jo);
  auto g0 = gpu(), g1 = gpu();
  auto rank1 = std::async(std::launch::async, [&] {
    return std::make_unique<PipelineFrequencyOptimizer>(g1, options(1, server.url()));
  });
  PipelineFrequencyOptimizer opt0(g0, options(0, server.url()));
  auto opt1 = rank1.get();
  EXPECT_EQ(opt0.job_id(), opt1->job_id());
  EXPECT_THAT(opt0.job_id(), HasSubstr("+dp1+pp2+tp1+PointSolution"));
  EXPECT_EQ(opt1->schedule().frequencies, plan2()[1]);

  // The registered clocks are the GPU's, fastest first.
  const auto ranks = parse_json_file(dir_.path() + "/" + opt0.job_id() + "/ranks.json");
  EXPECT_EQ(ranks[1]["available_frequencies"][0], 1410);
  EXPECT_EQ(ranks[1]["available_frequencies"].size(), 81u);

  for (int step = 0; step < 2; ++step) {
    opt1->on_step_begin();
    for (const char* name : {"forward", "backward", "forward", "backward"}) {
      opt1->on_instruction_begin(name);
      opt1->controller().flush();
      opt1->on_instruction_end(name);
    }
    opt1->on_step_end();
  }
  // 1410 at start, then 1005 and 810 alternate: every instruction changes the clock.
  EXPECT_THAT(g1->locks(), ElementsAre(Megahertz(1410), Megahertz(1005), Megahertz(810),
                                       Megahertz(1005), Megahertz(810), Megahertz(1005),
                                       Megahertz(810), Megahertz(1005), Megahertz(810)));
  EXPECT_EQ(opt1->controller().changes(), 8u);
  EXPECT_EQ(opt1->iterations(), 2);

  // Names are checked; the schedule must be used up at the end of a step.
  EXPECT_THAT(error_of([&] { opt0.on_instruction_begin("backward"); }),
              HasSubstr("failed_precondition: instruction 0 of the iteration is 'backward' but "
                        "the schedule expects 'forward'"));
  opt0.on_instruction_begin("forward");
  EXPECT_THAT(error_of([&] { opt0.on_step_end(); }),
              HasSubstr("the iteration ended after 1 of the schedule's 4 instructions"));
  // Still unfinished: the failed check did not rewind the schedule.
  EXPECT_THAT(error_of([&] { opt0.on_step_end(); }),
              HasSubstr("the iteration ended after 1 of the schedule's 4 instructions"));
}

TEST_F(PipelineFrequencyOptimizerTest, ReportsResultsAndFollowsAReactingServer) {
  testing::write_two_stage_frontier(dir_.path() + "/sol");
  auto frontier = std::make_shared<const pipeline_frequency::StoredSolution>(
      pipeline_frequency::read_solution(dir_.path() + "/sol"));
  StragglerOptions so;
  so.initial_target = "fastest";
  RunningServer server(make_straggler_aware(frontier, "plans.json", so));
  const auto& pts = frontier->points;
  const auto fastest = stage_plan(*frontier, pipeline_frequency::select_fastest(pts));
  const double t_prime = pts.front().time.count();
  const auto slow =
      stage_plan(*frontier, pipeline_frequency::select_straggler(pts, Seconds(t_prime)));
  ASSERT_NE(fastest, slow);

  auto run_rank = [&](int rank, std::shared_ptr<device::Gpu> g) {
    auto o = options(rank, server.url());
    o.report_every = 1;
    PipelineFrequencyOptimizer opt(g, o);
    std::vector<std::vector<ScheduleEntry>> seen;
    for (int step = 0; step < 2; ++step) {
      seen.push_back(opt.schedule().frequencies);
      opt.on_step_begin();
      for (const auto& e : seen.back()) opt.on_instruction_begin(e.instruction);
      // Every pipeline waits for a straggler at T' (the clock is shared here).
      if (rank == 0) clock_.advance(Seconds(t_prime));
      opt.on_step_end();  // reports and fetches the next schedule
    }
    seen.push_back(opt.schedule().frequencies);
    return seen;
  };
  auto r1 = std::async(std::launch::async, run_rank, 1, gpu());
  const auto seen0 = run_rank(0, gpu());
  const auto seen1 = r1.get();
  EXPECT_EQ(seen0[0], fastest[0]);
  EXPECT_EQ(seen1[0], fastest[1]);
  // The results showed iterations of T' (> T_min): the next schedules meet T'.
  EXPECT_EQ(seen0[1], slow[0]);
  EXPECT_EQ(seen1[2], slow[1]);
}

TEST_F(PipelineFrequencyOptimizerTest, ClearErrorsForBadSetups) {
  RunningServer server(make_point_solution(plan2(), "plan"));
  auto o = options(1, server.url());
  o.broadcast_job_id = nullptr;
  EXPECT_THAT(error_of([&] { PipelineFrequencyOptimizer(gpu(), o); }),
              HasSubstr("rank 1 of 2 cannot learn the job id"));
  o.job_id = "2024-01-01-00-00-00+dp1+pp2+tp1+PointSolution";
  EXPECT_THAT(error_of([&] { PipelineFrequencyOptimizer(gpu(), o); }),
              HasSubstr("not_found: pipeline-frequency server http://127.0.0.1:"));
  o = options(0, server.url());
  o.world_size = 3;
  EXPECT_THAT(error_of([&] { PipelineFrequencyOptimizer(gpu(), o); }),
              HasSubstr("world_size 3 is not pp_degree x dp_degree x tp_degree"));
  o = options(0, server.url());
  o.pp_degree = 4;
  o.world_size = 4;
  EXPECT_THAT(error_of([&] { PipelineFrequencyOptimizer(gpu(), o); }),
              HasSubstr("invalid_argument: pipeline-frequency server http://127.0.0.1:"));
  o = options(0, "http://127.0.0.1:1");
  EXPECT_THAT(error_of([&] { PipelineFrequencyOptimizer(gpu(), o); }), HasSubstr("io: "));
}

}  // namespace
}  // namespace zeus::pipeline_frequency
