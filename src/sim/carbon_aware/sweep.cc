#include "zeus/sim/carbon_aware/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "zeus/util/error.h"

namespace zeus::sim::carbon_aware {

Distribution distribution(std::vector<double> v) {
  Distribution d;
  d.n = v.size();
  if (v.empty()) return d;
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - d.mean) * (x - d.mean);
  d.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  std::sort(v.begin(), v.end());
  // Linear interpolation between order statistics (numpy's default).
  const auto q = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  d.p5 = q(0.05);
  d.p50 = q(0.5);
  d.p95 = q(0.95);
  return d;
}

namespace {

// A signal of absurd but finite values (1e306 g/kWh) makes a job's charge
// overflow to infinity, and the changes against the baseline to NaN, which a
// report would print as if it were a result ("-nan %"). Every number the
// summary is built from passes here first.
void require_finite_charge(const Replayer& replayer, std::initializer_list<double> values) {
  for (const double v : values) {
    if (std::isfinite(v)) continue;
    const zeus::carbon_aware::GridSignal& s = replayer.signal();
    const auto values_of = s.values();
    const auto [lo, hi] = std::minmax_element(values_of.begin(), values_of.end());
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: a job's {} out of range (beyond a double); the signal's "
                            "values run from {:g} to {:g} {}: check the file and its unit",
                            s.source(),
                            s.kind() == zeus::carbon_aware::SignalKind::kCarbon ? "emissions are"
                                                                                : "cost is",
                            *lo, *hi, s.unit()));
  }
}

// The baseline (max) first: added when the list lacks it, moved there when
// it is elsewhere.
void put_baseline_first(std::vector<Policy>& policies) {
  const auto is_max = [](const Policy& p) { return p.kind == Policy::Kind::kMax; };
  const auto base = std::find_if(policies.begin(), policies.end(), is_max);
  if (base == policies.end()) {
    policies.insert(policies.begin(), parse_policy("max"));
  } else {
    std::rotate(policies.begin(), base, base + 1);
  }
}

// Period starts in [from, to), step_s apart, none before the first whose
// history is covered.
std::vector<std::int64_t> candidate_starts(const Replayer& replayer, std::int64_t from,
                                           std::int64_t to, std::int64_t step_s) {
  std::vector<std::int64_t> candidates;
  std::int64_t s = std::max(replayer.period_floor(from), replayer.first_start());
  if (s < from) s += replayer.period_s();
  for (; s < to; s += step_s) candidates.push_back(s);
  return candidates;
}

// Every policy from every candidate start, on `threads` workers (0: one per
// core). The first failure other than kNotFound is rethrown.
std::vector<std::vector<ReplayResult>> replay_starts(const Replayer& replayer,
                                                     const std::vector<Policy>& policies,
                                                     const std::vector<std::int64_t>& candidates,
                                                     int threads) {
  // results per candidate start; empty when the start was skipped.
  std::vector<std::vector<ReplayResult>> by_start(candidates.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (std::size_t i = next++; i < candidates.size(); i = next++) {
      std::vector<ReplayResult> row;
      try {
        for (const auto& p : policies) row.push_back(replayer.run(p, candidates[i]));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kNotFound) {  // anything but "no signal there"
          std::lock_guard lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
        row.clear();  // the job outlasts the series from here
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
      by_start[i] = std::move(row);
    }
  };
  const int n =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::jthread> pool;
  for (int k = 1; k < n; ++k) pool.emplace_back(worker);
  worker();
  pool.clear();
  if (failure) std::rethrow_exception(failure);
  return by_start;
}

// The baseline's totals over every start.
struct Totals {
  double time = 0, energy = 0, charge = 0;
};

Totals baseline_totals(const Replayer& replayer, const std::vector<ReplayResult>& b) {
  double bt = 0, be = 0, bc = 0;
  for (const auto& r : b) {
    bt += r.time.count();
    be += r.energy.value();
    bc += r.charge;
    require_finite_charge(replayer, {r.charge, bc});
  }
  return {bt, be, bc};
}

// One policy's results over every start against the baseline's (b, with
// totals base).
PolicySummary summarize(const Replayer& replayer, const Policy& policy,
                        const std::vector<ReplayResult>& results,
                        const std::vector<ReplayResult>& b, const Totals& base) {
  const double nstarts = static_cast<double>(results.size());
  const double bt = base.time, be = base.energy, bc = base.charge;
  PolicySummary sum;
  sum.policy = policy.spec;
  double t = 0, e = 0, c = 0, mape = 0;
  int nmape = 0;
  std::vector<double> dt, dc;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    t += r.time.count();
    e += r.energy.value();
    c += r.charge;
    dt.push_back(100.0 * (r.time.count() / b[i].time.count() - 1.0));
    if (b[i].charge > 0) dc.push_back(100.0 * (r.charge - b[i].charge) / b[i].charge);
    require_finite_charge(replayer, {r.charge, c, dc.empty() ? 0.0 : dc.back()});
    if (r.forecast_mape) {
      mape += *r.forecast_mape;
      ++nmape;
    }
  }
  sum.mean_time_s = t / nstarts;
  sum.mean_energy_j = e / nstarts;
  sum.mean_charge = c / nstarts;
  sum.time_change_pct = 100.0 * (t / bt - 1.0);
  sum.energy_change_pct = 100.0 * (e / be - 1.0);
  sum.charge_change_pct = bc != 0.0 ? 100.0 * (c - bc) / std::abs(bc) : 0.0;
  require_finite_charge(replayer, {sum.mean_charge, sum.charge_change_pct});
  sum.time_change = distribution(std::move(dt));
  sum.charge_change = distribution(std::move(dc));
  if (nmape > 0) sum.mean_forecast_mape = mape / nmape;
  return sum;
}

}  // namespace

SweepResult sweep_starts(const Replayer& replayer, std::vector<Policy> policies, std::int64_t from,
                         std::int64_t to, std::int64_t step_s, int threads) {
  if (step_s <= 0 || step_s % replayer.period_s() != 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the start step ({} s) must be a positive multiple of the decision "
                            "period ({} s)",
                            step_s, replayer.period_s()));
  }
  put_baseline_first(policies);
  const std::vector<std::int64_t> candidates = candidate_starts(replayer, from, to, step_s);
  std::vector<std::vector<ReplayResult>> by_start =
      replay_starts(replayer, policies, candidates, threads);

  SweepResult out;
  out.policies = policies;
  out.results.resize(policies.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (by_start[i].empty()) {
      ++out.skipped_outlasting;
      continue;
    }
    out.starts.push_back(candidates[i]);
    for (std::size_t p = 0; p < policies.size(); ++p) out.results[p].push_back(by_start[i][p]);
  }
  if (out.starts.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: no start leaves the job inside the series ({} tried); use a "
                            "shorter job, a longer series, or --wrap",
                            replayer.signal().source(), candidates.size()));
  }
  const Totals base = baseline_totals(replayer, out.results[0]);
  for (std::size_t p = 0; p < policies.size(); ++p) {
    out.summary.push_back(summarize(replayer, policies[p], out.results[p], out.results[0], base));
  }
  return out;
}

}  // namespace zeus::sim::carbon_aware
