#include "zeus/optimizer/power_limit/carbon_aware/chase_controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "util/iso8601.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::carbon_aware {
namespace {

double watts(Milliwatts mw) { return to_watts(mw).value(); }

}  // namespace

ChaseController::ChaseController(power_limit::GlobalPowerLimitOptimizer& optimizer,
                                 SignalSource& source, ChaseControllerOptions options)
    : optimizer_(optimizer), source_(source), options_(std::move(options)) {
  if (!(options_.eta >= 0.0 && options_.eta <= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: eta must be in [0, 1], got {}", options_.eta));
  }
  if (options_.period_s <= 0 || options_.history_s < options_.period_s) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: the period ({} s) must be positive and the history ({} s) at "
                            "least one period",
                            options_.period_s, options_.history_s));
  }
  // A bad normaliser is the caller's error, found now: in the first decision
  // it would be counted as a period without a signal, every period.
  if (options_.signal_max && !(std::isfinite(*options_.signal_max) && *options_.signal_max > 0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: the signal's normaliser must be positive and finite, got {}",
                            *options_.signal_max));
  }
  if (options_.forecaster == "oracle") {
    throw_error(ErrorCode::kInvalidArgument,
                "chase: the oracle forecaster exists in the simulator only");
  }
  (void)make_forecaster(options_.forecaster);  // an unknown name or a missing libsvm: now
  if (options_.refit_periods < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: refit_periods must be >= 0 (0: fit once), got {}",
                            options_.refit_periods));
  }
  if (options_.world_size < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: world size must be >= 0, got {}", options_.world_size));
  }
  if (options_.check_steps < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: check_steps must be >= 1, got {}", options_.check_steps));
  }
  if (options_.reducer != nullptr && options_.reducer->world_size() > 1) {
    reducer_ = options_.reducer;
  }
  if (options_.world_size == 0) {
    const auto local = static_cast<double>(optimizer.num_gpus());
    // A collective call: every rank constructs its controller.
    options_.world_size =
        static_cast<int>(std::lround(distributed() ? reducer_->all_reduce_sum(local) : local));
  }
  if (!options_.unix_now) options_.unix_now = &wall_time_seconds;
}

void ChaseController::on_step_begin() {
  optimizer_.on_step_begin();
  if (!optimizer_.done()) return;  // profiling drives the limit until every one is measured
  // Profiling ends at the same step on every rank (its windows are step
  // counts), so the checks, and their collective calls, line up across ranks.
  if (steps_done_++ % options_.check_steps != 0) return;
  const auto now = static_cast<std::int64_t>(std::floor(options_.unix_now()));
  const std::int64_t p = options_.period_s;
  std::int64_t period = now - (((now % p) + p) % p);
  if (distributed()) {
    // Clocks differ a little between hosts: the ranks move on together when
    // the first of them reaches a boundary (Unix seconds are exact in a double).
    period = static_cast<std::int64_t>(reducer_->all_reduce_max(static_cast<double>(period)));
  }
  if (last_period_ && *last_period_ == period) return;
  last_period_ = period;  // a failure retries at the next period, not every step
  decide(period);
}

void ChaseController::on_epoch_end() { optimizer_.on_epoch_end(); }

void ChaseController::prepare(std::int64_t period_start) {
  // The trailing run of periods the source can give, newest first.
  const std::int64_t p = options_.period_s;
  std::vector<double> history;
  const std::int64_t n = options_.history_s / p;
  for (std::int64_t k = 1; k <= n; ++k) {
    try {
      history.push_back(source_.value(period_start - k * p, p));
    } catch (const Error&) {
      if (history.empty()) throw;  // not even the last period: no decision possible
      break;
    }
  }
  std::reverse(history.begin(), history.end());
  const bool refit = policy_.has_value();
  if (!refit) {
    const double smax = options_.signal_max ? *options_.signal_max
                                            : *std::max_element(history.begin(), history.end());
    policy_.emplace(options_.eta, smax, options_.world_size);
  }
  auto forecaster = make_forecaster(options_.forecaster);
  forecaster->fit(history, period_start - static_cast<std::int64_t>(history.size()) * p, p);
  forecaster_ = std::move(forecaster);
  fitted_at_ = period_start;
  log::info("chase: {} {} ({}), {} periods of history, normaliser {:g}, {} one-step MAPE {}",
            refit ? "refitted on" : "fitted on", source_.description(),
            signal_kind_name(source_.kind()), history.size(), policy_->signal_max(),
            forecaster_->name(),
            forecaster_->mape() ? fmt::format("{:.2f} %", *forecaster_->mape()) : "n/a");
}

