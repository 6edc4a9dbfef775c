#include "zeus/proxy/attribution.h"

#include <fmt/format.h>

#include <cmath>

#include "zeus/util/error.h"

namespace zeus::proxy {

Attributor::Entry& Attributor::find(RequestId id) {
  const auto it = index_.find(id);
  if (it == index_.end()) {
    throw_error(ErrorCode::kNotFound, fmt::format("request {} is not being attributed", id));
  }
  return entries_[it->second];
}

void Attributor::begin(RequestId id, bool tokens_observed) {
  if (index_.contains(id)) {
    throw_error(ErrorCode::kAlreadyExists, fmt::format("request {} is already active", id));
  }
  index_.emplace(id, entries_.size());
  entries_.push_back(Entry{.id = id, .observed = tokens_observed});
}

void Attributor::add_tokens(RequestId id, double tokens) {
  if (!std::isfinite(tokens) || tokens < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("a token count must be finite and not negative, not {}", tokens));
  }
  Entry& e = find(id);
  e.slice_tokens += tokens;
  e.total_tokens += tokens;
}

void Attributor::end(RequestId id) { find(id).ending = true; }

std::vector<FinishedRequest> Attributor::close_slice(Joules energy) {
  if (!std::isfinite(energy.value()) || energy.value() < 0) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("a slice's energy must be finite and not negative, not {} J", energy.value()));
  }
  ++slices_;
  measured_ += energy;
  std::vector<FinishedRequest> finished;
  if (entries_.empty()) {
    idle_ += energy;
    return finished;
  }
  // Weights: observed tokens; unobserved requests run at the mean rate of the
  // observed ones (1 when none was observed); all-zero means an equal split.
  double observed_tokens = 0;
  std::size_t observed = 0;
  for (const Entry& e : entries_) {
    if (e.observed) {
      observed_tokens += e.slice_tokens;
      ++observed;
    }
  }
  const double unobserved_weight =
      observed > 0 && observed_tokens > 0 ? observed_tokens / static_cast<double>(observed) : 1.0;
  double total = 0;
  for (const Entry& e : entries_) total += e.observed ? e.slice_tokens : unobserved_weight;
  const bool equal = total <= 0;
  const double n = static_cast<double>(entries_.size());
  for (Entry& e : entries_) {
    const double w = equal ? 1.0 : (e.observed ? e.slice_tokens : unobserved_weight);
    e.energy += energy.value() * (equal ? 1.0 / n : w / total);
    e.slice_tokens = 0;
  }
  attributed_ += energy;
  // Ended requests leave: swap-remove keeps this O(active).
  for (std::size_t i = 0; i < entries_.size();) {
    if (!entries_[i].ending) {
      ++i;
      continue;
    }
    finished.push_back({entries_[i].id, Joules(entries_[i].energy), entries_[i].total_tokens});
    index_.erase(entries_[i].id);
    if (i + 1 != entries_.size()) {
      entries_[i] = entries_.back();
      index_[entries_[i].id] = i;
    }
    entries_.pop_back();
  }
  return finished;
}

std::optional<Joules> Attributor::energy_of(RequestId id) const {
  const auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return Joules(entries_[it->second].energy);
}

}  // namespace zeus::proxy
