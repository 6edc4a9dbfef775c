// The pipeline-frequency server's state: every job, its ranks and its
// schedule rounds, as upstream's JobManager. Independent of HTTP: a schedule
// request hands in a callback that is called once, maybe much later, so a
// waiting rank holds no thread (the HTTP adapter passes its Responder).
//
// A job's life: rank 0 registers it (register_job, which checks it against
// the scheduler factory and assigns upstream's id); every rank registers
// (register_rank); once all have, the scheduler is created. Then rounds:
//  1. every rank asks for its schedule (request_schedule); requests wait until
//     the last rank has asked, then all are answered at once;
//  2. every rank reports a ProfilingResult (report_result);
//  3. the round is dumped and the scheduler observes the results.
// A rank asks again only after reporting (upstream would silently hang; here
// it is a 409). Jobs idle for longer than max_job_idle_time are evicted
// (evict_idle, run periodically by IdleJobEvictor); waiting ranks of an
// evicted job get kNotFound. Dumps as upstream: <dump_dir>/<job_id>/ranks.json,
// <n>.sched.json and <n>.prof.json per round.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/common/messages.h"
#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

struct JobManagerOptions {
  bool dump_data = true;
  std::string dump_dir = "./dump";
  // A job that has seen no request this long is dropped (its waiting ranks
  // get 404). Upstream keeps them a week; a day frees the slots sooner.
  Seconds max_job_idle_time{24.0 * 3600};
  // Jobs held at once; a registration beyond is 503 with Retry-After (after
  // idle jobs were evicted), so the server's memory stays bounded.
  std::size_t max_jobs = 1024;
  // Measures idleness; nullptr: SteadyClock::instance().
  Clock* clock = nullptr;
  // Stamps job ids; empty: the system clock.
  std::function<std::chrono::system_clock::time_point()> now;
};

// What a schedule request gets: the schedule, or the error that ended it.
struct ScheduleOutcome {
  std::optional<FrequencySchedule> schedule;
  std::optional<Error> error;
};
using ScheduleReply = std::function<void(ScheduleOutcome)>;

// A job as seen from outside (tests, benchmarks, logs).
struct JobStatus {
  JobInfo info;
  int registered_ranks = 0;
  int waiting_requests = 0;  // schedule requests not answered yet
  int round = 0;             // schedule rounds handed out so far
  int results = 0;           // results of the current round received
  bool failed = false;
};

// Thread-safe: any number of threads may call any method. mutex_ guards the
// job table and every job in it; callbacks are invoked after it is released,
// on the thread whose call completed the round.
class JobManager {
 public:
  JobManager(std::shared_ptr<const SchedulerFactory> factory, JobManagerOptions options = {});
  ~JobManager();  // shutdown()
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Validated job (parse_job_info) -> its id. kInvalidArgument when the
  // factory refuses the job. Ids are unique: a second job with the same
  // parameters in the same second gets "+<n>" appended.
  std::string register_job(JobInfo info);
  // kNotFound (unknown job), kInvalidArgument (rank or dp/pp/tp rank out of
  // range, coordinates of another rank, no frequencies), kAlreadyExists
  // (rank registered before).
  void register_rank(const std::string& job_id, RankInfo info);
  // Calls `reply` once: when every rank has asked (this request included),
  // or with the job's error. Throws, without calling reply, for an unknown
  // job, a rank out of range (kInvalidArgument) or one that has not
  // registered or not reported its last result (kFailedPrecondition). A rank
  // asking again while its request waits supersedes it (the older request
  // gets kFailedPrecondition).
  void request_schedule(const std::string& job_id, int rank, ScheduleReply reply);
  // kNotFound, kInvalidArgument (rank), kFailedPrecondition (no schedule of
  // this round handed to the rank yet), kAlreadyExists (reported already).
  void report_result(const std::string& job_id, ProfilingResult result);
  // Passes a straggler target to the job's scheduler (next round). kNotFound;
  // kFailedPrecondition before every rank registered or when the scheduler
  // cannot react; kInvalidArgument for a non-positive time.
  void set_straggler(const std::string& job_id, std::optional<Seconds> iteration_time);

  // Answers every waiting request with kFailedPrecondition ("the server is
  // stopping") and refuses new ones, so an HTTP server can drain at once.
  void shutdown();

  // Removes jobs idle for longer than max_job_idle_time; returns how many.
  std::size_t evict_idle();
  std::size_t job_count() const;
  // kNotFound for an unknown job.
  JobStatus status(const std::string& job_id) const;
  const SchedulerFactory& factory() const { return *factory_; }

 private:
  struct Job;
  using Replies = std::vector<std::pair<ScheduleReply, ScheduleOutcome>>;
  Job& find_locked(const std::string& job_id) const;             // requires mutex_
  void maybe_hand_out_locked(Job& job, Replies& out);            // requires mutex_
  void fail_locked(Job& job, const Error& error, Replies& out);  // requires mutex_
  void touch_locked(Job& job);                                   // requires mutex_
  void dump(const std::string& file, const std::string& job_id, const nlohmann::json& value) const;
  static void deliver(Replies& replies);

  const std::shared_ptr<const SchedulerFactory> factory_;
  const JobManagerOptions options_;
  Clock& clock_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Job>> jobs_;
  bool stopping_ = false;
};

// Runs JobManager::evict_idle every `period` on its own thread until
// destroyed (upstream: every 60 s).
class IdleJobEvictor {
 public:
  explicit IdleJobEvictor(JobManager& manager, Seconds period = Seconds(60.0));
  ~IdleJobEvictor();
  IdleJobEvictor(const IdleJobEvictor&) = delete;
  IdleJobEvictor& operator=(const IdleJobEvictor&) = delete;

 private:
  std::mutex mutex_;  // guards stop_
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace zeus::pipeline_frequency
