#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"

#include <fmt/format.h>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

class PointSolution final : public FrequencyScheduler {
 public:
  explicit PointSolution(const StagePlan& plan) {
    schedules_.reserve(plan.size());
    for (std::size_t r = 0; r < plan.size(); ++r) {
      schedules_.push_back(FrequencySchedule{static_cast<int>(r), plan[r]});
    }
  }
  std::vector<FrequencySchedule> next_schedule() override { return schedules_; }
  void observe(const std::vector<ProfilingResult>&) override {}

 private:
  std::vector<FrequencySchedule> schedules_;
};

class PointSolutionFactory final : public SchedulerFactory {
 public:
  PointSolutionFactory(StagePlan plan, std::string source)
      : plan_(std::move(plan)), source_(std::move(source)) {}

  std::string name() const override { return "PointSolution"; }

  void check_job(const JobInfo& job) const override {
    if (static_cast<std::size_t>(job.world_size) == plan_.size()) return;
    std::string hint;
    if (job.dp_degree * job.tp_degree > 1 &&
        static_cast<std::size_t>(job.pp_degree) == plan_.size()) {
      hint = "; the plan has one schedule per stage: serve it with --scheduler PointSolution3D";
    } else {
      hint = fmt::format("; serve a plan solved for {} stages", job.world_size);
    }
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the plan {} has {} stage schedules but the job has {} ranks (pp {} x "
                            "dp {} x tp {}){}",
                            source_, plan_.size(), job.world_size, job.pp_degree, job.dp_degree,
                            job.tp_degree, hint));
  }

  std::unique_ptr<FrequencyScheduler> create(const JobInfo& job,
                                             const std::vector<RankInfo>&) const override {
    check_job(job);
    return std::make_unique<PointSolution>(plan_);
  }

 private:
  const StagePlan plan_;
  const std::string source_;
};

}  // namespace

std::unique_ptr<SchedulerFactory> make_point_solution(StagePlan plan, std::string source) {
  if (plan.empty()) throw_error(ErrorCode::kInvalidArgument, "a plan needs at least one stage");
  // A rank steps through its schedule as its training loop announces
  // instructions, and it announces only these two: a plan naming another
  // would stall or fail every rank mid-iteration, so it is refused here.
  for (std::size_t stage = 0; stage < plan.size(); ++stage) {
    for (std::size_t k = 0; k < plan[stage].size(); ++k) {
      const std::string& name = plan[stage][k].instruction;
      if (name == "forward" || name == "backward") continue;
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("the plan {} names instruction '{}' (stage {}, entry {}); ranks "
                              "run only 'forward' and 'backward': serve a plan made by "
                              "`zeus perseus solve` or lowtime",
                              source, printable(name), stage, k));
    }
  }
  return std::make_unique<PointSolutionFactory>(std::move(plan), std::move(source));
}

}  // namespace zeus::pipeline_frequency
