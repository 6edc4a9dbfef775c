#include "zeus/optimizer/batch_size/pruning_explorer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "json_number.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {

using detail::decode_double;
using detail::encode_double;
using detail::field;

PruningExplorer::PruningExplorer(std::vector<int> batch_sizes, int default_batch_size,
                                 int num_rounds)
    : batch_sizes_(std::move(batch_sizes)), default_(default_batch_size), num_rounds_(num_rounds) {
  std::sort(batch_sizes_.begin(), batch_sizes_.end());
  if (batch_sizes_.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "pruning: the list of batch sizes is empty");
  }
  if (std::adjacent_find(batch_sizes_.begin(), batch_sizes_.end()) != batch_sizes_.end()) {
    throw_error(ErrorCode::kInvalidArgument, "pruning: batch sizes must be distinct");
  }
  if (!std::binary_search(batch_sizes_.begin(), batch_sizes_.end(), default_)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("pruning: the default batch size {} is not in the list", default_));
  }
  if (num_rounds_ < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("pruning: number of rounds must be >= 0, got {}", num_rounds_));
  }
}

PruningExplorer::Step PruningExplorer::walk(std::vector<int>* survivors_out) const {
  std::vector<int> list = batch_sizes_;
  int def = default_;
  for (int round = 0; round < num_rounds_; ++round) {
    std::vector<int> down, up;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      if (*it <= def) down.push_back(*it);
    }
    for (int b : list) {
      if (b > def) up.push_back(b);
    }
    std::vector<int> good;
    double best_cost = std::numeric_limits<double>::infinity();
    int best = def;
    for (const auto* direction : {&down, &up}) {
      for (int b : *direction) {
        const auto it = history_.find(b);
        const auto r = static_cast<std::size_t>(round);
        if (it == history_.end() || it->second.size() <= r) return {Action::kExplore, b};
        const Exploration& e = it->second[r];
        if (!e.done) return {Action::kWait, b};
        if (!e.converged) break;  // this direction is pruned from here on
        good.push_back(b);
        if (e.cost < best_cost) {
          best_cost = e.cost;
          best = b;
        }
      }
    }
    if (!good.empty()) {
      std::sort(good.begin(), good.end());
      list = std::move(good);
      def = best;
    }
  }
  if (survivors_out != nullptr) *survivors_out = list;
  return {Action::kDone, 0};
}

PruningExplorer::Step PruningExplorer::next() const { return walk(nullptr); }

std::vector<int> PruningExplorer::survivors() const {
  std::vector<int> s;
  if (walk(&s).action != Action::kDone) return {};
  return s;
}

void PruningExplorer::dispatched(std::int64_t trial_id, int batch_size) {
  history_[batch_size].push_back({trial_id});
}

bool PruningExplorer::is_pending(std::int64_t trial_id) const {
  for (const auto& [b, list] : history_) {
    for (const auto& e : list) {
      if (e.trial_id == trial_id && !e.done) return true;
    }
  }
  return false;
}

bool PruningExplorer::finished(std::int64_t trial_id, double cost, bool converged) {
  for (auto& [b, list] : history_) {
    for (auto& e : list) {
      if (e.trial_id == trial_id && !e.done) {
        e.done = true;
        e.cost = cost;
        e.converged = converged;
        return true;
      }
    }
  }
  return false;
}

bool PruningExplorer::cancelled(std::int64_t trial_id) {
  for (auto& [b, list] : history_) {
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const auto& e) { return e.trial_id == trial_id && !e.done; });
    if (it != list.end()) {
      list.erase(it);
      return true;
    }
  }
  return false;
}

nlohmann::json PruningExplorer::to_json() const {
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& [b, list] : history_) {
    for (const auto& e : list) {
      hist.push_back({{"batch_size", b},
                      {"trial_id", e.trial_id},
                      {"done", e.done},
                      {"converged", e.converged},
                      {"cost", encode_double(e.cost)}});
    }
  }
  return {{"batch_sizes", batch_sizes_},
          {"default_batch_size", default_},
          {"num_rounds", num_rounds_},
          {"history", hist}};
}

PruningExplorer PruningExplorer::from_json(const nlohmann::json& j) {
  PruningExplorer p(field(j, "batch_sizes").get<std::vector<int>>(),
                    field(j, "default_batch_size").get<int>(), field(j, "num_rounds").get<int>());
  for (const auto& e : field(j, "history")) {
    Exploration x{field(e, "trial_id").get<std::int64_t>()};
    x.done = field(e, "done").get<bool>();
    x.converged = field(e, "converged").get<bool>();
    x.cost = decode_double(field(e, "cost"));
    p.history_[field(e, "batch_size").get<int>()].push_back(x);
  }
  return p;
}

}  // namespace zeus::batch_size
