#include "zeus/sim/carbon_aware/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/iso8601.h"
#include "util/parse.h"
#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/error.h"

namespace zeus::sim::carbon_aware {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;
// Work left after a slot below this many epochs is rounding, not work (the
// job's end would be at most a billionth of an epoch later).
constexpr double kLeftoverEpochs = 1e-9;

std::int64_t floor_mod(std::int64_t a, std::int64_t b) { return ((a % b) + b) % b; }

std::int64_t checked_period(const zeus::carbon_aware::GridSignal& s, std::int64_t period) {
  const std::int64_t p = period == 0 ? s.resolution_s() : period;
  if (p <= 0 || p % s.resolution_s() != 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the decision period ({} s) must be a positive multiple of {}'s "
                            "resolution ({} s)",
                            p, s.source(), s.resolution_s()));
  }
  return p;
}

// The signal's mean over each whole decision period it covers.
zeus::carbon_aware::GridSignal periodic_means(const zeus::carbon_aware::GridSignal& s,
                                              std::int64_t period) {
  const std::int64_t phase = floor_mod(s.start_utc(), s.resolution_s());
  const std::int64_t k = period / s.resolution_s();
  const auto first =
      static_cast<std::size_t>(floor_mod(phase - s.start_utc(), period) / s.resolution_s());
  const std::size_t groups =
      first >= s.size() ? 0 : (s.size() - first) / static_cast<std::size_t>(k);
  if (groups == 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} is shorter than one decision period ({} s)", s.source(), period));
  }
  return s.slice(first, groups * static_cast<std::size_t>(k)).coarsened(k);
}

const power_limit::PowerLimitMeasurement& at_limit(const JobProfile& p, Milliwatts limit) {
  for (const auto& m : p.per_epoch) {
    if (m.power_limit == limit) return m;
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("power limit {} W is not in the job's profile",
                          static_cast<double>(limit.value()) / 1000.0));
}

}  // namespace

Policy parse_policy(const std::string& spec) {
  Policy p;
  p.spec = spec;
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (spec == "max") {  // not "max:" with an empty argument
    p.kind = Policy::Kind::kMax;
  } else if (kind == "limit" && !arg.empty()) {
    p.kind = Policy::Kind::kFixed;
    p.fixed = Milliwatts(static_cast<std::int64_t>(
        std::llround(parse_double(arg, "policy limit:W", 1.0, 100'000.0) * 1000.0)));
  } else if ((kind == "zeus-cost" || kind == "max-slowdown") && !arg.empty()) {
    p.kind = Policy::Kind::kStatic;
    p.selector = power_limit::make_power_limit_selector(spec);
  } else if (kind == "chase" && !arg.empty()) {
    p.kind = Policy::Kind::kChase;
    const auto second = arg.find(':');
    p.eta = parse_double(arg.substr(0, second), "chase eta", 0.0, 1.0);
    if (second != std::string::npos) {
      p.forecaster = arg.substr(second + 1);
      if (p.forecaster != "persistence" && p.forecaster != "linear" && p.forecaster != "svr" &&
          p.forecaster != "oracle") {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("policy '{}': unknown forecaster '{}'; expected persistence, "
                                "linear, svr or oracle",
                                spec, p.forecaster));
      }
    }
  } else {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("unknown policy '{}'; expected max, limit:W, zeus-cost:ETA, "
                            "max-slowdown:FACTOR or chase:ETA[:persistence|linear|svr|oracle]",
                            spec));
  }
  return p;
}

Replayer::Replayer(JobProfile profile, const zeus::carbon_aware::GridSignal& signal,
                   ReplayOptions options)
    : profile_(std::move(profile)),
      signal_(signal),
      options_(options),
      period_(checked_period(signal, options.period_s)),
      phase_(floor_mod(signal.start_utc(), signal.resolution_s())),
      periodic_(periodic_means(signal, period_)) {
  if (profile_.per_epoch.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "the job's profile has no power limits");
  }
  for (const auto& m : profile_.per_epoch) {
    if (!(m.time.count() > 0.0) || !(m.energy.value() >= 0.0) || !std::isfinite(m.energy.value())) {
      throw_error(ErrorCode::kInvalidArgument,
                  "the job's profile needs a positive time and a finite energy at every limit");
    }
  }
  if (!(options_.epochs > 0.0 && std::isfinite(options_.epochs))) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("the job's work must be a positive number of epochs, got {}", options_.epochs));
  }
  if (options_.history_s < period_) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the history window ({} s) is shorter than one period ({} s)",
                            options_.history_s, period_));
  }
}

