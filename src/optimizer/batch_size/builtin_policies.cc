// The built-in policies: Zeus (the batch-size search + just-in-time power
// limits), Default, and the four grid searches of the paper's evaluation
// (docs/reference/paper-simulator.md §7). They reach the simulator and the
// service only through the policy seam (policy.h), like any plug-in.
#include <fmt/format.h>

#include <limits>
#include <set>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {
namespace {

const std::vector<PowerLimitEpoch>& limits_of(const PolicyContext& c, int batch_size) {
  auto it = c.power_limits.find(batch_size);
  if (it == c.power_limits.end() || it->second.empty()) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("job {}: no power limits are known for batch size {}", c.job, batch_size));
  }
  return it->second;
}

// Zeus's batch size: pruning, then Gaussian Thompson sampling.
class ZeusBatchSize final : public BatchSizePolicy {
 public:
  explicit ZeusBatchSize(const PolicyContext& c) : search_(options(c)) {}
  BatchSizeChoice predict() override {
    const Trial t = search_.next_trial();
    return {t.id, t.batch_size, t.kind};
  }
  void observe(const BatchSizeChoice& choice, Joules cost, bool converged) override {
    // A run it did not hand out (the Alibaba replay's concurrent submissions
    // at the best-known batch size) teaches the search nothing: it learns
    // from its own trials only.
    if (!search_.is_in_flight(choice.trial_id)) return;
    search_.report(choice.trial_id, cost, converged);
  }

 private:
  static BatchSizeSearchOptions options(const PolicyContext& c) {
    BatchSizeSearchOptions o;
    o.batch_sizes = c.batch_sizes;
    o.default_batch_size = c.default_batch_size;
    o.num_pruning_rounds = c.num_pruning_rounds;
    o.mab.window_size = c.window_size;
    o.mab.prior_mean = c.prior_mean;
    o.mab.prior_precision = c.prior_precision;
    o.seed = c.seed;
    return o;
  }
  BatchSizeSearch search_;
};

// Upstream's JITPowerLimitOptimizer: asks for profiling the first time a batch
// size runs, then keeps the cheapest profiled limit (strict minimum over
// limits observed highest first, so ties keep the higher limit).
class JitPowerLimit final : public PowerLimitPolicy {
 public:
  std::optional<Milliwatts> predict(int batch_size) override {
    auto it = best_.find(batch_size);
    if (it == best_.end()) return std::nullopt;
    return it->second.first;
  }
  void observe(int batch_size, Milliwatts power_limit, Joules epoch_cost) override {
    auto it = best_.find(batch_size);
    if (it == best_.end() || epoch_cost < it->second.second) {
      best_[batch_size] = {power_limit, epoch_cost};
    }
  }

 private:
  std::map<int, std::pair<Milliwatts, Joules>> best_;
};

// Ablation (Figure 13): no profiling; each run of a batch size not yet
// settled uses its next untried limit (highest first), a whole run per limit;
// once every limit has run, the same choice rule as profiling picks one.
class OneLimitPerRun final : public PowerLimitPolicy {
 public:
  explicit OneLimitPerRun(const PolicyContext& c) : context_(c) {}
  std::optional<Milliwatts> predict(int batch_size) override {
    if (auto it = chosen_.find(batch_size); it != chosen_.end()) return it->second;
    return limits_of(context_, batch_size)[static_cast<std::size_t>(tried_[batch_size])]
        .power_limit;
  }
  void observe(int, Milliwatts, Joules) override {}
  void observe_run(const BatchSizeChoice& choice, Milliwatts, Joules, bool) override {
    const int b = choice.batch_size;
    if (chosen_.count(b)) return;
    const auto& limits = limits_of(context_, b);
    if (++tried_[b] == static_cast<int>(limits.size())) {
      chosen_.emplace(b, choose_power_limit(context_.eta, limits));
    }
  }

 private:
  PolicyContext context_;
  std::map<int, Milliwatts> chosen_;
  std::map<int, int> tried_;
};

// Default: always b0 at the highest power limit.
class FixedBatchSize final : public BatchSizePolicy {
 public:
  explicit FixedBatchSize(int batch_size) : batch_size_(batch_size) {}
  BatchSizeChoice predict() override { return {0, batch_size_, TrialKind::kExploration}; }
  void observe(const BatchSizeChoice&, Joules, bool) override {}

 private:
  int batch_size_;
};
class HighestPowerLimit final : public PowerLimitPolicy {
 public:
  explicit HighestPowerLimit(const PolicyContext& c) : context_(c) {}
  std::optional<Milliwatts> predict(int batch_size) override {
    return limits_of(context_, batch_size).front().power_limit;
  }
  void observe(int, Milliwatts, Joules) override {}

 private:
  PolicyContext context_;
};

