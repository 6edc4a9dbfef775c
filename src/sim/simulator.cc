#include "zeus/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>

#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/optimizer/power_limit/selection/zeus_cost.h"
#include "zeus/util/error.h"
#include "zeus/util/text.h"

namespace zeus::sim {

namespace bs = zeus::batch_size;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Distinct RNG stream for path sampling; the strategy uses stream 0 of the seed.
constexpr std::uint64_t kPathStream = 0x7061746873ULL;  // "paths"

// What a strategy decided for one run.
struct Decision {
  std::int64_t ticket = 0;
  int batch_size = 0;
  Milliwatts power_limit{0};
  bool profile = false;
  bs::TrialKind kind = bs::TrialKind::kExploration;
};

// The simulator's view of a strategy: decide a run, learn its outcome.
class SimStrategy {
 public:
  virtual ~SimStrategy() = default;
  virtual Decision decide() = 0;
  virtual void observe(const Decision& d, Joules cost, bool reached) = 0;
};

// Zeus: the shared batch-size policy plus the power-limit choice (just in
// time, or one limit per recurrence in the ablation).
class ZeusStrategy final : public SimStrategy {
 public:
  ZeusStrategy(const WorkloadTrace& trace, const SimOptions& o)
      : trace_(trace),
        eta_(o.eta),
        search_(o.power_limit_search),
        policy_(make_options(trace, o)) {}

  Decision decide() override {
    const auto t = policy_.next_trial();
    Decision d{t.id, t.batch_size, Milliwatts(0), false, t.kind};
    auto it = chosen_.find(t.batch_size);
    if (it != chosen_.end()) {
      d.power_limit = it->second;
      return d;
    }
    const auto& b = trace_.batch(t.batch_size);
    if (search_ == PowerLimitSearch::kJustInTime) {
      // First use of this batch size: profile every limit during its first epoch.
      d.power_limit = chosen_.emplace(t.batch_size, choose(b)).first->second;
      d.profile = true;
      return d;
    }
    // One untried limit per run, highest first (limits are stored descending).
    d.power_limit = b.limits[static_cast<std::size_t>(tried_[t.batch_size])].power_limit;
    return d;
  }
  void observe(const Decision& d, Joules cost, bool reached) override {
    if (search_ == PowerLimitSearch::kOnePerRecurrence && !chosen_.count(d.batch_size)) {
      // The run measured its limit; once every limit is measured, choose.
      const auto& b = trace_.batch(d.batch_size);
      if (++tried_[d.batch_size] == static_cast<int>(b.limits.size())) {
        chosen_.emplace(d.batch_size, choose(b));
      }
    }
    policy_.report(d.ticket, cost, reached);
  }

 private:
  static bs::BatchSizeSearchOptions make_options(const WorkloadTrace& trace, const SimOptions& o) {
    bs::BatchSizeSearchOptions p;
    p.batch_sizes = trace.batch_size_list();
    p.default_batch_size = trace.default_batch_size;
    p.num_pruning_rounds = o.num_pruning_rounds;
    p.mab.window_size = o.window_size;
    p.seed = o.seed;
    return p;
  }
  Milliwatts choose(const BatchSizeTrace& b) const {
    std::vector<bs::PowerLimitEpoch> epochs;
    for (const auto& p : b.limits) {
      epochs.push_back({p.power_limit, p.time_per_epoch, p.average_power});
    }
    return bs::choose_power_limit(eta_, epochs);
  }
  const WorkloadTrace& trace_;
  double eta_;
  PowerLimitSearch search_;
  bs::BatchSizeSearch policy_;
  std::map<int, Milliwatts> chosen_;  // batch size -> its power limit, once known
  std::map<int, int> tried_;          // one-per-recurrence: limits measured so far
};

// Default: always b0 at the largest power limit.
class DefaultStrategy final : public SimStrategy {
 public:
  explicit DefaultStrategy(const WorkloadTrace& trace)
      : bs_(trace.default_batch_size),
        pl_(trace.batch(trace.default_batch_size).limits.front().power_limit) {}
  Decision decide() override { return {0, bs_, pl_, false, bs::TrialKind::kExploration}; }
  void observe(const Decision&, Joules, bool) override {}