std::int64_t Replayer::period_floor(std::int64_t t) const {
  return t - floor_mod(t - phase_, period_);
}

std::int64_t Replayer::first_start() const {
  return periodic_.start_utc() + (options_.history_s / period_) * period_;
}

namespace {

// What the policy fixes before the job: a static limit, or Chase's model.
struct PolicyPlan {
  Milliwatts fixed{0};
  std::unique_ptr<zeus::carbon_aware::SignalForecaster> forecaster;
  std::optional<zeus::carbon_aware::ChasePolicy> chase;
};

// Chase's normaliser: the given maximum, or the signal's over the history.
double chase_signal_max(const Replayer& rp, std::int64_t hist_begin, std::int64_t p0) {
  const zeus::carbon_aware::GridSignal& signal = rp.signal();
  double smax = -std::numeric_limits<double>::infinity();
  if (rp.options().signal_max) {
    smax = *rp.options().signal_max;
  } else {
    const std::size_t i0 = signal.index_at(hist_begin);
    const std::size_t i1 = signal.index_at(p0 - 1) + 1;
    for (std::size_t i = i0; i < i1; ++i) smax = std::max(smax, signal.value(i));
  }
  return smax;
}

// The plan of `policy` for a job whose first period starts at p0, with
// hist_periods periods of history from hist_begin; Chase's in-sample MAPE goes
// into r.
void plan_policy(const Replayer& rp, const Policy& policy, std::int64_t p0, std::int64_t hist_begin,
                 std::int64_t hist_periods, PolicyPlan& plan, ReplayResult& r) {
  const auto& m = rp.profile().per_epoch;
  const zeus::carbon_aware::GridSignal& periodic = rp.periodic_signal();
  switch (policy.kind) {
    case Policy::Kind::kMax:
      plan.fixed = power_limit::max_measured_limit(m);
      break;
    case Policy::Kind::kFixed:
      plan.fixed = at_limit(rp.profile(), policy.fixed).power_limit;
      break;
    case Policy::Kind::kStatic:
      plan.fixed = policy.selector->select(m);
      break;
    case Policy::Kind::kChase: {
      const std::size_t h0 = periodic.index_at(hist_begin);
      const auto history = periodic.values().subspan(h0, static_cast<std::size_t>(hist_periods));
      plan.chase.emplace(policy.eta, chase_signal_max(rp, hist_begin, p0), rp.options().world_size);
      plan.forecaster = zeus::carbon_aware::make_forecaster(policy.forecaster, &periodic);
      plan.forecaster->fit(history, hist_begin, rp.period_s());
      r.forecast_mape = plan.forecaster->mape();
      break;
    }
  }
}

// A job under way: its clock and the epochs of work left.
struct JobProgress {
  const zeus::carbon_aware::GridSignal& signal;
  double t;
  double work;

