#include "zeus/optimizer/pipeline_frequency/server/three_d_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {

namespace {

JobInfo pipeline_view(const JobInfo& job) {
  JobInfo view = job;
  view.dp_degree = 1;
  view.tp_degree = 1;
  view.world_size = job.pp_degree;
  return view;
}

// Element-wise fold of equally indexed values, cut to the shortest list.
template <class T, class Fold>
std::vector<T> fold_lists(const std::vector<const std::vector<T>*>& lists, Fold fold) {
  if (lists.empty()) return {};
  std::size_t n = lists.front()->size();
  for (const auto* l : lists) n = std::min(n, l->size());
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = (*lists.front())[i];
    for (std::size_t k = 1; k < lists.size(); ++k) out[i] = fold(out[i], (*lists[k])[i]);
  }
  return out;
}

template <class T, class Fold>
std::map<std::string, std::vector<std::vector<T>>> fold_breakdowns(
    const std::vector<const std::map<std::string, std::vector<std::vector<T>>>*>& maps, Fold fold) {
  std::map<std::string, std::vector<std::vector<T>>> out;
  if (maps.empty()) return out;
  for (const auto& [name, first] : *maps.front()) {
    std::vector<const std::vector<std::vector<T>>*> per_rank;
    for (const auto* m : maps) {
      const auto it = m->find(name);
      if (it == m->end()) break;
      per_rank.push_back(&it->second);
    }
    if (per_rank.size() != maps.size()) continue;  // not every rank broke this one down
    std::size_t n = first.size();
    for (const auto* l : per_rank) n = std::min(n, l->size());
    auto& dst = out[name];
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<const std::vector<T>*> rows;
      for (const auto* l : per_rank) rows.push_back(&(*l)[i]);
      dst.push_back(fold_lists(rows, fold));
    }
  }
  return out;
}

class ThreeDScheduler final : public FrequencyScheduler {
 public:
  ThreeDScheduler(std::unique_ptr<FrequencyScheduler> inner, std::vector<RankInfo> ranks,
                  int pp_degree)
      : inner_(std::move(inner)), ranks_(std::move(ranks)), pp_degree_(pp_degree) {}

  std::vector<FrequencySchedule> next_schedule() override {
    auto per_stage = inner_->next_schedule();
    std::vector<const FrequencySchedule*> by_stage(static_cast<std::size_t>(pp_degree_), nullptr);
    for (const auto& s : per_stage) {
      if (s.rank < 0 || s.rank >= pp_degree_ || by_stage[static_cast<std::size_t>(s.rank)]) {
        throw_error(ErrorCode::kInternal,
                    fmt::format("the wrapped scheduler returned a schedule for stage {} of {}",
                                s.rank, pp_degree_));
      }
      by_stage[static_cast<std::size_t>(s.rank)] = &s;
    }
    std::vector<FrequencySchedule> out;
    out.reserve(ranks_.size());
    for (const auto& r : ranks_) {
      const auto* s = by_stage[static_cast<std::size_t>(r.pp_rank)];
      if (s == nullptr) {
        throw_error(ErrorCode::kInternal,
                    fmt::format("the wrapped scheduler gave stage {} no schedule", r.pp_rank));
      }
      out.push_back(FrequencySchedule{r.rank, s->frequencies});
    }
    return out;
  }

  void observe(const std::vector<ProfilingResult>& results) override {
    inner_->observe(aggregate_per_stage(results, ranks_, pp_degree_));
  }

  void set_straggler(std::optional<Seconds> iteration_time) override {
    inner_->set_straggler(iteration_time);
  }

 private:
  std::unique_ptr<FrequencyScheduler> inner_;
  const std::vector<RankInfo> ranks_;
  const int pp_degree_;
};

class ThreeDFactory final : public SchedulerFactory {
 public:
  explicit ThreeDFactory(std::unique_ptr<SchedulerFactory> inner) : inner_(std::move(inner)) {}

  std::string name() const override { return inner_->name() + "3D"; }
  void check_job(const JobInfo& job) const override { inner_->check_job(pipeline_view(job)); }

  std::unique_ptr<FrequencyScheduler> create(const JobInfo& job,
                                             const std::vector<RankInfo>& ranks) const override {
    std::vector<RankInfo> stage_ranks;
    for (const auto& r : ranks) {
      if (r.dp_rank == 0 && r.tp_rank == 0) {
        RankInfo s = r;
        s.rank = r.pp_rank;
        stage_ranks.push_back(std::move(s));
      }
    }
    std::sort(stage_ranks.begin(), stage_ranks.end(),
              [](const RankInfo& a, const RankInfo& b) { return a.rank < b.rank; });
    if (stage_ranks.size() != static_cast<std::size_t>(job.pp_degree)) {
      throw_error(ErrorCode::kInternal, "every stage needs a rank with dp_rank 0 and tp_rank 0");
    }
    return std::make_unique<ThreeDScheduler>(inner_->create(pipeline_view(job), stage_ranks), ranks,
                                             job.pp_degree);
  }

 private:
  std::unique_ptr<SchedulerFactory> inner_;
};

}  // namespace

std::vector<ProfilingResult> aggregate_per_stage(const std::vector<ProfilingResult>& results,
                                                 const std::vector<RankInfo>& ranks,
                                                 int pp_degree) {
  std::unordered_map<int, int> stage_of;
  for (const auto& r : ranks) stage_of[r.rank] = r.pp_rank;
  std::vector<std::vector<const ProfilingResult*>> per_stage(static_cast<std::size_t>(pp_degree));
  for (const auto& res : results) {
    const auto it = stage_of.find(res.rank);
    if (it == stage_of.end() || it->second < 0 || it->second >= pp_degree) {
      throw_error(ErrorCode::kInternal, fmt::format("a result from unknown rank {}", res.rank));
    }
    per_stage[static_cast<std::size_t>(it->second)].push_back(&res);
  }
  const auto max = [](auto a, auto b) { return std::max(a, b); };
  const auto sum = [](auto a, auto b) { return a + b; };
  std::vector<ProfilingResult> out;
  out.reserve(per_stage.size());
  for (std::size_t s = 0; s < per_stage.size(); ++s) {
    ProfilingResult agg;
    agg.rank = static_cast<int>(s);
    std::vector<const std::vector<Seconds>*> times;
    std::vector<const std::vector<Joules>*> energies;
    std::vector<const std::map<std::string, std::vector<std::vector<Seconds>>>*> tb;
    std::vector<const std::map<std::string, std::vector<std::vector<Joules>>>*> eb;
    for (const auto* r : per_stage[s]) {
      times.push_back(&r->iter_time);
      energies.push_back(&r->iter_energy);
      tb.push_back(&r->time_breakdown);
      eb.push_back(&r->energy_breakdown);
      if (r->iter_time.size() != per_stage[s].front()->iter_time.size()) {
        log::warn(
            "perseus server: stage {}: ranks reported different numbers of iterations; "
            "using the shortest",
            s);
      }
    }
    agg.iter_time = fold_lists(times, max);
    agg.iter_energy = fold_lists(energies, sum);
    agg.time_breakdown = fold_breakdowns(tb, max);
    agg.energy_breakdown = fold_breakdowns(eb, sum);
    out.push_back(std::move(agg));
  }
  return out;
}

std::unique_ptr<SchedulerFactory> make_3d_parallel(std::unique_ptr<SchedulerFactory> inner) {
  return std::make_unique<ThreeDFactory>(std::move(inner));
}

}  // namespace zeus::pipeline_frequency
