// Frequency schedulers: the policy of the pipeline-frequency server. A
// SchedulerFactory is configured once per server; it makes one
// FrequencyScheduler per job once every rank has registered. The job manager
// then runs rounds: all ranks ask for a schedule, each gets its own, each
// reports a ProfilingResult, the scheduler observes them and may hand out
// something else next round. observe() is the extension point for schedulers
// that react to measurements (the straggler-aware one, straggler_scheduler.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/common/messages.h"
#include "zeus/util/units.h"

namespace zeus::pipeline_frequency {

// One job's policy. The job manager calls it under the job's lock, one call at
// a time, so implementations need no locking of their own.
class FrequencyScheduler {
 public:
  virtual ~FrequencyScheduler() = default;

  // The schedules of the next round: one per rank of the job it was created
  // for, in any order. Errors reach every waiting rank (kInvalidArgument as
  // 400, anything else as 500) and end the job.
  virtual std::vector<FrequencySchedule> next_schedule() = 0;
  // The results of the round just run, one per rank, in any order.
  virtual void observe(const std::vector<ProfilingResult>& results) = 0;
  // A straggler elsewhere holds every pipeline to `iteration_time` (nullopt:
  // it recovered). Takes effect at the next round. The default refuses
  // (kFailedPrecondition): a fixed plan cannot react.
  virtual void set_straggler(std::optional<Seconds> iteration_time);
};

// Makes the scheduler of each job. Immutable once built; every method is
// const and safe from any thread.
class SchedulerFactory {
 public:
  virtual ~SchedulerFactory() = default;

  // The scheduler's name in job ids ("PointSolution", "PointSolution3D").
  virtual std::string name() const = 0;
  // Refuses, at registration, a job this factory cannot serve
  // (kInvalidArgument saying why: a plan for another number of stages).
  virtual void check_job(const JobInfo& job) const = 0;
  // `ranks` holds one RankInfo per rank of `job`, sorted by rank.
  virtual std::unique_ptr<FrequencyScheduler> create(const JobInfo& job,
                                                     const std::vector<RankInfo>& ranks) const = 0;
};

// One iteration's schedule of every pipeline stage (index = stage), each in
// execution order: what a plan file or a frontier point holds.
using StagePlan = std::vector<std::vector<ScheduleEntry>>;

}  // namespace zeus::pipeline_frequency
