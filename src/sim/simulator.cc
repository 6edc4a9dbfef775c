#include "zeus/sim/simulator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

#include "sim/replay.h"
#include "util/text.h"
#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/optimizer/power_limit/selection/zeus_cost.h"
#include "zeus/util/error.h"

namespace zeus::sim {

namespace bs = zeus::batch_size;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// Recurrences one after another: Simulator.simulate_one_job.
SimResult simulate_sequential(const WorkloadTrace& t, PolicyDriver& strategy, double beta,
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
      RunRecord run{i,        d.batch_size(), d.power_limit, out.energy,
                    out.time, Joules(0.0),    out.reached,   d.profile,
                    false,    d.choice.kind,  Seconds(0),    0};
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
        rec.batch_size = d.batch_size();
        rec.power_limit = d.power_limit;
        done = true;
      } else if (i == 0 && d.batch_size() == t.default_batch_size) {
        // The reference requires b0 to converge first (every strategy but the
        // no-pruning ablation starts there); without it there is no baseline.
        unreplayable(
            fmt::format("{} on {}: the default batch size {} did not reach the target "
                        "in the first recurrence (seed {})",
                        t.name(), t.gpu, d.batch_size(), o.seed));
      }
    }
    if (!done) {
      if (o.stop_when_stuck) {
        res.stuck_at = i;
        return res;
      }
      unreplayable(
          fmt::format("{} on {}: recurrence {} failed {} tries in a row (seed {}, policy '{}')",
                      t.name(), t.gpu, i + 1, o.max_tries, o.seed, strategy.name()));
    }
    res.recurrences.push_back(rec);
  }
  return res;
}

// Overlapping arrivals: recurrence i is submitted at i * interval; a run's
// outcome is observed when it ends; a failed run is resubmitted at its end.
SimResult simulate_overlapping(const WorkloadTrace& t, PolicyDriver& strategy, double beta,
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
      RunRecord run{e.recurrence, d.batch_size(), d.power_limit, out.energy,
                    out.time,     Joules(0.0),    out.reached,   d.profile,
                    false,        d.choice.kind,  e.time,        in_flight};
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
      unreplayable(
          fmt::format("{} on {}: recurrence {} failed {} tries in a row (seed {}, policy '{}')",
                      t.name(), t.gpu, e.recurrence + 1, o.max_tries, o.seed, strategy.name()));
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

Strategy parse_strategy(std::string_view name) {
  return Strategy(bs::PolicyRegistry::global().find(name).name);
}

bool uses_early_stopping(const Strategy& strategy) {
  return bs::PolicyRegistry::global().find(strategy.name()).early_stopping;
}

bs::PolicyContext policy_context(const WorkloadTrace& t, const SimOptions& o) {
  bs::PolicyContext c;
  c.job = fmt::format("{} on {}", t.name(), t.gpu);
  c.batch_sizes = t.batch_size_list();
  c.default_batch_size = t.default_batch_size;
  c.eta = o.eta;
  c.seed = o.seed;
  c.max_power = t.max_power;
  for (const auto& b : t.batch_sizes) {
    auto& limits = c.power_limits[b.batch_size];
    for (const auto& p : b.limits)
      limits.push_back({p.power_limit, p.time_per_epoch, p.average_power});
  }
  c.num_pruning_rounds = o.num_pruning_rounds;
  c.window_size = o.window_size;
  c.one_limit_per_recurrence = o.power_limit_search == PowerLimitSearch::kOnePerRecurrence;
  return c;
}

SimResult simulate(const WorkloadTrace& trace, bs::Policy& policy, const std::string& name,
                   bool early_stopping, const SimOptions& options) {
  validate(options);
  const double beta = early_stopping ? options.beta : kInf;
  PolicyDriver driver(trace, policy, name, options.eta);
  return options.overlap > 0 ? simulate_overlapping(trace, driver, beta, options)
                             : simulate_sequential(trace, driver, beta, options);
}

SimResult simulate(const WorkloadTrace& trace, const Strategy& strategy,
                   const SimOptions& options) {
  validate(options);
  const bs::PolicyInfo& info = bs::PolicyRegistry::global().find(strategy.name());
  bs::Policy policy = info.make(policy_context(trace, options));
  return simulate(trace, policy, info.name, info.early_stopping, options);
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

RunSummary summarize_run(const WorkloadTrace& t, const SimResult& res, double eta) {
  RunSummary m;
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
