// The server's HTTP API on loopback, with the bodies and paths upstream's
// client sends: blocking schedule requests answered together, status codes
// and JSON error messages for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"
#include "zeus/http/client.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/straggler_scheduler.h"
#include "zeus/optimizer/pipeline_frequency/server/three_d_parallel.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::HasSubstr;
using testing::RunningServer;
using json = nlohmann::json;

StagePlan plan2() {
  return {{{"forward", Megahertz(1410)}, {"backward", Megahertz(1200)}},
          {{"forward", Megahertz(1005)}, {"backward", Megahertz(810)}}};
}

json rank_body(int rank, int pp, int dp = 0, int tp = 0) {
  json freqs = json::array();
  for (const auto f : testing::a100_clocks()) freqs.push_back(f.value());
  return {{"rank", rank},
          {"dp_rank", dp},
          {"pp_rank", pp},
          {"tp_rank", tp},
          {"available_frequencies", freqs}};
}

std::string message(const http::Response& r) { return json::parse(r.body).value("message", ""); }

class PipelineFrequencyHttpApiTest : public ::testing::Test {
 protected:
  JobManagerOptions options() {
    JobManagerOptions o;
    o.dump_dir = dump_.path();
    return o;
  }
  testing::TempDir dump_;
  log::ScopedSink quiet_{std::make_shared<log::CapturingSink>()};
};