bool ChaseController::refit_due(std::int64_t period_start) const {
  if (!policy_ || !fitted_at_) return true;
  if (options_.refit_periods == 0) return false;
  return period_start - *fitted_at_ >= options_.refit_periods * options_.period_s;
}

ChaseDecision ChaseController::choose(std::int64_t period_start) {
  if (refit_due(period_start)) prepare(period_start);
  const double seen = source_.value(period_start - options_.period_s, options_.period_s);
  const double forecast = forecaster_->predict(period_start, seen);
  const auto choice = policy_->choose(optimizer_.measurements(), forecast);
  return {period_start, seen, forecast, choice.eta_eff, choice.power_limit};
}

std::optional<ChaseDecision> ChaseController::agree(std::int64_t period_start,
                                                    std::optional<ChaseDecision> local) {
  if (!distributed()) return local;
  // A broadcast from rank 0 out of sums: the other ranks add zeros. The same
  // calls on every rank: whether rank 0 decided is shared first.
  const bool root = reducer_->rank() == 0;
  const auto share = [&](double value) { return reducer_->all_reduce_sum(root ? value : 0.0); };
  if (share(local ? 1.0 : 0.0) < 0.5) return std::nullopt;
  ChaseDecision d;
  d.period_start_utc = period_start;  // agreed already
  d.signal_seen = share(local ? local->signal_seen : 0.0);
  d.forecast = share(local ? local->forecast : 0.0);
  d.eta_eff = share(local ? local->eta_eff : 0.0);
  d.power_limit = Milliwatts(
      std::llround(share(local ? static_cast<double>(local->power_limit.value()) : 0.0)));
  return d;
}

void ChaseController::decide(std::int64_t period_start) {
  std::optional<ChaseDecision> local;
  std::string error;
  if (!distributed() || reducer_->rank() == 0) {
    try {
      local = choose(period_start);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kNoPermission || e.code() == ErrorCode::kGpuLost) throw;
      error = e.what();
    }
  }
  std::optional<ChaseDecision> d = agree(period_start, local);
  if (d) {
    try {
      optimizer_.apply_power_limit(d->power_limit);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kNoPermission || e.code() == ErrorCode::kGpuLost) throw;
      error = e.what();
      d.reset();
    }
  } else if (error.empty()) {
    error = "rank 0 had no signal for this period";
  }
  if (!d) {
    ++failed_periods_;
    last_error_ = error;
    if (!warned_) {
      log::warn(
          "chase: no signal for the period from {} ({}); keeping {} W and retrying each "
          "period",
          format_iso8601(period_start), error, watts(optimizer_.applied_power_limit()));
      warned_ = true;
    }
    return;
  }
  decisions_.push_back(*d);
  last_error_.clear();
  log::info("chase: period {}: signal {:g}, forecast {:g}, eta_eff {:.4f} -> {} W",
            format_iso8601(d->period_start_utc), d->signal_seen, d->forecast, d->eta_eff,
            watts(d->power_limit));
  if (warned_) {
    log::info("chase: {} answers again",
              distributed() && reducer_->rank() != 0 ? "rank 0's signal" : source_.description());
    warned_ = false;
  }
}

std::string ChaseController::decisions_csv() const {
  std::string out = "period_start_utc,signal_seen,forecast,eta_eff,power_limit_w\n";
  for (const auto& d : decisions_) {
    out += fmt::format("{},{:.6g},{:.6g},{:.6g},{:g}\n", format_iso8601(d.period_start_utc),
                       d.signal_seen, d.forecast, d.eta_eff, watts(d.power_limit));
  }
  return out;
}

}  // namespace zeus::carbon_aware
