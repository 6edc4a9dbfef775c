#include "zeus/optimizer/batch_size/pruning_gts_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "json_number.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {

using detail::decode_double;
using detail::encode_double;
using detail::field;

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

namespace {

TrialKind parse_kind(const std::string& s) {
  if (s == "exploration") return TrialKind::kExploration;
  if (s == "concurrent") return TrialKind::kConcurrent;
  if (s == "sampling") return TrialKind::kSampling;
  throw_error(ErrorCode::kParse, "policy state: unknown trial kind '" + s + "'");
}

PruningGtsOptions validated(PruningGtsOptions o) {
  std::sort(o.batch_sizes.begin(), o.batch_sizes.end());
  if (o.batch_sizes.empty() || o.batch_sizes.front() <= 0) {
    throw_error(ErrorCode::kInvalidArgument,
                "batch-size policy: batch_sizes must be a non-empty list of positive sizes");
  }
  if (o.num_pruning_rounds < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("batch-size policy: num_pruning_rounds must be >= 0, got {}",
                            o.num_pruning_rounds));
  }
  return o;
}

}  // namespace

PruningGtsPolicy::PruningGtsPolicy(PruningGtsOptions options)
    : PruningGtsPolicy(validated(options),
                       PruningExplorer(options.batch_sizes, options.default_batch_size,
                                       options.num_pruning_rounds)) {
  // Rejects bad MAB options now rather than when sampling begins.
  GaussianThompsonSampling check(options_.batch_sizes, options_.mab);
}

PruningGtsPolicy::PruningGtsPolicy(PruningGtsOptions options, PruningExplorer explorer)
    : options_(std::move(options)),
      explorer_(std::move(explorer)),
      rng_(options_.seed),
      min_cost_(std::numeric_limits<double>::infinity()),
      best_batch_size_(options_.default_batch_size) {}

std::optional<double> PruningGtsPolicy::min_cost() const {
  if (std::isinf(min_cost_)) return std::nullopt;
  return min_cost_;
}

void PruningGtsPolicy::start_sampling() {
  bandit_.emplace(explorer_.survivors(), options_.mab);
  for (const auto& arm : bandit_->arms()) {
    const auto it = pruning_costs_.find(arm.batch_size);
    if (it != pruning_costs_.end()) bandit_->fit(arm.batch_size, it->second);
  }
  pruning_costs_.clear();
  stage_ = PolicyStage::kSampling;
}

Trial PruningGtsPolicy::next_trial() {
  Trial t;
  t.id = next_id_++;
  if (stage_ == PolicyStage::kPruning) {
    const auto step = explorer_.next();
    switch (step.action) {
      case PruningExplorer::Action::kExplore:
        t.batch_size = step.batch_size;
        t.kind = TrialKind::kExploration;
        explorer_.dispatched(t.id, t.batch_size);
        break;
      case PruningExplorer::Action::kWait:
        // Another job is exploring; this one runs the best size known so far.
        t.batch_size = best_batch_size_;
        t.kind = TrialKind::kConcurrent;
        break;
      case PruningExplorer::Action::kDone:
        start_sampling();
        break;
    }
  }
  if (stage_ == PolicyStage::kSampling) {
    t.batch_size = bandit_->predict(rng_);
    t.kind = TrialKind::kSampling;
  }
  in_flight_.emplace(t.id, t);
  return t;
}

void PruningGtsPolicy::report(std::int64_t trial_id, double cost, bool converged) {
  const auto it = in_flight_.find(trial_id);
  if (it == in_flight_.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("batch-size policy: trial {} is not in flight (unknown or already "
                            "reported)",
                            trial_id));
  }
  const Trial t = it->second;
  in_flight_.erase(it);
  if (converged && cost < min_cost_) {
    min_cost_ = cost;
    best_batch_size_ = t.batch_size;
  }
  if (stage_ == PolicyStage::kPruning) {
    pruning_costs_[t.batch_size].push_back(cost);
    if (t.kind == TrialKind::kExploration) explorer_.finished(t.id, cost, converged);
  } else if (bandit_->has_arm(t.batch_size)) {
    bandit_->observe(t.batch_size, cost);
  }
}

void PruningGtsPolicy::cancel(std::int64_t trial_id) {
  const auto it = in_flight_.find(trial_id);
  if (it == in_flight_.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("batch-size policy: trial {} is not in flight", trial_id));
  }
  if (it->second.kind == TrialKind::kExploration) explorer_.cancelled(trial_id);
  in_flight_.erase(it);
}

