// A registered policy (zeus/optimizer/batch_size/policy.h) serving one job of
// the batch-size service, in place of the built-in search: the job spec's
// "policy" names it. The service persists a job's state after every decision;
// a policy has no state format of its own, so this keeps the job's decisions
// (every predict, report and cancel, in order, with the seed) and rebuilds
// the policy by replaying them when the job is loaded or copied. Replays cost
// one call per past decision; policies must be deterministic given the seed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/common/api.h"
#include "zeus/optimizer/batch_size/policy.h"

namespace zeus::batch_size {

class PluggedSearch {
 public:
  // kInvalidArgument naming the unknown policy and the known ones.
  PluggedSearch(const JobSpec& spec, std::uint64_t seed);
  // Rebuilds the policy from `state` (to_json()); kParse for a malformed state.
  static PluggedSearch from_json(const JobSpec& spec, const nlohmann::json& state);
  nlohmann::json to_json() const;

  // A copy replays the log into a policy of its own (the store works on copies).
  PluggedSearch(const PluggedSearch& other);
  PluggedSearch& operator=(const PluggedSearch& other);
  PluggedSearch(PluggedSearch&&) noexcept = default;
  PluggedSearch& operator=(PluggedSearch&&) noexcept = default;
  ~PluggedSearch();

  // The same contract as BatchSizeSearch's. A batch size not in the job's
  // list, or an exception from the policy, is kInternal (HTTP 500: the
  // server's policy is broken, not the request) naming the policy and the job.
  batch_size::Trial next_trial();
  void report(std::int64_t trial_id, Joules cost, bool converged);
  void cancel(std::int64_t trial_id);
  std::optional<Joules> min_cost() const;
  std::size_t num_in_flight() const { return in_flight_.size(); }
  bool is_in_flight(std::int64_t trial_id) const { return in_flight_.count(trial_id) > 0; }

 private:
  std::unique_ptr<batch_size::Policy> make() const;
  // Feeds the log to a fresh policy; the choices it made, by trial id.
  std::map<std::int64_t, batch_size::BatchSizeChoice> replay(batch_size::Policy& p) const;
  batch_size::Policy& live();
  batch_size::BatchSizeChoice predict(batch_size::Policy& p) const;

  JobSpec spec_;
  std::uint64_t seed_;
  nlohmann::json log_ = nlohmann::json::array();
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, batch_size::BatchSizeChoice> in_flight_;
  std::optional<double> min_cost_;
  std::unique_ptr<batch_size::Policy> live_;  // rebuilt from log_ when absent
};

}  // namespace zeus::batch_size