 private:
  int bs_;
  Milliwatts pl_;
};

// Grid search with pruning, one run per (batch size, power limit), no JIT
// profiling; afterwards the cheapest observed configuration forever.
//  * plain ("gs"): (b0, max PL), then batch sizes ascending x power limits
//    descending; a batch size whose run fails is dropped (its other limits skipped);
//  * directional ("gsdir"): b0's limits, then smaller batch sizes descending,
//    then larger ones ascending, each over its limits descending; a failure
//    also drops every batch size further out in that direction (a failure of
//    b0 drops only b0).
class GridSearchStrategy final : public SimStrategy {
 public:
  GridSearchStrategy(const WorkloadTrace& trace, bool directional) {
    const auto& b0 = trace.batch(trace.default_batch_size);
    const Milliwatts max_pl = b0.limits.front().power_limit;
    auto add_all = [&](const BatchSizeTrace& b, int direction) {
      for (const auto& p : b.limits) {
        if (b.batch_size == b0.batch_size && p.power_limit == max_pl) continue;
        schedule_.push_back({b.batch_size, p.power_limit, direction});
      }
    };
    schedule_.push_back({b0.batch_size, max_pl, 0});
    if (!directional) {
      for (const auto& b : trace.batch_sizes) add_all(b, 0);
    } else {
      add_all(b0, 0);
      for (auto it = trace.batch_sizes.rbegin(); it != trace.batch_sizes.rend(); ++it) {
        if (it->batch_size < b0.batch_size) add_all(*it, -1);
      }
      for (const auto& b : trace.batch_sizes) {
        if (b.batch_size > b0.batch_size) add_all(b, +1);
      }
    }
    best_ = {b0.batch_size, max_pl};
  }
  Decision decide() override {
    while (next_ < schedule_.size() && pruned(schedule_[next_].batch_size)) ++next_;
    if (next_ < schedule_.size()) {
      const auto& e = schedule_[next_];
      // The ticket names the schedule entry, so late reports find their direction.
      return {static_cast<std::int64_t>(++next_), e.batch_size, e.power_limit, false,
              bs::TrialKind::kExploration};
    }
    return {0, best_.first, best_.second, false, bs::TrialKind::kSampling};
  }
  void observe(const Decision& d, Joules cost, bool reached) override {
    if (d.ticket == 0) return;  // exploiting
    const int direction = schedule_[static_cast<std::size_t>(d.ticket - 1)].direction;
    if (!reached) {
      pruned_.insert(d.batch_size);
      if (direction < 0) below_ = std::max(below_, d.batch_size);
      if (direction > 0) above_ = std::min(above_, d.batch_size);
    } else if (cost < best_cost_) {
      best_cost_ = cost;
      best_ = {d.batch_size, d.power_limit};
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
  Joules best_cost_{kInf};
};

std::unique_ptr<SimStrategy> make_strategy(const WorkloadTrace& t, Strategy k,
                                           const SimOptions& o) {
  switch (k) {
    case Strategy::kZeus:
      return std::make_unique<ZeusStrategy>(t, o);
    case Strategy::kDefault:
      return std::make_unique<DefaultStrategy>(t);
    case Strategy::kGrid:
    case Strategy::kGridNoEarlyStop:
      return std::make_unique<GridSearchStrategy>(t, false);
    case Strategy::kGridDirectional:
    case Strategy::kGridDirectionalNoEarlyStop:
      return std::make_unique<GridSearchStrategy>(t, true);
  }
  throw_error(ErrorCode::kInternal, "unknown strategy");
}

struct RunOutcome {
  Joules energy{0.0};
  Seconds time{0.0};
  bool reached = false;
};

// One run (_run_job): sample a path, cap the epochs, account the profiling epoch.
RunOutcome run_job(const WorkloadTrace& t, int recurrence, const Decision& d, Joules cost_ub,
                   double eta, bs::Rng& rng) {
  const auto& b = t.batch(d.batch_size);
  const auto& runs = t.runs(b, recurrence);
  const double target = runs[rng.uniform_int(runs.size())];
  const auto& p = b.at(d.power_limit);
  const Joules per_epoch = bs::epoch_cost(eta, p.average_power, p.time_per_epoch, t.max_power);
  const double max_epochs = bs::epochs_within_bound(cost_ub, per_epoch, t.spec.max_epochs);
  if (max_epochs == 0) return {};
  RunOutcome r;
  double n = max_epochs;
  if (!std::isnan(target) && target <= max_epochs) {
    n = target;
    r.reached = true;
  }
  if (d.profile) {
    r.energy = b.profile_energy_per_epoch + (n - 1) * p.energy_per_epoch;
    r.time = b.profile_time_per_epoch + (n - 1) * p.time_per_epoch;
  } else {
    r.energy = n * p.energy_per_epoch;
    r.time = n * p.time_per_epoch;
  }
  return r;
}

void validate(const SimOptions& o) {
  if (!(o.eta >= 0.0 && o.eta <= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("eta must be in [0, 1], got {:g}", o.eta));
  }
  if (!(o.beta > 0.0) || (o.beta > kMaxBeta && !std::isinf(o.beta))) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("beta must be in (0, {:g}] (or inf), got {:g}", kMaxBeta, o.beta));
  }
  if (o.window_size < 0 || o.window_size > kMaxWindowSize) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("window size must be in [0, {}], got {}",
                                                         kMaxWindowSize, o.window_size));
  }
  if (!(o.overlap >= 0.0) || !(o.overlap <= kMaxOverlap)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("overlap must be in [0, {:g}], got {:g}", kMaxOverlap, o.overlap));
  }
  if (o.max_tries < 1 || o.max_tries > kMaxTriesLimit) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("tries per recurrence must be in [1, {}], got {}", kMaxTriesLimit,
                            o.max_tries));
  }
  if (o.stop_when_stuck && o.overlap > 0) {
    throw_error(ErrorCode::kInvalidArgument,
                "stopping a stuck replay is supported only without overlap");
  }
  if (o.num_pruning_rounds < 0 || o.num_pruning_rounds > kMaxPruningRounds) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("pruning rounds must be in [0, {}], got {}", kMaxPruningRounds,
                            o.num_pruning_rounds));
  }
}