TEST_F(PipelineFrequencyHttpApiTest, ThreeDJobOverHttpAsUpstreamsClientDrivesIt) {
  RunningServer s(make_3d_parallel(make_point_solution(plan2(), "plan.py")), options());
  http::Client rank0(s.url());
  auto r = rank0.post_json("/register_job", R"({"job_id": "", "pp_degree": 2, "dp_degree": 2,
      "tp_degree": 1, "world_size": 4, "job_metadata": "test"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string id = json::parse(r.body).get<std::string>();
  EXPECT_THAT(id, ::testing::MatchesRegex(
                      "[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}\\+dp2\\+pp2\\+tp1\\+"
                      "PointSolution3D\\+test"));

  // Four ranks, each in its own thread with its own connection, as processes would.
  std::vector<std::future<json>> answers;
  for (int rank = 0; rank < 4; ++rank) {
    answers.push_back(std::async(std::launch::async, [&, rank] {
      http::Client c(s.url());
      const int pp = rank / 2, dp = rank % 2;
      auto reg = c.post_json(job_path(kRegisterRankPath, id), rank_body(rank, pp, dp).dump());
      EXPECT_EQ(reg.status, 200) << reg.body;
      EXPECT_EQ(reg.body, "null");
      auto sched = c.get(job_path(kSchedulePath, id) + "?rank=" + std::to_string(rank));
      EXPECT_EQ(sched.status, 200) << sched.body;
      return json::parse(sched.body);
    }));
  }
  for (int rank = 0; rank < 4; ++rank) {
    const json a = answers[static_cast<std::size_t>(rank)].get();
    EXPECT_EQ(a["rank"], rank);
    EXPECT_EQ(parse_frequency_schedule(a.dump()).frequencies, plan2()[rank < 2 ? 0 : 1]);
  }
  // Results, then the next round.
  for (int rank = 0; rank < 4; ++rank) {
    auto res = rank0.post_json(job_path(kResultPath, id), json{{"rank", rank},
                                                               {"iter_time", {1.0}},
                                                               {"iter_energy", {50.0}},
                                                               {"time_breakdown", json::object()},
                                                               {"energy_breakdown", json::object()}}
                                                              .dump());
    EXPECT_EQ(res.status, 200) << res.body;
  }
  EXPECT_TRUE(std::filesystem::exists(dump_.path() + "/" + id + "/0.prof.json"));
}

TEST_F(PipelineFrequencyHttpApiTest, BadInputGetsA4xxWithAMessage) {
  RunningServer s(make_point_solution(plan2(), "plan.py"), options());
  http::Client c(s.url());
  // Degrees that do not multiply to the world size; a plan for another size.
  auto r = c.post_json("/register_job",
                       R"({"pp_degree": 2, "dp_degree": 2, "tp_degree": 1, "world_size": 2})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(message(r), HasSubstr("world_size: 2 is not pp_degree x dp_degree x tp_degree"));
  r = c.post_json("/register_job",
                  R"({"pp_degree": 4, "dp_degree": 1, "tp_degree": 1, "world_size": 4})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(message(r), HasSubstr("the plan plan.py has 2 stage schedules but the job has 4"));
  r = c.post_json("/register_job", "{");
  EXPECT_EQ(r.status, 400);

  r = c.post_json("/register_job",
                  R"({"pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 2})");
  ASSERT_EQ(r.status, 200);
  const std::string id = json::parse(r.body).get<std::string>();
  // Unknown job, rank out of range, duplicate rank.
  r = c.post_json(job_path(kRegisterRankPath, "2024-01-01-00-00-00+nope"), rank_body(0, 0).dump());
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(message(r), HasSubstr("unknown job 2024-01-01-00-00-00+nope"));
  r = c.post_json(job_path(kRegisterRankPath, id), rank_body(2, 1).dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(message(r), HasSubstr("rank 2 is out of range"));
  ASSERT_EQ(c.post_json(job_path(kRegisterRankPath, id), rank_body(0, 0).dump()).status, 200);
  r = c.post_json(job_path(kRegisterRankPath, id), rank_body(0, 0).dump());
  EXPECT_EQ(r.status, 409);
  EXPECT_THAT(message(r), HasSubstr("rank 0 of job " + id + " has already registered"));
  // Schedule requests: rank missing or malformed, unknown job.
  EXPECT_EQ(c.get(job_path(kSchedulePath, id)).status, 400);
  EXPECT_EQ(c.get(job_path(kSchedulePath, id) + "?rank=x").status, 400);
  EXPECT_EQ(c.get(job_path(kSchedulePath, id) + "?rank=7").status, 400);
  EXPECT_EQ(c.get(job_path(kSchedulePath, "nope") + "?rank=0").status, 404);
  // A result without a schedule; a straggler notice to a fixed plan.
  r = c.post_json(job_path(kResultPath, id), R"({"rank": 0, "iter_time": [], "iter_energy": []})");
  EXPECT_EQ(r.status, 409);
  ASSERT_EQ(c.post_json(job_path(kRegisterRankPath, id), rank_body(1, 1).dump()).status, 200);
  r = c.post_json(job_path(kStragglerPath, id), R"({"iteration_time": 3.0})");
  EXPECT_EQ(r.status, 409);
  EXPECT_THAT(message(r), HasSubstr("fixed plan"));
  // Wrong methods and paths.
  EXPECT_EQ(c.get("/register_job").status, 405);
  EXPECT_EQ(c.get("/info").status, 404);  // declared by upstream, never routed
}

TEST_F(PipelineFrequencyHttpApiTest, StragglerNoticeSwitchesPlansAtTheNextRound) {
  testing::write_two_stage_frontier(dump_.path() + "/sol");
  auto frontier = std::make_shared<const pipeline_frequency::StoredSolution>(
      pipeline_frequency::read_solution(dump_.path() + "/sol"));
  StragglerOptions so;
  so.initial_target = "fastest";
  RunningServer s(make_straggler_aware(frontier, "plans.json", so), options());
  http::Client c(s.url());
  auto r = c.post_json("/register_job",
                       R"({"pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 2})");
  const std::string id = json::parse(r.body).get<std::string>();
  for (int rank : {0, 1}) {
    ASSERT_EQ(c.post_json(job_path(kRegisterRankPath, id), rank_body(rank, rank).dump()).status,
              200);
  }
  const auto round = [&] {
    std::vector<std::future<FrequencySchedule>> f;
    for (int rank : {0, 1}) {
      f.push_back(std::async(std::launch::async, [&, rank] {
        http::Client rc(s.url());
        const auto a = rc.get(job_path(kSchedulePath, id) + "?rank=" + std::to_string(rank));
        EXPECT_EQ(a.status, 200) << a.body;
        return parse_frequency_schedule(a.body);
      }));
    }
    std::vector<FrequencySchedule> out;
    for (auto& x : f) out.push_back(x.get());
    for (int rank : {0, 1}) {
      EXPECT_EQ(
          c.post_json(job_path(kResultPath, id),
                      json{{"rank", rank}, {"iter_time", {0.1}}, {"iter_energy", {1.0}}}.dump())
              .status,
          200);
    }
    return out;
  };
  const auto& pts = frontier->points;
  const auto fastest = stage_plan(*frontier, pipeline_frequency::select_fastest(pts));
  EXPECT_EQ(round()[1].frequencies, fastest[1]);
  const double t_prime = pts.front().time.count();
  r = c.post_json(job_path(kStragglerPath, id), json{{"iteration_time", t_prime}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto slow =
      stage_plan(*frontier, pipeline_frequency::select_straggler(pts, Seconds(t_prime)));
  EXPECT_NE(slow, fastest);
  EXPECT_EQ(round()[0].frequencies, slow[0]);
  EXPECT_EQ(c.post_json(job_path(kStragglerPath, id), R"({"iteration_time": null})").status, 200);
  EXPECT_EQ(round()[0].frequencies, fastest[0]);
  EXPECT_EQ(c.post_json(job_path(kStragglerPath, id), R"({"iteration_time": -1})").status, 400);
  EXPECT_EQ(c.post_json(job_path(kStragglerPath, id), R"({"slowdown": 2})").status, 400);
}

}  // namespace
}  // namespace zeus::pipeline_frequency
