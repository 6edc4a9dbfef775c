// The job manager without HTTP: registration checks, schedule rounds that
// answer only when every rank asked, results, failures, eviction and dumps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"
#include "util/json.h"
#include "zeus/http/message.h"
#include "zeus/optimizer/pipeline_frequency/common/messages.h"
#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/three_d_parallel.h"
#include "zeus/util/clock.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::HasSubstr;

StagePlan plan2() {
  return {{{"forward", Megahertz(1410)}, {"backward", Megahertz(1200)}},
          {{"forward", Megahertz(1005)}, {"backward", Megahertz(810)}}};
}

JobInfo job(int pp, int dp = 1, int tp = 1) {
  JobInfo j;
  j.pp_degree = pp;
  j.dp_degree = dp;
  j.tp_degree = tp;
  j.world_size = pp * dp * tp;
  return j;
}

RankInfo rank_info(int rank, int pp_rank, int dp_rank = 0, int tp_rank = 0) {
  return RankInfo{rank, dp_rank, pp_rank, tp_rank, testing::a100_clocks()};
}

// Collects what each rank's request got.
struct Replies {
  std::mutex mutex;
  std::map<int, std::vector<ScheduleOutcome>> by_rank;
  ScheduleReply to(int rank) {
    return [this, rank](ScheduleOutcome o) {
      std::lock_guard lock(mutex);
      by_rank[rank].push_back(std::move(o));
    };
  }
  std::size_t count(int rank) {
    std::lock_guard lock(mutex);
    return by_rank[rank].size();
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(error_code_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

ProfilingResult result(int rank) {
  ProfilingResult r;
  r.rank = rank;
  r.iter_time = {Seconds(1.0)};
  r.iter_energy = {Joules(100.0 + rank)};
  return r;
}

class PipelineFrequencyJobManagerTest : public ::testing::Test {
 protected:
  JobManagerOptions options() {
    JobManagerOptions o;
    o.dump_dir = dump_.path();
    o.clock = &clock_;
    o.now = [] { return std::chrono::system_clock::from_time_t(1714557045); };
    return o;
  }
  testing::TempDir dump_;
  ManualClock clock_;
  log::ScopedSink quiet_{std::make_shared<log::CapturingSink>()};
};

TEST_F(PipelineFrequencyJobManagerTest, AnswersEveryRankOnlyWhenTheLastOneAsks) {
  JobManager m(make_point_solution(plan2(), "plan.py"), options());
  const std::string id = m.register_job(job(2));
  EXPECT_THAT(id, HasSubstr("+dp1+pp2+tp1+PointSolution"));
  m.register_rank(id, rank_info(1, 1));
  Replies replies;
  EXPECT_THAT(error_of([&] { m.request_schedule(id, 0, replies.to(0)); }),
              HasSubstr("failed_precondition: rank 0 has not registered"));
  m.request_schedule(id, 1, replies.to(1));  // before everyone registered: waits
  m.register_rank(id, rank_info(0, 0));
  EXPECT_EQ(replies.count(1), 0u);
  EXPECT_EQ(m.status(id).waiting_requests, 1);
  m.request_schedule(id, 0, replies.to(0));  // the last one: both answered
  ASSERT_EQ(replies.count(0), 1u);
  ASSERT_EQ(replies.count(1), 1u);
  EXPECT_EQ(replies.by_rank[0][0].schedule->rank, 0);
  EXPECT_EQ(replies.by_rank[1][0].schedule->frequencies, plan2()[1]);
  EXPECT_EQ(m.status(id).round, 1);

  // Round 2 only after every result.
  EXPECT_THAT(error_of([&] { m.request_schedule(id, 0, replies.to(0)); }),
              HasSubstr("has not reported the result of schedule 0"));
  m.report_result(id, result(0));
  EXPECT_THAT(error_of([&] { m.report_result(id, result(0)); }),
              HasSubstr("already_exists: rank 0 already reported"));
  m.request_schedule(id, 0, replies.to(0));
  EXPECT_EQ(replies.count(0), 1u);  // rank 1 has not reported yet
  m.report_result(id, result(1));
  EXPECT_EQ(replies.count(0), 1u);  // ... nor asked
  m.request_schedule(id, 1, replies.to(1));
  EXPECT_EQ(replies.count(0), 2u);
  EXPECT_EQ(replies.count(1), 2u);
  EXPECT_EQ(m.status(id).round, 2);
}

TEST_F(PipelineFrequencyJobManagerTest, RefusesBadRegistrations) {
  JobManager m(make_3d_parallel(make_point_solution(plan2(), "plan.py")), options());
  EXPECT_THAT(error_of([&] { m.register_job(job(3, 2)); }),
              HasSubstr("invalid_argument: the plan plan.py has 2 stage schedules but the job "
                        "has 3 ranks"));
  JobInfo bad = job(2, 2);
  bad.world_size = 3;
  EXPECT_THAT(error_of([&] { m.register_job(bad); }), HasSubstr("invalid_argument: world_size"));
  const std::string id = m.register_job(job(2, 2));
  EXPECT_THAT(error_of([&] { m.register_rank("nope", rank_info(0, 0)); }),
              HasSubstr("not_found: unknown job nope"));
  EXPECT_THAT(
      error_of([&] { m.register_rank(id, rank_info(4, 0)); }),
      HasSubstr("invalid_argument: rank 4 is out of range: job " + id + " has ranks 0 to 3"));
  EXPECT_THAT(error_of([&] { m.register_rank(id, rank_info(0, 2)); }),
              HasSubstr("pp_rank 2 is out of range"));
  EXPECT_THAT(error_of([&] { m.register_rank(id, rank_info(0, 0, 2)); }),
              HasSubstr("dp_rank 2 is out of range"));
  m.register_rank(id, rank_info(0, 0, 0));
  EXPECT_THAT(error_of([&] { m.register_rank(id, rank_info(0, 1, 0)); }),
              HasSubstr("already_exists: rank 0 of job"));
  EXPECT_THAT(error_of([&] { m.register_rank(id, rank_info(1, 0, 0)); }),
              HasSubstr("(dp_rank 0, pp_rank 0, tp_rank 0) belongs to another rank"));
  RankInfo no_clocks = rank_info(1, 0, 1);
  no_clocks.available_frequencies.clear();
  EXPECT_THAT(error_of([&] { m.register_rank(id, no_clocks); }),
              HasSubstr("available_frequencies is empty"));
  Replies r;
  EXPECT_THAT(error_of([&] { m.request_schedule(id, 9, r.to(9)); }), HasSubstr("out of range"));
  EXPECT_THAT(error_of([&] { m.report_result(id, result(0)); }),
              HasSubstr("was handed no schedule"));
  EXPECT_THAT(error_of([&] { m.set_straggler(id, Seconds(2.0)); }),
              HasSubstr("no scheduler yet: 1 of 4 ranks registered"));
}

TEST_F(PipelineFrequencyJobManagerTest, SameJobInTheSameSecondGetsItsOwnId) {
  JobManager m(make_point_solution(plan2(), "plan.py"), options());
  const auto a = m.register_job(job(2));
  const auto b = m.register_job(job(2));
  EXPECT_NE(a, b);
  EXPECT_EQ(b, a + "+2");
  EXPECT_EQ(m.job_count(), 2u);
}

TEST_F(PipelineFrequencyJobManagerTest, APlanTheGpuCannotRunFailsEveryWaitingRank) {
  StagePlan plan = plan2();
  plan[1][0].frequency = Megahertz(1407);  // not on the 15 MHz grid
  JobManager m(make_point_solution(plan, "plan.py"), options());
  const std::string id = m.register_job(job(2));
  Replies r;
  m.register_rank(id, rank_info(0, 0));
  m.register_rank(id, rank_info(1, 1));
  m.request_schedule(id, 0, r.to(0));
  m.request_schedule(id, 1, r.to(1));
  for (int rank : {0, 1}) {
    ASSERT_EQ(r.count(rank), 1u);
    const auto& o = r.by_rank[rank][0];
    ASSERT_TRUE(o.error.has_value());
    EXPECT_EQ(o.error->code(), ErrorCode::kInvalidArgument);  // 400, as upstream's ValueError
    EXPECT_THAT(o.error->what(), HasSubstr("rank 1 (stage 1) to 1407 MHz for 'forward'"));
  }
  m.request_schedule(id, 0, r.to(0));  // later requests get the same error at once
  EXPECT_TRUE(r.by_rank[0][1].error.has_value());
  EXPECT_TRUE(m.status(id).failed);
}

TEST_F(PipelineFrequencyJobManagerTest, ANewerRequestSupersedesAWaitingOne) {
  JobManager m(make_point_solution(plan2(), "plan.py"), options());
  const std::string id = m.register_job(job(2));
  m.register_rank(id, rank_info(0, 0));
  m.register_rank(id, rank_info(1, 1));
  Replies r;
  m.request_schedule(id, 0, r.to(0));
  m.request_schedule(id, 0, r.to(0));
  ASSERT_EQ(r.count(0), 1u);
  EXPECT_THAT(r.by_rank[0][0].error->what(), HasSubstr("superseded"));
  m.request_schedule(id, 1, r.to(1));
  ASSERT_EQ(r.count(0), 2u);
  EXPECT_TRUE(r.by_rank[0][1].schedule.has_value());
}

TEST_F(PipelineFrequencyJobManagerTest, EvictsIdleJobsAndTellsWaitingRanks) {
  JobManagerOptions o = options();
  o.max_job_idle_time = Seconds(100.0);
  JobManager m(make_point_solution(plan2(), "plan.py"), o);
  const std::string idle = m.register_job(job(2));
  m.register_rank(idle, rank_info(0, 0));
  m.register_rank(idle, rank_info(1, 1));
  Replies r;
  m.request_schedule(idle, 0, r.to(0));
  clock_.advance(Seconds(60.0));
  const std::string busy = m.register_job(job(2));
  EXPECT_EQ(m.evict_idle(), 0u);
  clock_.advance(Seconds(50.0));  // idle: 110 s, busy: 50 s
  EXPECT_EQ(m.evict_idle(), 1u);
  EXPECT_EQ(m.job_count(), 1u);
  ASSERT_EQ(r.count(0), 1u);
  EXPECT_EQ(r.by_rank[0][0].error->code(), ErrorCode::kNotFound);
  EXPECT_THAT(r.by_rank[0][0].error->what(), HasSubstr("evicted after 110 s idle"));
  EXPECT_THAT(error_of([&] { m.register_rank(idle, rank_info(0, 0)); }), HasSubstr("not_found"));
  EXPECT_NO_THROW(m.status(busy));
}

// The class: unbounded job counts. A full table first drops idle jobs, then
// answers 503 with a retry hint instead of growing.
TEST_F(PipelineFrequencyJobManagerTest, TheJobTableIsBoundedAndMakesRoomFromIdleJobs) {
  JobManagerOptions o = options();
  o.max_job_idle_time = Seconds(100.0);
  o.max_jobs = 2;
  JobManager m(make_point_solution(plan2(), "plan.py"), o);
  m.register_job(job(2));
  clock_.advance(Seconds(60.0));
  m.register_job(job(2));
  try {
    m.register_job(job(2));
    ADD_FAILURE() << "a third job was accepted";
  } catch (const RetryLater& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_TRUE(e.whole_server());
    EXPECT_EQ(http::response_for_exception(e).status, 503);
    EXPECT_TRUE(http::response_for_exception(e).headers.get("Retry-After").has_value());
    EXPECT_THAT(e.what(), HasSubstr("holds 2 jobs, its limit"));
  }
  clock_.advance(Seconds(50.0));  // the first job is now idle for 110 s
  EXPECT_NO_THROW(m.register_job(job(2)));
  EXPECT_EQ(m.job_count(), 2u);
}

// Ranks list the clocks their GPU supports: a few hundred at most.
TEST(PipelineFrequencyMessagesTest, AvailableFrequencyListsAreSizedFromTheDomain) {
  nlohmann::json body = {{"rank", 0}, {"dp_rank", 0}, {"pp_rank", 0}, {"tp_rank", 0}};
  body["available_frequencies"] = std::vector<int>(kMaxAvailableFrequencies + 1, 1410);
  try {
    parse_rank_info(body.dump());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("at most a few hundred graphics clocks"));
  }
  body["available_frequencies"] = std::vector<int>(kMaxAvailableFrequencies, 1410);
  EXPECT_NO_THROW(parse_rank_info(body.dump()));
}

TEST_F(PipelineFrequencyJobManagerTest, DumpsRanksSchedulesAndResultsAsUpstream) {
  JobManager m(make_point_solution(plan2(), "plan.py"), options());
  const std::string id = m.register_job(job(2));
  m.register_rank(id, rank_info(1, 1));
  m.register_rank(id, rank_info(0, 0));
  const std::string dir = dump_.path() + "/" + id;
  const auto ranks = parse_json_file(dir + "/ranks.json");
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0]["rank"], 0);  // sorted by rank
  EXPECT_EQ(ranks[1]["pp_rank"], 1);
  EXPECT_EQ(ranks[1]["available_frequencies"][0], 1410);
  Replies r;
  for (int round = 0; round < 2; ++round) {
    m.request_schedule(id, 1, r.to(1));
    m.request_schedule(id, 0, r.to(0));
    EXPECT_FALSE(std::filesystem::exists(dir + "/" + std::to_string(round) + ".sched.json"));
    m.report_result(id, result(1));
    m.report_result(id, result(0));
    const auto sched = parse_json_file(dir + "/" + std::to_string(round) + ".sched.json");
    EXPECT_EQ(sched[0]["rank"], 0);
    EXPECT_EQ(sched[1]["frequencies"][1], nlohmann::json::array({"backward", 810}));
    const auto prof = parse_json_file(dir + "/" + std::to_string(round) + ".prof.json");
    EXPECT_EQ(prof[1]["rank"], 1);
    EXPECT_EQ(prof[1]["iter_energy"][0], 101.0);
  }
}

TEST_F(PipelineFrequencyJobManagerTest, NoDumpsWhenDisabledAndShutdownAnswersWaitingRanks) {
  JobManagerOptions o = options();
  o.dump_data = false;
  JobManager m(make_point_solution(plan2(), "plan.py"), o);
  const std::string id = m.register_job(job(2));
  m.register_rank(id, rank_info(0, 0));
  m.register_rank(id, rank_info(1, 1));
  EXPECT_FALSE(std::filesystem::exists(dump_.path() + "/" + id));
  Replies r;
  m.request_schedule(id, 0, r.to(0));
  m.shutdown();
  ASSERT_EQ(r.count(0), 1u);
  EXPECT_THAT(r.by_rank[0][0].error->what(), HasSubstr("stopping"));
  EXPECT_THAT(error_of([&] { m.request_schedule(id, 1, r.to(1)); }), HasSubstr("stopping"));
}

}  // namespace
}  // namespace zeus::pipeline_frequency
