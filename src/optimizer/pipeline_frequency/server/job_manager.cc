#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "util/text.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {

struct JobManager::Job {
  JobInfo info;
  std::vector<std::optional<RankInfo>> ranks;
  int registered = 0;
  std::set<std::tuple<int, int, int>> coordinates;  // (dp, pp, tp) taken
  std::unique_ptr<FrequencyScheduler> scheduler;    // once every rank registered
  std::optional<Error> failure;                     // the error that ended the job
  int round = 0;                                    // rounds handed out
  bool handed_out = false;             // this round's schedules answered; collecting results
  std::vector<ScheduleReply> waiting;  // per rank; empty = not asking
  int waiting_count = 0;
  std::vector<int> served;                              // schedules answered per rank
  std::vector<int> reported;                            // results received per rank
  std::vector<std::optional<ProfilingResult>> results;  // of the round handed out
  int result_count = 0;
  std::vector<FrequencySchedule> schedules;  // of the round handed out, by rank
  Seconds last_active{0};
};

namespace {

std::size_t at(int rank) { return static_cast<std::size_t>(rank); }

// When the job table is full: jobs leave only by finishing idle, so the hint
// is coarse.
constexpr Seconds kRetryAfterFullJobs{300.0};

void check_rank(const JobInfo& info, int rank, const char* what) {
  if (rank < 0 || rank >= info.world_size) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} {} is out of range: job {} has ranks 0 to {}", what, rank,
                            printable(info.job_id), info.world_size - 1));
  }
}

// Every frequency a rank is told to set must be one its GPU offered (0 means
// "leave it").
void check_supported(const FrequencySchedule& s, const RankInfo& rank) {
  for (const auto& e : s.frequencies) {
    if (e.frequency.value() == 0) continue;
    if (std::find(rank.available_frequencies.begin(), rank.available_frequencies.end(),
                  e.frequency) == rank.available_frequencies.end()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("the plan sets rank {} (stage {}) to {} MHz for '{}', which is not "
                              "among the {} graphics clocks its GPU supports: serve a plan "
                              "profiled on this GPU model",
                              rank.rank, rank.pp_rank, e.frequency.value(),
                              printable(e.instruction), rank.available_frequencies.size()));
    }
  }
}

nlohmann::json list_json(const auto& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : items) out.push_back(to_json(x));
  return out;
}

}  // namespace

JobManager::JobManager(std::shared_ptr<const SchedulerFactory> factory, JobManagerOptions options)
    : factory_(std::move(factory)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : SteadyClock::instance()) {
  if (!factory_) throw_error(ErrorCode::kInvalidArgument, "a JobManager needs a scheduler factory");
}

JobManager::~JobManager() { shutdown(); }

void JobManager::shutdown() {
  Replies replies;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, job] : jobs_) {
      for (auto& w : job->waiting) {
        if (w) {
          replies.emplace_back(
              std::move(w),
              ScheduleOutcome{std::nullopt, Error(ErrorCode::kFailedPrecondition,
                                                  "the pipeline-frequency server is stopping")});
        }
        w = nullptr;
      }
      job->waiting_count = 0;
    }
  }
  deliver(replies);
}

std::string JobManager::register_job(JobInfo info) {
  if (info.world_size < 1 || info.world_size > kMaxWorldSize ||
      static_cast<std::int64_t>(info.pp_degree) * info.dp_degree * info.tp_degree !=
          info.world_size) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("world_size {} is not pp_degree x dp_degree x tp_degree ({} x {} x {})",
                            info.world_size, info.pp_degree, info.dp_degree, info.tp_degree));
  }
  factory_->check_job(info);
  const auto when = options_.now ? options_.now() : std::chrono::system_clock::now();
  const std::string base = make_job_id(info, factory_->name(), when);
  auto job = std::make_unique<Job>();
  const auto n = at(info.world_size);
  job->ranks.resize(n);
  job->waiting.resize(n);
  job->served.assign(n, 0);
  job->reported.assign(n, 0);
  job->results.resize(n);
  std::string id;
  if (job_count() >= options_.max_jobs) evict_idle();  // a full table makes room first
  {
    std::lock_guard lock(mutex_);
    if (jobs_.size() >= options_.max_jobs) {
      throw RetryLater(fmt::format("the server holds {} jobs, its limit; a job is dropped after "
                                   "{:g} s without requests",
                                   jobs_.size(), options_.max_job_idle_time.count()),
                       kRetryAfterFullJobs, /*whole_server=*/true);
    }
    id = base;
    for (int k = 2; jobs_.count(id) != 0; ++k) id = fmt::format("{}+{}", base, k);
    info.job_id = id;
    job->info = std::move(info);
    touch_locked(*job);
    jobs_.emplace(id, std::move(job));
  }
  log::info("perseus server: registered job {}", id);
  return id;
}

