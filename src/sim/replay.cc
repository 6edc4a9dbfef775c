#include "sim/replay.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <vector>

#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/optimizer/power_limit/selection/zeus_cost.h"

namespace zeus::sim {

namespace bs = zeus::batch_size;

PolicyDriver::PolicyDriver(const WorkloadTrace& t, bs::Policy& p, std::string name, double eta)
    : trace_(t), policy_(p), name_(std::move(name)), eta_(eta) {
  if (!policy_.batch_size || !policy_.power_limit) {
    fail(ErrorCode::kInvalidArgument, "it lacks a batch-size or a power-limit half");
  }
}

template <typename F>
auto PolicyDriver::guard(const char* doing, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    fail(e.code(), fmt::format("{} failed: {}", doing, e.what()));
  } catch (const std::exception& e) {
    fail(ErrorCode::kInvalidArgument, fmt::format("{} failed: {}", doing, e.what()));
  }
}

std::string PolicyDriver::where() const {
  return fmt::format("policy '{}' on job {} on {}", name_, trace_.name(), trace_.gpu);
}

void PolicyDriver::fail(ErrorCode code, const std::string& what) const {
  throw_error(code, fmt::format("{}: {}", where(), what));
}

const BatchSizeTrace& PolicyDriver::checked_batch(int batch_size) const {
  for (const auto& b : trace_.batch_sizes) {
    if (b.batch_size == batch_size) return b;
  }
  fail(ErrorCode::kInvalidArgument,
       fmt::format("it predicted batch size {}, which is not one of {}", batch_size,
                   fmt::join(trace_.batch_size_list(), ", ")));
}

std::optional<Milliwatts> PolicyDriver::predict_limit(int batch_size) {
  return guard("predicting a power limit",
               [&] { return policy_.power_limit->predict(batch_size); });
}

void PolicyDriver::check_limit(const BatchSizeTrace& b, Milliwatts pl) const {
  const bool known = std::any_of(b.limits.begin(), b.limits.end(),
                                 [&](const PowerLimitPoint& p) { return p.power_limit == pl; });
  if (known) return;
  std::vector<std::string> watts;
  for (const auto& p : b.limits)
    watts.push_back(fmt::format("{:g}", to_watts(p.power_limit).value()));
  fail(ErrorCode::kInvalidArgument,
       fmt::format("it predicted power limit {:g} W for batch size {}, which is not one of {} W",
                   to_watts(pl).value(), b.batch_size, fmt::join(watts, ", ")));
}

Decision PolicyDriver::decide() {
  Decision d;
  d.choice = guard("predicting a batch size", [&] { return policy_.batch_size->predict(); });
  const BatchSizeTrace& b = checked_batch(d.batch_size());
  auto pl = predict_limit(d.batch_size());
  if (!pl) {
    // First use of this batch size: profile every limit during its first epoch.
    const Watts max_pl = to_watts(b.limits.front().power_limit);
    for (const auto& p : b.limits) {
      const Joules c = bs::epoch_cost(eta_, p.average_power, p.time_per_epoch, max_pl);
      guard("observing a profiled power limit",
            [&] { policy_.power_limit->observe(d.batch_size(), p.power_limit, c); });
    }
    pl = predict_limit(d.batch_size());
    if (!pl) {
      fail(ErrorCode::kInvalidArgument,
           fmt::format("it gave no power limit (None) for batch size {} after profiling it",
                       d.batch_size()));
    }
    d.profile = true;
  }
  check_limit(b, *pl);
  d.power_limit = *pl;
  return d;
}

Decision PolicyDriver::decide_at(int batch_size, bs::TrialKind kind) {
  Decision d;
  d.choice = {0, batch_size, kind};
  const BatchSizeTrace& b = checked_batch(batch_size);
  const auto pl = predict_limit(batch_size);
  if (!pl) {
    fail(ErrorCode::kInvalidArgument,
         fmt::format("it gave no power limit (None) for the best-known batch size {}, which it "
                     "profiled before",
                     batch_size));
  }
  check_limit(b, *pl);
  d.power_limit = *pl;
  return d;
}

void PolicyDriver::observe(const Decision& d, Joules cost, bool reached) {
  guard("observing a run", [&] {
    policy_.batch_size->observe(d.choice, cost, reached);
    policy_.power_limit->observe_run(d.choice, d.power_limit, cost, reached);
  });
}

// One run (_run_job): sample a path, cap the epochs, account the profiling epoch.
RunOutcome run_job(const WorkloadTrace& t, int recurrence, const Decision& d, Joules cost_ub,
                   double eta, bs::Rng& rng) {
  const auto& b = t.batch(d.batch_size());
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

Joules cost_of(const RunOutcome& out, double eta, Watts max_power) {
  return Joules(power_limit::zeus_cost(out.energy, out.time, eta, max_power));
}

}  // namespace zeus::sim
