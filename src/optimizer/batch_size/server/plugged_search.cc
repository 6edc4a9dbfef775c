#include "zeus/optimizer/batch_size/server/plugged_search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>

#include "zeus/util/error.h"

namespace zeus::batch_size {

namespace bs = zeus::batch_size;
using nlohmann::json;

namespace {

bs::PolicyContext context(const JobSpec& s, std::uint64_t seed) {
  bs::PolicyContext c;
  c.job = s.job_id;
  c.batch_sizes = s.batch_sizes;
  c.default_batch_size = s.default_batch_size;
  c.eta = s.eta_knob;
  c.seed = seed;
  c.max_power = Watts(s.max_power);
  c.num_pruning_rounds = s.num_pruning_rounds;
  c.window_size = s.window_size;
  c.prior_mean = s.mab_prior_mean;
  c.prior_precision = s.mab_prior_precision;
  return c;
}

[[noreturn]] void bad_state(const std::string& what) {
  throw_error(ErrorCode::kParse, "stored job state: " + what);
}

}  // namespace

PluggedSearch::PluggedSearch(const JobSpec& spec, std::uint64_t seed) : spec_(spec), seed_(seed) {
  // Unknown (kInvalidArgument listing the known ones) or unable to serve this
  // job (a grid search wants power limits): refused at registration.
  live_ = make();
}

PluggedSearch::~PluggedSearch() = default;

PluggedSearch::PluggedSearch(const PluggedSearch& o)
    : spec_(o.spec_),
      seed_(o.seed_),
      log_(o.log_),
      next_id_(o.next_id_),
      in_flight_(o.in_flight_),
      min_cost_(o.min_cost_) {}

PluggedSearch& PluggedSearch::operator=(const PluggedSearch& o) {
  if (this != &o) *this = PluggedSearch(o);
  return *this;
}

bs::BatchSizeChoice PluggedSearch::predict(bs::Policy& p) const {
  bs::BatchSizeChoice c;
  try {
    c = p.batch_size->predict();
  } catch (const std::exception& e) {
    throw_error(ErrorCode::kInternal,
                fmt::format("policy '{}' of job {} failed to predict a batch size: {}",
                            spec_.policy, spec_.job_id, e.what()));
  }
  if (!std::binary_search(spec_.batch_sizes.begin(), spec_.batch_sizes.end(), c.batch_size)) {
    throw_error(
        ErrorCode::kInternal,
        fmt::format("policy '{}' of job {} predicted batch size {}, which is not one of "
                    "{}",
                    spec_.policy, spec_.job_id, c.batch_size, fmt::join(spec_.batch_sizes, ", ")));
  }
  return c;
}

std::unique_ptr<bs::Policy> PluggedSearch::make() const {
  auto p = std::make_unique<bs::Policy>(
      bs::PolicyRegistry::global().find(spec_.policy).make(context(spec_, seed_)));
  if (!p->batch_size) {
    throw_error(ErrorCode::kInternal,
                fmt::format("policy '{}' has no batch-size half", spec_.policy));
  }
  return p;
}

std::map<std::int64_t, bs::BatchSizeChoice> PluggedSearch::replay(bs::Policy& p) const {
  // The policy's own view of each handed-out trial, by our trial id.
  std::map<std::int64_t, bs::BatchSizeChoice> issued;
  for (const auto& e : log_) {
    const std::string op = e.at(0).get<std::string>();
    const std::int64_t id = e.at(1).get<std::int64_t>();
    if (op == "p") {
      issued[id] = predict(p);
    } else if (op == "o") {
      auto it = issued.find(id);
      if (it == issued.end()) bad_state("a report of a trial never handed out");
      p.batch_size->observe(it->second, Joules(e.at(2).get<double>()), e.at(3).get<bool>());
    }
  }
  return issued;
}

bs::Policy& PluggedSearch::live() {
  if (!live_) {
    auto p = make();
    replay(*p);
    live_ = std::move(p);
  }
  return *live_;
}

bs::Trial PluggedSearch::next_trial() {
  bs::Policy& p = live();
  bs::BatchSizeChoice c = predict(p);
  const std::int64_t id = next_id_++;
  in_flight_[id] = c;
  log_.push_back(json::array({"p", id}));
  const bs::TrialKind kind = c.kind;
  return {id, c.batch_size, kind};
}

void PluggedSearch::report(std::int64_t trial_id, Joules cost, bool converged) {
  auto it = in_flight_.find(trial_id);
  if (it == in_flight_.end()) {
    throw_error(ErrorCode::kNotFound, fmt::format("trial {} is not in flight", trial_id));
  }
  bs::Policy& p = live();
  try {
    p.batch_size->observe(it->second, cost, converged);
  } catch (const std::exception& e) {
    throw_error(ErrorCode::kInternal,
                fmt::format("policy '{}' of job {} failed to observe trial {}: {}", spec_.policy,
                            spec_.job_id, trial_id, e.what()));
  }
  in_flight_.erase(it);
  log_.push_back(json::array({"o", trial_id, cost.value(), converged}));
  if (!min_cost_ || cost.value() < *min_cost_) min_cost_ = cost.value();
}

void PluggedSearch::cancel(std::int64_t trial_id) {
  if (in_flight_.erase(trial_id) == 0) {
    throw_error(ErrorCode::kNotFound, fmt::format("trial {} is not in flight", trial_id));
  }
  // The seam has no "cancel": the policy never hears of this trial again.
  log_.push_back(json::array({"c", trial_id}));
}

std::optional<Joules> PluggedSearch::min_cost() const {
  if (!min_cost_) return std::nullopt;
  return Joules(*min_cost_);
}

json PluggedSearch::to_json() const {
  json in_flight = json::array();
  for (const auto& [id, c] : in_flight_) in_flight.push_back(id);
  return {{"policy", spec_.policy},
          {"seed", seed_},
          {"next_trial_id", next_id_},
          {"in_flight", in_flight},
          {"min_cost", min_cost_ ? json(*min_cost_) : json(nullptr)},
          {"log", log_}};
}

PluggedSearch PluggedSearch::from_json(const JobSpec& spec, const json& state) {
  try {
    PluggedSearch s(spec, state.at("seed").get<std::uint64_t>());
    s.next_id_ = state.at("next_trial_id").get<std::int64_t>();
    s.log_ = state.at("log");
    if (!state.at("min_cost").is_null()) s.min_cost_ = state.at("min_cost").get<double>();
    auto p = s.make();
    const auto issued = s.replay(*p);
    for (const auto& id : state.at("in_flight")) {
      auto it = issued.find(id.get<std::int64_t>());
      if (it == issued.end()) bad_state("an in-flight trial was never handed out");
      s.in_flight_[it->first] = it->second;
    }
    s.live_ = std::move(p);
    return s;
  } catch (const json::exception& e) {
    bad_state(e.what());
  }
}

}  // namespace zeus::batch_size