void JobManager::register_rank(const std::string& job_id, RankInfo info) {
  Replies replies;
  std::optional<std::vector<RankInfo>> ranks_dump;
  {
    std::lock_guard lock(mutex_);
    Job& job = find_locked(job_id);
    const JobInfo& j = job.info;
    check_rank(j, info.rank, "rank");
    const auto in_range = [&](int v, int degree, const char* name) {
      if (v < 0 || v >= degree) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("rank {}: {} {} is out of range: the job's degree is {}", info.rank,
                                name, v, degree));
      }
    };
    in_range(info.dp_rank, j.dp_degree, "dp_rank");
    in_range(info.pp_rank, j.pp_degree, "pp_rank");
    in_range(info.tp_rank, j.tp_degree, "tp_rank");
    if (job.ranks[at(info.rank)]) {
      throw_error(ErrorCode::kAlreadyExists, fmt::format("rank {} of job {} has already registered",
                                                         info.rank, printable(job_id)));
    }
    if (job.coordinates.count({info.dp_rank, info.pp_rank, info.tp_rank}) != 0) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("rank {}: (dp_rank {}, pp_rank {}, tp_rank {}) belongs to another "
                      "rank of job {}",
                      info.rank, info.dp_rank, info.pp_rank, info.tp_rank, printable(job_id)));
    }
    if (info.available_frequencies.empty()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("rank {}: available_frequencies is empty: the rank must list the "
                              "graphics clocks its GPU supports",
                              info.rank));
    }
    job.coordinates.insert({info.dp_rank, info.pp_rank, info.tp_rank});
    job.ranks[at(info.rank)] = std::move(info);
    ++job.registered;
    touch_locked(job);
    if (job.registered == j.world_size) {
      std::vector<RankInfo> ranks;
      ranks.reserve(job.ranks.size());
      for (const auto& r : job.ranks) ranks.push_back(*r);
      try {
        job.scheduler = factory_->create(job.info, ranks);
      } catch (const Error& e) {
        fail_locked(job, e, replies);
      } catch (const std::exception& e) {
        fail_locked(job, Error(ErrorCode::kInternal, e.what()), replies);
      }
      if (options_.dump_data) ranks_dump = std::move(ranks);
      maybe_hand_out_locked(job, replies);
    }
  }
  if (ranks_dump) dump("ranks.json", job_id, list_json(*ranks_dump));
  deliver(replies);
}

void JobManager::request_schedule(const std::string& job_id, int rank, ScheduleReply reply) {
  Replies replies;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      throw_error(ErrorCode::kFailedPrecondition, "the pipeline-frequency server is stopping");
    }
    Job& job = find_locked(job_id);
    check_rank(job.info, rank, "rank");
    if (!job.ranks[at(rank)]) {
      throw_error(ErrorCode::kFailedPrecondition,
                  fmt::format("rank {} has not registered with job {}: POST /register_rank first",
                              rank, printable(job_id)));
    }
    if (job.failure) {
      replies.emplace_back(std::move(reply), ScheduleOutcome{std::nullopt, job.failure});
    } else {
      if (job.served[at(rank)] > job.reported[at(rank)]) {
        throw_error(
            ErrorCode::kFailedPrecondition,
            fmt::format("rank {} asks for schedule {} of job {} but has not reported the "
                        "result of schedule {}: POST /result first",
                        rank, job.served[at(rank)], printable(job_id), job.served[at(rank)] - 1));
      }
      auto& slot = job.waiting[at(rank)];
      if (slot) {
        replies.emplace_back(
            std::move(slot),
            ScheduleOutcome{
                std::nullopt,
                Error(ErrorCode::kFailedPrecondition,
                      fmt::format("superseded by a newer schedule request of rank {}", rank))});
      } else {
        ++job.waiting_count;
      }
      slot = std::move(reply);
      touch_locked(job);
      maybe_hand_out_locked(job, replies);
      if (job.waiting[at(rank)]) {
        log::debug("perseus server: rank {} of job {} waits for schedule {} ({} of {} ranks asked)",
                   rank, printable(job_id), job.served[at(rank)], job.waiting_count,
                   job.info.world_size);
      }
    }
  }
  deliver(replies);
}

