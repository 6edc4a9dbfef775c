#include "zeus/sim/carbon_aware/study.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace zeus::sim::carbon_aware {
namespace {

struct Change {
  double charge_pct = 0, time_pct = 0;
  bool ok = false;
};

// A policy's change of the means against the baseline over the given starts
// (those it finishes within the series).
Change change_vs_baseline(const Replayer& rp, const Policy& policy, const SweepResult& main) {
  double c = 0, cb = 0, t = 0, tb = 0;
  for (std::size_t i = 0; i < main.starts.size(); ++i) {
    try {
      const ReplayResult r = rp.run(policy, main.starts[i]);
      c += r.charge;
      t += r.time.count();
      cb += main.results[0][i].charge;
      tb += main.results[0][i].time.count();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotFound) throw;
    }
  }
  if (tb == 0.0 || cb == 0.0) return {};
  return {100.0 * (c - cb) / std::abs(cb), 100.0 * (t / tb - 1.0), true};
}

Headline headline_for(const Replayer& rp, const SweepResult& sweep, std::size_t policy_index,
                      const SweepResult& main) {
  const PolicySummary& s = sweep.summary[policy_index];
  Headline h;
  h.chase_policy = s.policy;
  h.chase_charge_pct = s.charge_change_pct;
  h.chase_time_pct = s.time_change_pct;
  const double factor = std::max(1.0, 1.0 + s.time_change_pct / 100.0);
  h.static_policy = fmt::format("max-slowdown:{:.4f}", factor);
  const Change st = change_vs_baseline(rp, parse_policy(h.static_policy), main);
  h.static_charge_pct = st.charge_pct;
  h.static_time_pct = st.time_pct;
  // The frontier of fixed limits, interpolated at the chase's time change.
  std::vector<Change> fixed;
  for (const auto& m : rp.profile().per_epoch) {
    const auto c =
        change_vs_baseline(rp,
                           parse_policy(fmt::format(
                               "limit:{:g}", static_cast<double>(m.power_limit.value()) / 1000.0)),
                           main);
    if (c.ok) fixed.push_back(c);
  }
  std::sort(fixed.begin(), fixed.end(),
            [](const Change& a, const Change& b) { return a.time_pct < b.time_pct; });
  for (std::size_t i = 1; i < fixed.size(); ++i) {
    const auto& a = fixed[i - 1];
    const auto& b = fixed[i];
    if (a.time_pct <= h.chase_time_pct && h.chase_time_pct <= b.time_pct) {
      const double w = b.time_pct == a.time_pct
                           ? 0.0
                           : (h.chase_time_pct - a.time_pct) / (b.time_pct - a.time_pct);
      h.frontier_charge_pct = a.charge_pct + w * (b.charge_pct - a.charge_pct);
      break;
    }
  }
  h.share = h.chase_charge_pct < 0 ? h.static_charge_pct / h.chase_charge_pct : std::nan("");
  return h;
}

double median_finite(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

JobProfile job_profile(const std::vector<power_limit::PowerLimitMeasurement>& per_epoch,
                       Seconds profile_time, Joules profile_energy) {
  return JobProfile{per_epoch, profile_time, profile_energy};
}

StudyResult run_study(const StudySpec& spec) {
  zeus::carbon_aware::GridSignal raw =
      zeus::carbon_aware::read_signal_csv(spec.signal_path, spec.csv);
  const TraceSet traces = TraceSet::load(spec.traces_dir, {spec.gpu});
  const WorkloadTrace wt = traces.workload(spec.gpu, find_workload(spec.workload));
  const BatchSizeTrace& b = wt.batch(spec.batch_size);
  std::vector<power_limit::PowerLimitMeasurement> per_epoch;
  for (const auto& p : b.limits) {
    per_epoch.push_back({p.power_limit, p.energy_per_epoch, p.time_per_epoch});
  }
  double epochs = spec.replay.epochs;
  if (!(epochs > 0)) {
    epochs = median_finite(b.target_epochs);
    if (!(epochs > 0)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{} batch size {} on {} never reached its target in the trace; "
                              "give --epochs",
                              wt.name(), spec.batch_size, spec.gpu));
    }
  }
  StudyResult out{raw,
                  fmt::format("{} on {} (batch size {})", wt.name(), spec.gpu, spec.batch_size),
                  job_profile(per_epoch, b.profile_time_per_epoch, b.profile_energy_per_epoch),
                  epochs,
                  {},
                  {},
                  {},
                  {},
                  0,
                  {}};
  const zeus::carbon_aware::GridSignal used = spec.wrap ? raw.periodic_extension() : raw;
  ReplayOptions opt = spec.replay;
  opt.epochs = epochs;
  const Replayer rp(out.profile, used, opt);
  const std::int64_t step = spec.start_step_s > 0 ? spec.start_step_s : rp.period_s();
  std::vector<Policy> policies;
  for (const auto& p : spec.policies) policies.push_back(parse_policy(p));
  out.main = sweep_starts(rp, policies, raw.start_utc(), raw.end_utc(), step, spec.threads);
  for (std::size_t i = 0; i < out.main.policies.size(); ++i) {
    if (out.main.policies[i].kind == Policy::Kind::kChase) {
      out.headlines.push_back(headline_for(rp, out.main, i, out.main));
    }
  }
  if (!spec.pareto_etas.empty()) {
    std::vector<Policy> pareto;
    for (const auto& m : per_epoch) {
      pareto.push_back(parse_policy(
          fmt::format("limit:{:g}", static_cast<double>(m.power_limit.value()) / 1000.0)));
    }
    for (double eta : spec.pareto_etas) {
      pareto.push_back(parse_policy(fmt::format("chase:{:g}:{}", eta, spec.pareto_forecaster)));
    }
    out.pareto = sweep_starts(rp, pareto, raw.start_utc(), raw.end_utc(), step, spec.threads);
    if (spec.target) {
      double best = INFINITY;
      std::size_t best_i = 0;
      for (std::size_t i = 0; i < out.pareto.policies.size(); ++i) {
        if (out.pareto.policies[i].kind != Policy::Kind::kChase) continue;
        const auto& s = out.pareto.summary[i];
        const double d = std::hypot(s.charge_change_pct - spec.target->first,
                                    s.time_change_pct - spec.target->second);
        if (d < best) {
          best = d;
          best_i = i;
        }
      }
      if (best_i > 0) out.nearest = headline_for(rp, out.pareto, best_i, out.pareto);
    }
  }
  out.single_start = spec.single_start ? *spec.single_start : out.main.starts.front();
  for (const auto& p : out.main.policies) {
    out.single.emplace_back(p.spec, rp.run(p, out.single_start, true));
  }
  return out;
}

}  // namespace zeus::sim::carbon_aware
