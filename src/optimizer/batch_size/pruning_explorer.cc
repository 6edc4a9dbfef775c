#include "zeus/optimizer/batch_size/pruning_explorer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "zeus/util/error.h"

namespace zeus::batch_size {

PruningExplorer::PruningExplorer(std::vector<int> batch_sizes, int default_batch_size,
                                 int num_rounds, History history)
    : batch_sizes_(std::move(batch_sizes)),
      default_(default_batch_size),
      num_rounds_(num_rounds),
      history_(std::move(history)) {
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

PruningExplorer::Step PruningExplorer::walk(std::vector<int>* survivors_out,
                                            std::optional<int>* empty_round) const {
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
    Joules best_cost(std::numeric_limits<double>::infinity());
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
    } else if (empty_round != nullptr && !empty_round->has_value()) {
      *empty_round = round;
    }
  }
  if (survivors_out != nullptr) *survivors_out = list;
  return {Action::kDone, 0};
}

PruningExplorer::Step PruningExplorer::next() const { return walk(nullptr, nullptr); }

std::vector<int> PruningExplorer::survivors() const {
  std::vector<int> s;
  if (walk(&s, nullptr).action != Action::kDone) return {};
  return s;
}

std::optional<int> PruningExplorer::round_without_survivor() const {
  std::optional<int> r;
  walk(nullptr, &r);
  return r;
}

void PruningExplorer::dispatched(std::int64_t trial_id, int batch_size) {
  history_[batch_size].push_back({trial_id, false, false, Joules(0)});
}

bool PruningExplorer::is_pending(std::int64_t trial_id) const {
  for (const auto& [b, list] : history_) {
    for (const auto& e : list) {
      if (e.trial_id == trial_id && !e.done) return true;
    }
  }
  return false;
}

bool PruningExplorer::finished(std::int64_t trial_id, Joules cost, bool converged) {
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

}  // namespace zeus::batch_size