void JobManager::report_result(const std::string& job_id, ProfilingResult result) {
  Replies replies;
  std::vector<FrequencySchedule> sched_dump;
  std::vector<ProfilingResult> prof_dump;
  int round = 0;
  {
    std::lock_guard lock(mutex_);
    Job& job = find_locked(job_id);
    const int rank = result.rank;
    check_rank(job.info, rank, "rank");
    if (job.results[at(rank)]) {
      throw_error(ErrorCode::kAlreadyExists,
                  fmt::format("rank {} already reported its result for schedule {} of job {}", rank,
                              job.round - 1, printable(job_id)));
    }
    if (job.served[at(rank)] == job.reported[at(rank)]) {
      throw_error(ErrorCode::kFailedPrecondition,
                  fmt::format("rank {} reports a result but was handed no schedule of job {} to "
                              "report on: GET /schedule first",
                              rank, printable(job_id)));
    }
    ++job.reported[at(rank)];
    job.results[at(rank)] = std::move(result);
    ++job.result_count;
    touch_locked(job);
    if (job.result_count == job.info.world_size) {
      std::vector<ProfilingResult> results;
      results.reserve(job.results.size());
      for (auto& r : job.results) {
        results.push_back(std::move(*r));
        r.reset();
      }
      job.result_count = 0;
      job.handed_out = false;
      round = job.round - 1;
      if (options_.dump_data) {
        sched_dump = job.schedules;
        prof_dump = results;
      }
      if (!job.failure) {
        try {
          job.scheduler->observe(results);
        } catch (const Error& e) {
          fail_locked(job, e, replies);
        } catch (const std::exception& e) {
          fail_locked(job, Error(ErrorCode::kInternal, e.what()), replies);
        }
      }
      maybe_hand_out_locked(job, replies);
    }
  }
  if (!sched_dump.empty()) {
    dump(fmt::format("{}.sched.json", round), job_id, list_json(sched_dump));
    dump(fmt::format("{}.prof.json", round), job_id, list_json(prof_dump));
  }
  deliver(replies);
}

void JobManager::set_straggler(const std::string& job_id, std::optional<Seconds> iteration_time) {
  if (iteration_time && !(iteration_time->count() > 0.0 && iteration_time->count() < 1e7)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("a straggler's iteration time must be positive seconds, got {:g}",
                            iteration_time->count()));
  }
  std::lock_guard lock(mutex_);
  Job& job = find_locked(job_id);
  if (!job.scheduler) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("job {} has no scheduler yet: {} of {} ranks registered",
                            printable(job_id), job.registered, job.info.world_size));
  }
  job.scheduler->set_straggler(iteration_time);
  touch_locked(job);
}

std::size_t JobManager::evict_idle() {
  Replies replies;
  std::vector<std::string> evicted;
  {
    std::lock_guard lock(mutex_);
    const Seconds now = clock_.now();
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Job& job = *it->second;
      if (now - job.last_active <= options_.max_job_idle_time) {
        ++it;
        continue;
      }
      for (auto& w : job.waiting) {
        if (w) {
          replies.emplace_back(
              std::move(w),
              ScheduleOutcome{std::nullopt, Error(ErrorCode::kNotFound,
                                                  fmt::format("job {} was evicted after {:.0f} s "
                                                              "idle",
                                                              printable(it->first),
                                                              (now - job.last_active).count()))});
        }
      }
      evicted.push_back(it->first);
      it = jobs_.erase(it);
    }
  }
  for (const auto& id : evicted) log::info("perseus server: evicted idle job {}", id);
  deliver(replies);
  return evicted.size();
}