  // Runs at (epoch time tau, power) until `until` or the work is done,
  // charging each of the signal's samples its own value.
  void advance(double tau, double power, double until, PeriodRecord& rec) {
    while (work > 0.0 && t < until) {
      const std::size_t i = signal.index_at(static_cast<std::int64_t>(std::floor(t)));
      const double slot_end =
          std::min(until, static_cast<double>(signal.sample_start(i) + signal.resolution_s()));
      const double need = work * tau;
      double dt = slot_end - t;
      // Work is counted down slot by slot (work -= dt / tau), and that rounds:
      // a job whose work ends exactly on a slot's end can be left ~1e-13
      // epochs short, which would spill into the next sample (past the
      // series' end: kNotFound; elsewhere: an extra, empty period). Less than
      // kLeftoverEpochs after this slot is rounding: the job ends here.
      if (need <= dt || work - dt / tau < kLeftoverEpochs) {
        dt = std::min(need, dt);
        work = 0.0;
        t += dt;
      } else {
        work -= dt / tau;
        t = slot_end;  // exactly on the boundary, so the next slot is found
      }
      const double e = power * dt;
      rec.time += Seconds(dt);
      rec.energy += Joules(e);
      rec.charge += e * signal.value(i) / kJoulesPerKwh;
    }
  }
};

void finish_record(ReplayResult& r, const PeriodRecord& rec, bool record) {
  r.time += rec.time;
  r.energy += rec.energy;
  r.charge += rec.charge;
  if (record) r.periods.push_back(rec);
}

// Every limit in turn for one epoch (the just-in-time profile): its mean
// power for its time, whatever periods it spans; decisions start after.
PeriodRecord profiling_epoch(const JobProfile& profile, std::int64_t start_utc, JobProgress& job) {
  PeriodRecord rec;
  rec.profiling = true;
  rec.decision.period_start_utc = start_utc;
  rec.decision.forecast = rec.decision.eta_eff = rec.signal = std::nan("");
  const double tau = profile.profile_time.count();
  const double epochs_left = job.work;
  job.work = std::min(1.0, epochs_left);
  job.advance(tau, profile.profile_energy.value() / tau, std::numeric_limits<double>::infinity(),
              rec);
  job.work = epochs_left - std::min(1.0, epochs_left);
  return rec;
}

// The limit for the period starting at ps: the plan's fixed one, or Chase's
// choice for the forecast of the period.
zeus::carbon_aware::ChaseDecision decide(const Replayer& rp, const PolicyPlan& plan,
                                         std::int64_t ps) {
  zeus::carbon_aware::ChaseDecision decision;
  decision.period_start_utc = ps;
  decision.forecast = decision.eta_eff = decision.signal_seen = std::nan("");
  if (plan.chase) {
    const zeus::carbon_aware::GridSignal& periodic = rp.periodic_signal();
    const double prev = periodic.value(periodic.index_at(ps - rp.period_s()));
    const double forecast = plan.forecaster->predict(ps, prev);
    const auto choice = plan.chase->choose(rp.profile().per_epoch, forecast);
    decision = {ps, prev, forecast, choice.eta_eff, choice.power_limit};
  } else {
    decision.power_limit = plan.fixed;
  }
  return decision;
}

}  // namespace

ReplayResult Replayer::run(const Policy& policy, std::int64_t start_utc, bool record) const {
  const std::int64_t p0 = period_floor(start_utc);
  const std::int64_t hist_periods = options_.history_s / period_;
  const std::int64_t hist_begin = p0 - hist_periods * period_;
  if (hist_begin < periodic_.start_utc() || p0 > periodic_.end_utc()) {
    throw_error(
        ErrorCode::kNotFound,
        fmt::format("{}: a job starting {} needs {} h of signal before it, from {}, but "
                    "the series covers {} to {}",
                    signal_.source(), format_iso8601(start_utc),
                    static_cast<double>(options_.history_s) / 3600.0, format_iso8601(hist_begin),
                    format_iso8601(periodic_.start_utc()), format_iso8601(periodic_.end_utc())));
  }

  ReplayResult r;
  PolicyPlan plan;
  plan_policy(*this, policy, p0, hist_begin, hist_periods, plan, r);

  JobProgress job{signal_, static_cast<double>(start_utc), options_.epochs};
  if (options_.charge_profiling && policy.kind != Policy::Kind::kMax &&
      profile_.profile_time.count() > 0.0) {
    finish_record(r, profiling_epoch(profile_, start_utc, job), record);
  }

  while (job.work > 0.0) {
    const std::int64_t ps = period_floor(static_cast<std::int64_t>(std::floor(job.t)));
    PeriodRecord rec;
    rec.decision = decide(*this, plan, ps);
    rec.signal = periodic_.value(periodic_.index_at(ps));
    const auto& x = at_limit(profile_, rec.decision.power_limit);
    job.advance(x.time.count(), x.energy.value() / x.time.count(),
                static_cast<double>(ps + period_), rec);
    finish_record(r, rec, record);
  }
  return r;
}

}  // namespace zeus::sim::carbon_aware
