#include "zeus/optimizer/batch_size/server/job_search.h"

#include "optimizer/batch_size/state_json.h"

namespace zeus::batch_size {

nlohmann::json JobSearch::to_json() const {
  if (const auto* plugged = std::get_if<PluggedSearch>(&search_)) {
    return nlohmann::json{{"plugged", plugged->to_json()}};
  }
  return search_to_json(std::get<BatchSizeSearch>(search_));
}

JobSearch JobSearch::from_json(const JobSpec& spec, const nlohmann::json& state) {
  if (state.is_object() && state.contains("plugged")) {
    return JobSearch(PluggedSearch::from_json(spec, state["plugged"]));
  }
  return JobSearch(search_from_json(state));
}

Trial JobSearch::next_trial() {
  return std::visit([](auto& s) { return s.next_trial(); }, search_);
}

void JobSearch::report(std::int64_t trial_id, Joules cost, bool converged) {
  std::visit([&](auto& s) { s.report(trial_id, cost, converged); }, search_);
}

void JobSearch::cancel(std::int64_t trial_id) {
  std::visit([&](auto& s) { s.cancel(trial_id); }, search_);
}

std::optional<Joules> JobSearch::min_cost() const {
  return std::visit([](const auto& s) { return s.min_cost(); }, search_);
}

std::size_t JobSearch::num_in_flight() const {
  return std::visit([](const auto& s) { return s.num_in_flight(); }, search_);
}

bool JobSearch::is_in_flight(std::int64_t trial_id) const {
  return std::visit([&](const auto& s) { return s.is_in_flight(trial_id); }, search_);
}

}  // namespace zeus::batch_size