std::size_t JobManager::job_count() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

JobStatus JobManager::status(const std::string& job_id) const {
  std::lock_guard lock(mutex_);
  const Job& job = find_locked(job_id);
  return JobStatus{job.info,  job.registered,   job.waiting_count,
                   job.round, job.result_count, job.failure.has_value()};
}

JobManager::Job& JobManager::find_locked(const std::string& job_id) const {
  const auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("unknown job {}: register it first (POST /register_job), or it was "
                            "evicted after being idle",
                            printable(job_id)));
  }
  return *it->second;
}

void JobManager::maybe_hand_out_locked(Job& job, Replies& out) {
  if (job.failure || !job.scheduler || job.handed_out || job.waiting_count != job.info.world_size) {
    return;
  }
  std::vector<FrequencySchedule> schedules;
  try {
    auto next = job.scheduler->next_schedule();
    if (next.size() != job.ranks.size()) {
      throw_error(ErrorCode::kInternal,
                  fmt::format("the scheduler returned {} schedules for {} ranks", next.size(),
                              job.ranks.size()));
    }
    schedules.resize(next.size());
    std::vector<char> seen(next.size(), 0);
    for (auto& s : next) {
      if (s.rank < 0 || at(s.rank) >= next.size() || seen[at(s.rank)]) {
        throw_error(ErrorCode::kInternal,
                    fmt::format("the scheduler returned a bad or repeated rank {}", s.rank));
      }
      seen[at(s.rank)] = 1;
      check_supported(s, *job.ranks[at(s.rank)]);
      schedules[at(s.rank)] = std::move(s);
    }
  } catch (const Error& e) {
    fail_locked(job, e, out);
    return;
  } catch (const std::exception& e) {
    fail_locked(job, Error(ErrorCode::kInternal, e.what()), out);
    return;
  }
  for (std::size_t r = 0; r < schedules.size(); ++r) {
    out.emplace_back(std::move(job.waiting[r]), ScheduleOutcome{schedules[r], std::nullopt});
    job.waiting[r] = nullptr;
    ++job.served[r];
  }
  job.waiting_count = 0;
  job.handed_out = true;
  job.schedules = std::move(schedules);
  ++job.round;
  touch_locked(job);
}

void JobManager::fail_locked(Job& job, const Error& error, Replies& out) {
  if (!job.failure) {
    log::error("perseus server: job {} failed: {}", job.info.job_id, error.what());
    job.failure = error;
  }
  for (auto& w : job.waiting) {
    if (w) out.emplace_back(std::move(w), ScheduleOutcome{std::nullopt, error});
    w = nullptr;
  }
  job.waiting_count = 0;
}

void JobManager::touch_locked(Job& job) { job.last_active = clock_.now(); }

void JobManager::dump(const std::string& file, const std::string& job_id,
                      const nlohmann::json& value) const {
  const std::string path = options_.dump_dir + "/" + job_id + "/" + file;
  try {
    write_file_atomically(path, value.dump() + "\n");
  } catch (const std::exception& e) {
    log::warn("perseus server: could not dump {}: {}", printable(path, 4096), e.what());
  }
}

void JobManager::deliver(Replies& replies) {
  for (auto& [reply, outcome] : replies) {
    try {
      reply(std::move(outcome));
    } catch (const std::exception& e) {
      log::error("perseus server: delivering a schedule failed: {}", e.what());
    }
  }
}

IdleJobEvictor::IdleJobEvictor(JobManager& manager, Seconds period) {
  thread_ = std::thread([this, &manager, period] {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (wake_.wait_for(lock, period, [this] { return stop_; })) break;
      lock.unlock();
      try {
        manager.evict_idle();
      } catch (const std::exception& e) {
        log::error("perseus server: evicting idle jobs failed: {}", e.what());
      }
      lock.lock();
    }
  });
}

IdleJobEvictor::~IdleJobEvictor() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace zeus::pipeline_frequency