// A trace that cannot be replayed is bad input (exit 2), not a crash.
[[noreturn]] void unreplayable(const std::string& message) {
  throw_error(ErrorCode::kInvalidArgument,
              message +
                  "; the trace cannot be replayed (check the train trace's target_epoch "
                  "values for this workload)");
}

Joules cost_of(const RunOutcome& out, double eta, Watts max_power) {
  return Joules(zeus_cost(out.energy, out.time, eta, max_power));
}

// Recurrences one after another: Simulator.simulate_one_job.
SimResult simulate_sequential(const WorkloadTrace& t, SimStrategy& strategy, double beta,
                              const SimOptions& o) {
  SimResult res;
  bs::Rng rng(o.seed, kPathStream);
  Joules min_cost{kInf};
  res.recurrences.reserve(static_cast<std::size_t>(t.num_recurrence));
  for (int i = 0; i < t.num_recurrence; ++i) {
    RecurrenceRecord rec;
    bool done = false;
    for (int attempt = 0; attempt < o.max_tries && !done; ++attempt) {
      const Decision d = strategy.decide();
      const Joules ub = bs::cost_upper_bound(beta, min_cost);
      const RunOutcome out = run_job(t, i, d, ub, o.eta, rng);
      RunRecord run{i,           d.batch_size, d.power_limit, out.energy, out.time,   Joules(0.0),
                    out.reached, d.profile,    false,         d.kind,     Seconds(0), 0};
      ++rec.runs;
      if (out.energy.value() == 0 && out.time.count() == 0 && !out.reached) {
        run.could_not_run = true;
        strategy.observe(d, 100.0 * beta * min_cost, false);
        res.runs.push_back(run);
        continue;
      }
      run.cost = cost_of(out, o.eta, t.max_power);
      rec.energy += out.energy;
      rec.time += out.time;
      rec.cost += run.cost;
      strategy.observe(d, run.cost, out.reached);
      res.runs.push_back(run);
      if (out.reached) {
        min_cost = std::min(min_cost, rec.cost);
        rec.batch_size = d.batch_size;
        rec.power_limit = d.power_limit;
        done = true;
      } else if (i == 0 && d.batch_size == t.default_batch_size) {
        // The reference requires b0 to converge first (every strategy but the
        // no-pruning ablation starts there); without it there is no baseline.
        unreplayable(
            fmt::format("{} on {}: the default batch size {} did not reach the target "
                        "in the first recurrence (seed {})",
                        t.name(), t.gpu, d.batch_size, o.seed));
      }
    }
    if (!done) {
      if (o.stop_when_stuck) {
        res.stuck_at = i;
        return res;
      }
      unreplayable(fmt::format("{} on {}: recurrence {} failed {} tries in a row (seed {})",
                               t.name(), t.gpu, i + 1, o.max_tries, o.seed));
    }
    res.recurrences.push_back(rec);
  }
  return res;
}