nlohmann::json PruningGtsPolicy::to_json() const {
  nlohmann::json flight = nlohmann::json::array();
  for (const auto& [id, t] : in_flight_) {
    flight.push_back({{"id", id}, {"batch_size", t.batch_size}, {"kind", trial_kind_name(t.kind)}});
  }
  nlohmann::json costs = nlohmann::json::array();
  for (const auto& [b, list] : pruning_costs_) {
    nlohmann::json c = nlohmann::json::array();
    for (double x : list) c.push_back(encode_double(x));
    costs.push_back({{"batch_size", b}, {"costs", c}});
  }
  nlohmann::json j = {{"version", 1},
                      {"options",
                       {{"batch_sizes", options_.batch_sizes},
                        {"default_batch_size", options_.default_batch_size},
                        {"num_pruning_rounds", options_.num_pruning_rounds},
                        {"prior_mean", encode_double(options_.mab.prior_mean)},
                        {"prior_precision", encode_double(options_.mab.prior_precision)},
                        {"num_explorations", options_.mab.num_explorations},
                        {"window_size", options_.mab.window_size},
                        {"seed", fmt::format("{}", options_.seed)}}},
                      {"stage", stage_ == PolicyStage::kPruning ? "pruning" : "sampling"},
                      {"explorer", explorer_.to_json()},
                      {"bandit", bandit_ ? bandit_->to_json() : nlohmann::json(nullptr)},
                      {"rng", rng_.to_json()},
                      {"next_trial_id", next_id_},
                      {"in_flight", flight},
                      {"pruning_costs", costs},
                      {"min_cost", encode_double(min_cost_)},
                      {"best_batch_size", best_batch_size_}};
  return j;
}

PruningGtsPolicy PruningGtsPolicy::from_json(const nlohmann::json& j) {
  try {
    if (field(j, "version").get<int>() != 1) {
      throw_error(ErrorCode::kParse, "policy state: unsupported version " + j["version"].dump());
    }
    const auto& o = field(j, "options");
    PruningGtsOptions opt;
    opt.batch_sizes = field(o, "batch_sizes").get<std::vector<int>>();
    opt.default_batch_size = field(o, "default_batch_size").get<int>();
    opt.num_pruning_rounds = field(o, "num_pruning_rounds").get<int>();
    opt.mab.prior_mean = decode_double(field(o, "prior_mean"));
    opt.mab.prior_precision = decode_double(field(o, "prior_precision"));
    opt.mab.num_explorations = field(o, "num_explorations").get<int>();
    opt.mab.window_size = field(o, "window_size").get<int>();
    opt.seed = std::stoull(field(o, "seed").get<std::string>());
    PruningGtsPolicy p(validated(opt), PruningExplorer::from_json(field(j, "explorer")));
    const auto stage = field(j, "stage").get<std::string>();
    if (stage != "pruning" && stage != "sampling") {
      throw_error(ErrorCode::kParse, "policy state: unknown stage '" + stage + "'");
    }
    p.stage_ = stage == "pruning" ? PolicyStage::kPruning : PolicyStage::kSampling;
    if (p.stage_ == PolicyStage::kSampling) {
      p.bandit_.emplace(GaussianThompsonSampling::from_json(field(j, "bandit")));
    }
    p.rng_ = Rng::from_json(field(j, "rng"));
    p.next_id_ = field(j, "next_trial_id").get<std::int64_t>();
    for (const auto& t : field(j, "in_flight")) {
      Trial x{field(t, "id").get<std::int64_t>(), field(t, "batch_size").get<int>(),
              parse_kind(field(t, "kind").get<std::string>())};
      p.in_flight_.emplace(x.id, x);
    }
    for (const auto& c : field(j, "pruning_costs")) {
      auto& list = p.pruning_costs_[field(c, "batch_size").get<int>()];
      for (const auto& x : field(c, "costs")) list.push_back(decode_double(x));
    }
    p.min_cost_ = decode_double(field(j, "min_cost"));
    p.best_batch_size_ = field(j, "best_batch_size").get<int>();
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::kParse, std::string("policy state: malformed JSON field: ") + e.what());
  } catch (const std::invalid_argument&) {
    throw_error(ErrorCode::kParse, "policy state: the seed is not an unsigned integer");
  } catch (const std::out_of_range&) {
    throw_error(ErrorCode::kParse, "policy state: the seed is out of range");
  }
}

}  // namespace zeus::batch_size
