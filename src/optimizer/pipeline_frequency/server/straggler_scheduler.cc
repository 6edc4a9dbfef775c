#include "zeus/optimizer/pipeline_frequency/server/straggler_scheduler.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numeric>

#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {

namespace {

class StragglerAware final : public FrequencyScheduler {
 public:
  StragglerAware(std::shared_ptr<const pipeline_frequency::StoredSolution> frontier,
                 std::size_t initial, double tolerance)
      : frontier_(std::move(frontier)),
        initial_(initial),
        current_(initial),
        tolerance_(tolerance) {}

  std::vector<FrequencySchedule> next_schedule() override {
    const StagePlan& plan = plan_at(current_);
    std::vector<FrequencySchedule> out;
    out.reserve(plan.size());
    for (std::size_t r = 0; r < plan.size(); ++r) {
      out.push_back(FrequencySchedule{static_cast<int>(r), plan[r]});
    }
    return out;
  }

  void observe(const std::vector<ProfilingResult>& results) override {
    // The slowest rank's mean iteration: data-parallel synchronization makes
    // every rank of a pipeline wait for a straggler anywhere in the job.
    double measured = 0.0;
    for (const auto& r : results) {
      if (r.iter_time.empty()) continue;
      const double sum = std::accumulate(r.iter_time.begin(), r.iter_time.end(), 0.0,
                                         [](double a, Seconds t) { return a + t.count(); });
      measured = std::max(measured, sum / static_cast<double>(r.iter_time.size()));
    }
    if (measured <= 0.0) return;
    const double aimed = target_ ? target_->count() : point_time(current_);
    if (measured <= aimed * (1.0 + tolerance_)) return;
    log::info(
        "perseus server: straggler: ranks report {:.6g} s per iteration, {:.1f}% above the {:.6g} "
        "s aimed at",
        measured, 100.0 * (measured / aimed - 1.0), aimed);
    switch_to(Seconds(measured));
  }

  void set_straggler(std::optional<Seconds> iteration_time) override {
    if (!iteration_time) {
      target_.reset();
      current_ = initial_;
      log::info("perseus server: straggler cleared; back to the plan at {:.6g} s",
                point_time(current_));
      return;
    }
    switch_to(*iteration_time);
  }

 private:
  void switch_to(Seconds t_prime) {
    target_ = t_prime;
    current_ = pipeline_frequency::select_straggler(frontier_->points, t_prime);
    log::info(
        "perseus server: straggler target {:.6g} s: serving the plan at {:.6g} s, {:.6g} J "
        "(frontier point {})",
        t_prime.count(), point_time(current_), frontier_->points[current_].energy.value(),
        current_);
  }

  double point_time(std::size_t i) const { return frontier_->points[i].time.count(); }

  const StagePlan& plan_at(std::size_t i) {
    auto it = plans_.find(i);
    if (it == plans_.end()) it = plans_.emplace(i, stage_plan(*frontier_, i)).first;
    return it->second;
  }

  const std::shared_ptr<const pipeline_frequency::StoredSolution> frontier_;
  const std::size_t initial_;
  std::size_t current_;
  const double tolerance_;
  std::optional<Seconds> target_;
  std::map<std::size_t, StagePlan> plans_;  // the points served so far
};

class StragglerAwareFactory final : public SchedulerFactory {
 public:
  StragglerAwareFactory(std::shared_ptr<const pipeline_frequency::StoredSolution> frontier,
                        std::string source, StragglerOptions options)
      : frontier_(std::move(frontier)), source_(std::move(source)), options_(std::move(options)) {
    if (!(options_.tolerance > 0.0 && options_.tolerance <= 10.0)) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("straggler tolerance must be in (0, 10], got {:g}", options_.tolerance));
    }
    initial_ = pipeline_frequency::select_target(frontier_->points, options_.initial_target);
  }

  std::string name() const override { return "StragglerAware"; }

  void check_job(const JobInfo& job) const override {
    if (job.world_size == frontier_->num_stages) return;
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("the frontier {} is for {} stages but the job has {} ranks (pp {} x dp {} x "
                    "tp {}){}",
                    source_, frontier_->num_stages, job.world_size, job.pp_degree, job.dp_degree,
                    job.tp_degree,
                    job.pp_degree == frontier_->num_stages
                        ? "; serve it with --scheduler StragglerAware3D"
                        : ""));
  }

  std::unique_ptr<FrequencyScheduler> create(const JobInfo& job,
                                             const std::vector<RankInfo>&) const override {
    check_job(job);
    return std::make_unique<StragglerAware>(frontier_, initial_, options_.tolerance);
  }

 private:
  std::shared_ptr<const pipeline_frequency::StoredSolution> frontier_;
  std::string source_;
  StragglerOptions options_;
  std::size_t initial_ = 0;
};

}  // namespace

std::unique_ptr<SchedulerFactory> make_straggler_aware(
    std::shared_ptr<const pipeline_frequency::StoredSolution> frontier, std::string source,
    StragglerOptions options) {
  return std::make_unique<StragglerAwareFactory>(std::move(frontier), std::move(source),
                                                 std::move(options));
}

}  // namespace zeus::pipeline_frequency