// Overlapping arrivals: recurrence i is submitted at i * interval; a run's
// outcome is observed when it ends; a failed run is resubmitted at its end.
SimResult simulate_overlapping(const WorkloadTrace& t, SimStrategy& strategy, double beta,
                               const SimOptions& o) {
  const Seconds interval = compute_reference(t, o.eta).default_tta / o.overlap;
  SimResult res;
  res.recurrences.resize(static_cast<std::size_t>(t.num_recurrence));
  bs::Rng rng(o.seed, kPathStream);
  Joules min_cost{kInf};
  struct Event {
    Seconds time;
    int order;  // ends (0) before starts (1) at the same instant
    std::int64_t seq;
    int recurrence;
    std::size_t run;  // index into res.runs, for ends
    Decision decision;
    bool operator>(const Event& e) const {
      return std::tie(time, order, seq) > std::tie(e.time, e.order, e.seq);
    }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::int64_t seq = 0;
  for (int i = 0; i < t.num_recurrence; ++i) {
    events.push({static_cast<double>(i) * interval, 1, seq++, i, 0, {}});
  }
  int in_flight = 0;
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    auto& rec = res.recurrences[static_cast<std::size_t>(e.recurrence)];
    if (e.order == 1) {
      const Decision d = strategy.decide();
      const RunOutcome out =
          run_job(t, e.recurrence, d, bs::cost_upper_bound(beta, min_cost), o.eta, rng);
      RunRecord run{e.recurrence, d.batch_size, d.power_limit, out.energy, out.time, Joules(0.0),
                    out.reached,  d.profile,    false,         d.kind,     e.time,   in_flight};
      run.could_not_run = out.energy.value() == 0 && out.time.count() == 0 && !out.reached;
      if (!run.could_not_run) run.cost = cost_of(out, o.eta, t.max_power);
      res.runs.push_back(run);
      ++in_flight;
      events.push({e.time + out.time, 0, seq++, e.recurrence, res.runs.size() - 1, d});
      continue;
    }
    --in_flight;
    const RunRecord& run = res.runs[e.run];
    ++rec.runs;
    if (run.could_not_run) {
      strategy.observe(e.decision, 100.0 * beta * min_cost, false);
    } else {
      rec.energy += run.energy;
      rec.time += run.time;
      rec.cost += run.cost;
      strategy.observe(e.decision, run.cost, run.reached);
    }
    if (run.reached) {
      min_cost = std::min(min_cost, rec.cost);
      rec.batch_size = run.batch_size;
      rec.power_limit = run.power_limit;
    } else if (rec.runs >= o.max_tries) {
      unreplayable(fmt::format("{} on {}: recurrence {} failed {} tries in a row (seed {})",
                               t.name(), t.gpu, e.recurrence + 1, o.max_tries, o.seed));
    } else {
      events.push({e.time, 1, seq++, e.recurrence, 0, {}});
    }
  }
  return res;
}

}  // namespace

const std::vector<Strategy>& all_strategies() {
  static const std::vector<Strategy> all = {Strategy::kZeus,
                                            Strategy::kDefault,
                                            Strategy::kGrid,
                                            Strategy::kGridNoEarlyStop,
                                            Strategy::kGridDirectional,
                                            Strategy::kGridDirectionalNoEarlyStop};
  return all;
}