// Grid search with pruning, one run per (batch size, power limit), no
// profiling; afterwards the cheapest observed configuration forever.
//  * plain ("gs"): (b0, max PL), then batch sizes ascending x power limits
//    descending; a batch size whose run fails is dropped (its other limits skipped);
//  * directional ("gsdir"): b0's limits, then smaller batch sizes descending,
//    then larger ones ascending, each over its limits descending; a failure
//    also drops every batch size further out in that direction (a failure of
//    b0 drops only b0).
// Both halves share this state: the batch-size half picks the entry, the
// power-limit half hands out its limit.
class GridSchedule {
 public:
  GridSchedule(const PolicyContext& c, bool directional) {
    const int b0 = c.default_batch_size;
    const Milliwatts max_pl = limits_of(c, b0).front().power_limit;
    auto add_all = [&](int b, int direction) {
      for (const auto& p : limits_of(c, b)) {
        if (b == b0 && p.power_limit == max_pl) continue;
        schedule_.push_back({b, p.power_limit, direction});
      }
    };
    schedule_.push_back({b0, max_pl, 0});
    if (!directional) {
      for (int b : c.batch_sizes) add_all(b, 0);
    } else {
      add_all(b0, 0);
      for (auto it = c.batch_sizes.rbegin(); it != c.batch_sizes.rend(); ++it) {
        if (*it < b0) add_all(*it, -1);
      }
      for (int b : c.batch_sizes) {
        if (b > b0) add_all(b, +1);
      }
    }
    best_ = {b0, max_pl};
  }
  BatchSizeChoice decide() {
    while (next_ < schedule_.size() && pruned(schedule_[next_].batch_size)) ++next_;
    if (next_ < schedule_.size()) {
      const auto& e = schedule_[next_];
      current_ = e.power_limit;
      // The id names the schedule entry, so late reports find their direction.
      return {static_cast<std::int64_t>(++next_), e.batch_size, TrialKind::kExploration};
    }
    current_ = best_.second;
    return {0, best_.first, TrialKind::kSampling};
  }
  Milliwatts current_limit() const { return current_; }
  void observe(const BatchSizeChoice& c, Joules cost, bool reached) {
    if (c.trial_id == 0) return;  // exploiting
    const auto& e = schedule_.at(static_cast<std::size_t>(c.trial_id - 1));
    if (!reached) {
      pruned_.insert(c.batch_size);
      if (e.direction < 0) below_ = std::max(below_, c.batch_size);
      if (e.direction > 0) above_ = std::min(above_, c.batch_size);
    } else if (cost < best_cost_) {
      best_cost_ = cost;
      best_ = {c.batch_size, e.power_limit};
    }
  }

 private:
  struct Entry {
    int batch_size;
    Milliwatts power_limit;
    int direction;  // -1 below b0, +1 above, 0 b0 or plain order
  };
  bool pruned(int b) const { return pruned_.count(b) || b <= below_ || b >= above_; }
  std::vector<Entry> schedule_;
  std::size_t next_ = 0;
  std::set<int> pruned_;
  int below_ = 0;                                // directional: sizes <= this are dropped
  int above_ = std::numeric_limits<int>::max();  // and sizes >= this
  std::pair<int, Milliwatts> best_;
  Joules best_cost_{std::numeric_limits<double>::infinity()};
  Milliwatts current_{0};
};
class GridBatchSize final : public BatchSizePolicy {
 public:
  explicit GridBatchSize(std::shared_ptr<GridSchedule> s) : s_(std::move(s)) {}
  BatchSizeChoice predict() override { return s_->decide(); }
  void observe(const BatchSizeChoice& c, Joules cost, bool converged) override {
    s_->observe(c, cost, converged);
  }

 private:
  std::shared_ptr<GridSchedule> s_;
};
class GridPowerLimit final : public PowerLimitPolicy {
 public:
  explicit GridPowerLimit(std::shared_ptr<GridSchedule> s) : s_(std::move(s)) {}
  std::optional<Milliwatts> predict(int) override { return s_->current_limit(); }
  void observe(int, Milliwatts, Joules) override {}

 private:
  std::shared_ptr<GridSchedule> s_;
};

PolicyInfo grid(std::string name, bool directional, bool early_stopping, std::string what) {
  return {std::move(name), std::move(what), early_stopping, [directional](const PolicyContext& c) {
            auto s = std::make_shared<GridSchedule>(c, directional);
            return Policy{std::make_unique<GridBatchSize>(s), std::make_unique<GridPowerLimit>(s)};
          }};
}

}  // namespace

std::unique_ptr<PowerLimitPolicy> make_jit_power_limit_policy() {
  return std::make_unique<JitPowerLimit>();
}

void add_builtin_policies(PolicyRegistry& registry) {
  registry.add({"zeus",
                "Zeus: pruning exploration + Gaussian Thompson sampling, just-in-time power "
                "limits, early stopping",
                true, [](const PolicyContext& c) {
                  Policy p;
                  p.batch_size = std::make_unique<ZeusBatchSize>(c);
                  if (c.one_limit_per_recurrence) {
                    p.power_limit = std::make_unique<OneLimitPerRun>(c);
                  } else {
                    p.power_limit = make_jit_power_limit_policy();
                  }
                  return p;
                }});
  registry.add({"default", "the default batch size at the highest power limit, no early stopping",
                false, [](const PolicyContext& c) {
                  return Policy{std::make_unique<FixedBatchSize>(c.default_batch_size),
                                std::make_unique<HighestPowerLimit>(c)};
                }});
  registry.add(grid("grid", false, true, "grid search with pruning, early stopping"));
  registry.add(grid("grid-noes", false, false, "grid search with pruning, no early stopping"));
  registry.add(grid("grid-dir", true, true, "directional grid search from b0, early stopping"));
  registry.add(
      grid("grid-dir-noes", true, false, "directional grid search from b0, no early stopping"));
}

}  // namespace zeus::batch_size
