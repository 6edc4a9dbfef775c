// The search that serves one job of the batch-size service: the built-in one
// (BatchSizeSearch, the simulator's code) or a registered policy
// (PluggedSearch), behind one interface, so the service and the stores never
// ask which it is.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/common/api.h"
#include "zeus/optimizer/batch_size/server/plugged_search.h"

namespace zeus::batch_size {

class JobSearch {
 public:
  explicit JobSearch(BatchSizeSearch builtin) : search_(std::move(builtin)) {}
  explicit JobSearch(PluggedSearch plugged) : search_(std::move(plugged)) {}

  // The state the stores keep: the built-in search's JSON, or the policy's
  // decision log as {"plugged": ...}; and back (kParse naming what is wrong).
  nlohmann::json to_json() const;
  static JobSearch from_json(const JobSpec& spec, const nlohmann::json& state);

  // BatchSizeSearch's contract, whichever serves the job.
  Trial next_trial();
  void report(std::int64_t trial_id, Joules cost, bool converged);
  void cancel(std::int64_t trial_id);
  std::optional<Joules> min_cost() const;
  std::size_t num_in_flight() const;
  bool is_in_flight(std::int64_t trial_id) const;

 private:
  std::variant<BatchSizeSearch, PluggedSearch> search_;
};

}  // namespace zeus::batch_size
