#include "zeus/optimizer/batch_size/batch_size_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "zeus/util/error.h"

namespace zeus::batch_size {

std::string_view trial_kind_name(TrialKind kind) {
  switch (kind) {
    case TrialKind::kExploration:
      return "exploration";
    case TrialKind::kConcurrent:
      return "concurrent";
    case TrialKind::kSampling:
      return "sampling";
  }
  return "unknown";
}

TrialKind parse_trial_kind(std::string_view s) {
  if (s == "exploration") return TrialKind::kExploration;
  if (s == "concurrent") return TrialKind::kConcurrent;
  if (s == "sampling") return TrialKind::kSampling;
  throw_error(ErrorCode::kParse, fmt::format("unknown trial kind '{}'", s));
}

namespace {

BatchSizeSearchOptions validated(BatchSizeSearchOptions o) {
  std::sort(o.batch_sizes.begin(), o.batch_sizes.end());
  if (o.batch_sizes.empty() || o.batch_sizes.front() <= 0) {
    throw_error(ErrorCode::kInvalidArgument,
                "batch-size search: batch_sizes must be a non-empty list of positive sizes");
  }
  if (o.num_pruning_rounds < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("batch-size search: num_pruning_rounds must be >= 0, got {}",
                            o.num_pruning_rounds));
  }
  return o;
}

}  // namespace

BatchSizeSearch::BatchSizeSearch(BatchSizeSearchOptions options)
    : BatchSizeSearch(validated(options),
                      PruningExplorer(options.batch_sizes, options.default_batch_size,
                                      options.num_pruning_rounds)) {
  // Rejects bad MAB options now rather than when sampling begins.
  GaussianThompsonSampling check(options_.batch_sizes, options_.mab);
}

BatchSizeSearch::BatchSizeSearch(BatchSizeSearchOptions options, PruningExplorer explorer)
    : options_(std::move(options)), explorer_(std::move(explorer)) {
  state_.rng = Rng(options_.seed);
  state_.min_cost = Joules(std::numeric_limits<double>::infinity());
  state_.min_cost_batch_size = options_.default_batch_size;
}

BatchSizeSearch BatchSizeSearch::restore(BatchSizeSearchOptions options, PruningExplorer explorer,
                                         std::optional<GaussianThompsonSampling> bandit,
                                         State state) {
  BatchSizeSearch s(validated(std::move(options)), std::move(explorer));
  if (state.stage == SearchStage::kSampling && !bandit) {
    throw_error(ErrorCode::kParse, "batch-size search state: the sampling stage needs a bandit");
  }
  s.bandit_ = std::move(bandit);
  s.state_ = std::move(state);
  return s;
}

std::optional<Joules> BatchSizeSearch::min_cost() const {
  if (std::isinf(state_.min_cost.value())) return std::nullopt;
  return state_.min_cost;
}

void BatchSizeSearch::start_sampling() {
  bandit_.emplace(explorer_.survivors(), options_.mab);
  for (const auto& arm : bandit_->arms()) {
    const auto it = state_.pruning_costs.find(arm.batch_size);
    if (it != state_.pruning_costs.end()) bandit_->fit(arm.batch_size, it->second);
  }
  state_.pruning_costs.clear();
  state_.stage = SearchStage::kSampling;
}

Trial BatchSizeSearch::next_trial() {
  Trial t;
  if (state_.stage == SearchStage::kPruning) {
    if (options_.fail_on_round_without_survivor) {
      if (const auto round = explorer_.round_without_survivor()) {
        throw_error(ErrorCode::kFailedPrecondition,
                    fmt::format("no batch size reached the target metric in pruning round {} of "
                                "{}, so there is nothing to choose from",
                                *round + 1, options_.num_pruning_rounds));
      }
    }
    const auto step = explorer_.next();
    switch (step.action) {
      case PruningExplorer::Action::kExplore:
        t.batch_size = step.batch_size;
        t.kind = TrialKind::kExploration;
        break;
      case PruningExplorer::Action::kWait:
        // Another run is exploring; this one runs the cheapest size so far.
        t.batch_size = state_.min_cost_batch_size;
        t.kind = TrialKind::kConcurrent;
        break;
      case PruningExplorer::Action::kDone:
        start_sampling();
        break;
    }
  }
  if (state_.stage == SearchStage::kSampling) {
    t.batch_size = bandit_->predict(state_.rng);
    t.kind = TrialKind::kSampling;
  }
  t.id = state_.next_trial_id++;
  if (t.kind == TrialKind::kExploration) explorer_.dispatched(t.id, t.batch_size);
  state_.in_flight.emplace(t.id, t);
  return t;
}

void BatchSizeSearch::report(std::int64_t trial_id, Joules cost, bool converged) {
  const auto it = state_.in_flight.find(trial_id);
  if (it == state_.in_flight.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("batch-size search: trial {} is not in flight (unknown or already "
                            "reported)",
                            trial_id));
  }
  const Trial t = it->second;
  state_.in_flight.erase(it);
  if (cost < state_.min_cost) {
    state_.min_cost = cost;
    state_.min_cost_batch_size = t.batch_size;
  }
  if (state_.stage == SearchStage::kPruning) {
    state_.pruning_costs[t.batch_size].push_back(cost);
    if (t.kind == TrialKind::kExploration) explorer_.finished(t.id, cost, converged);
  } else if (bandit_->has_arm(t.batch_size)) {
    bandit_->observe(t.batch_size, cost);
  }
}

void BatchSizeSearch::cancel(std::int64_t trial_id) {
  const auto it = state_.in_flight.find(trial_id);
  if (it == state_.in_flight.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("batch-size search: trial {} is not in flight", trial_id));
  }
  if (it->second.kind == TrialKind::kExploration) explorer_.cancelled(trial_id);
  state_.in_flight.erase(it);
}

}  // namespace zeus::batch_size