std::string_view strategy_name(Strategy strategy) {
  switch (strategy) {
    case Strategy::kZeus:
      return "zeus";
    case Strategy::kDefault:
      return "default";
    case Strategy::kGrid:
      return "grid";
    case Strategy::kGridNoEarlyStop:
      return "grid-noes";
    case Strategy::kGridDirectional:
      return "grid-dir";
    case Strategy::kGridDirectionalNoEarlyStop:
      return "grid-dir-noes";
  }
  return "unknown";
}

Strategy parse_strategy(std::string_view name) {
  for (auto k : all_strategies()) {
    if (strategy_name(k) == name) return k;
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("unknown strategy '{}'; expected zeus, default, grid, grid-noes, "
                          "grid-dir or grid-dir-noes",
                          printable(name)));
}

bool uses_early_stopping(Strategy strategy) {
  return strategy == Strategy::kZeus || strategy == Strategy::kGrid ||
         strategy == Strategy::kGridDirectional;
}

SimResult simulate(const WorkloadTrace& trace, Strategy strategy, const SimOptions& options) {
  validate(options);
  const double beta = uses_early_stopping(strategy) ? options.beta : kInf;
  auto chooser = make_strategy(trace, strategy, options);
  return options.overlap > 0 ? simulate_overlapping(trace, *chooser, beta, options)
                             : simulate_sequential(trace, *chooser, beta, options);
}

Reference compute_reference(const WorkloadTrace& t, double eta, bool after_drift) {
  const int phase = after_drift && t.drift_at ? *t.drift_at : 0;
  auto mean = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  Reference r;
  const auto& b0 = t.batch(t.default_batch_size);
  const auto& p0 = b0.limits.front();
  const double e0 = mean(t.runs(b0, phase));
  r.default_tta = e0 * p0.time_per_epoch;
  r.default_eta = (e0 * p0.time_per_epoch) * p0.average_power;
  r.opt_cost = Joules(kInf);
  for (const auto& b : t.batch_sizes) {
    const auto& runs = t.runs(b, phase);
    const bool always = std::all_of(runs.begin(), runs.end(), [&](double x) {
      return !std::isnan(x) && x <= static_cast<double>(t.spec.max_epochs);
    });
    if (!always) continue;
    const double epochs = mean(runs);
    for (const auto& p : b.limits) {  // descending: ties keep the higher limit
      const Joules c = epochs * bs::epoch_cost(eta, p.average_power, p.time_per_epoch, t.max_power);
      if (c < r.opt_cost) {
        r.opt_cost = c;
        r.opt_batch_size = b.batch_size;
        r.opt_power_limit = p.power_limit;
      }
    }
  }
  return r;
}

Metrics compute_metrics(const WorkloadTrace& t, const SimResult& res, double eta) {
  Metrics m;
  const auto& recs = res.recurrences;
  if (recs.empty()) return m;
  const Reference before = compute_reference(t, eta, false);
  const Reference after = t.drift_at ? compute_reference(t, eta, true) : before;
  const std::size_t n = recs.size();
  const std::size_t k = std::min<std::size_t>(5, n);
  Joules e{0.0};
  Seconds tm{0.0};
  for (std::size_t i = n - k; i < n; ++i) {
    e += recs[i].energy;
    tm += recs[i].time;
  }
  const bool last_after = t.drift_at && static_cast<int>(n) > *t.drift_at;
  const Reference& last = last_after ? after : before;
  m.eta_norm = e / static_cast<double>(k) / last.default_eta;
  m.tta_norm = tm / static_cast<double>(k) / last.default_tta;
  for (std::size_t i = 0; i < n; ++i) {
    const bool drifted = t.drift_at && static_cast<int>(i) >= *t.drift_at;
    m.cum_energy += recs[i].energy;
    m.cum_time += recs[i].time;
    m.cum_cost += recs[i].cost;
    m.cum_regret += recs[i].cost - (drifted ? after.opt_cost : before.opt_cost);
  }
  m.cum_regret_rel = m.cum_regret / last.opt_cost;
  m.final_batch_size = recs.back().batch_size;
  m.final_power_limit = recs.back().power_limit;
  return m;
}

}  // namespace zeus::sim
