#include "zeus/optimizer/power_limit/power_limit_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "optimizer/power_limit/power_limit_profile_json.h"
#include "zeus/optimizer/power_limit/power_limit_report.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"

namespace zeus::power_limit {
namespace {

double watts(Milliwatts mw) { return to_watts(mw).value(); }

// Call from a catch block only: anything but kNoPermission is rethrown as it
// is (`throw;` keeps its dynamic type, e.g. NvmlError), a refusal gets advice.
[[noreturn]] void rethrow_with_privilege_hint(const Error& e, const std::string& what) {
  if (e.code() != ErrorCode::kNoPermission) throw;
  throw_error(ErrorCode::kNoPermission,
              fmt::format("cannot {}: {}. Changing GPU settings needs CAP_SYS_ADMIN: run as root, "
                          "grant the capability (e.g. docker run --cap-add SYS_ADMIN), go through "
                          "zeusd (run `zeusd serve` as root and set ZEUSD_SOCK_PATH; "
                          "docs/zeusd.md), or use dry-run mode (--dry-run) to only measure",
                          what, e.what()));
}

void validate(const GlobalPowerLimitOptimizerOptions& o) {
  auto fail = [](const std::string& msg) { throw_error(ErrorCode::kInvalidArgument, msg); };
  if (o.wait_steps < 0) fail(fmt::format("wait_steps must be >= 0, got {}", o.wait_steps));
  if (o.warmup_steps < 0) fail(fmt::format("warmup_steps must be >= 0, got {}", o.warmup_steps));
  if (o.profile_steps <= 0) {
    fail(fmt::format("profile_steps must be > 0, got {}", o.profile_steps));
  }
  if (!(o.pl_step.value() > 0.0) || to_milliwatts(o.pl_step).value() < 1) {
    fail(fmt::format("pl_step must be > 0 W (at least 1 mW), got {} W", o.pl_step.value()));
  }
  if (o.dry_run && o.observer_mode) {
    log::info("observer mode with dry run: nothing is set; the report is the would-be choice");
  }
}

}  // namespace

const char* phase_name(GlobalPowerLimitOptimizer::Phase phase) {
  switch (phase) {
    case GlobalPowerLimitOptimizer::Phase::kReady:
      return "ready";
    case GlobalPowerLimitOptimizer::Phase::kWarmup:
      return "warmup";
    case GlobalPowerLimitOptimizer::Phase::kProfiling:
      return "profiling";
    case GlobalPowerLimitOptimizer::Phase::kDone:
      return "done";
  }
  return "unknown";
}

std::optional<double> PowerLimitSaving::energy_saving_fraction() const {
  if (!(energy_at_maximum.value() > 0.0)) return std::nullopt;
  return (energy_at_maximum - energy_at_chosen) / energy_at_maximum;
}

std::optional<double> PowerLimitSaving::time_change_fraction() const {
  if (!(time_at_maximum.count() > 0.0)) return std::nullopt;
  return (time_at_chosen - time_at_maximum) / time_at_maximum;
}

std::string GlobalPowerLimitOptimizer::window_name(Milliwatts limit) {
  return fmt::format("__GlobalPowerLimitOptimizer_{}", watts(limit));
}

GlobalPowerLimitOptimizer::GlobalPowerLimitOptimizer(
    monitor::WindowMonitor& monitor, std::shared_ptr<const PowerLimitSelector> selector,
    int wait_steps, int warmup_steps, int profile_steps, Watts pl_step, std::string profile_path)
    : GlobalPowerLimitOptimizer(monitor, GlobalPowerLimitOptimizerOptions{
                                             .selector = std::move(selector),
                                             .wait_steps = wait_steps,
                                             .warmup_steps = warmup_steps,
                                             .profile_steps = profile_steps,
                                             .pl_step = pl_step,
                                             .profile_path = std::move(profile_path),
                                         }) {}

GlobalPowerLimitOptimizer::GlobalPowerLimitOptimizer(monitor::WindowMonitor& monitor,
                                                     GlobalPowerLimitOptimizerOptions options)
    : monitor_(monitor), options_(std::move(options)) {
  validate(options_);
  // An unwritable profile path fails now, not after the whole profile was run.
  if (!options_.profile_path.empty() && !options_.dry_run &&
      !std::filesystem::exists(options_.profile_path)) {
    check_output_path(options_.profile_path);
  }
  reducer_ = options_.reducer != nullptr ? options_.reducer : &local_reducer_;

  for (int i : monitor_.gpu_indices()) gpus_.push_back(monitor_.gpu(i));
  if (gpus_.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "the power-limit optimizer needs a monitor that measures at least one GPU");
  }
  const std::string name = gpus_[0]->name();
  const device::PowerLimitConstraints c = gpus_[0]->power_limit_constraints();
  for (std::size_t k = 1; k < gpus_.size(); ++k) {
    const std::string other = gpus_[k]->name();
    const device::PowerLimitConstraints oc = gpus_[k]->power_limit_constraints();
    if (other != name || oc.min != c.min || oc.max != c.max) {
      throw_error(ErrorCode::kHeterogeneous,
                  fmt::format("the power-limit optimizer sets one limit on all monitored GPUs, so "
                              "they must be identical: GPU {} is '{}' with limits [{}, {}] W but "
                              "GPU {} is '{}' with limits [{}, {}] W; monitor one kind of GPU "
                              "per optimizer",
                              monitor_.gpu_indices()[0], name, watts(c.min), watts(c.max),
                              monitor_.gpu_indices()[k], other, watts(oc.min), watts(oc.max)));
    }
  }
  if (reducer_->world_size() > 1 && gpus_.size() > 1) {
    log::warn(
        "distributed job with {} GPUs monitored in this process; the usual setup is one "
        "monitor per rank measuring only that rank's GPU",
        gpus_.size());
  }

  const std::int64_t step = to_milliwatts(options_.pl_step).value();
  if (!(c.min.value() > 0 && c.min <= c.max)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("GPU {} reports the power-limit range [{}, {}] W, which has no "
                            "candidate limit",
                            monitor_.gpu_indices()[0], watts(c.min), watts(c.max)));
  }
  // Counted before anything is allocated: a bogus range must not blow up memory.
  const std::int64_t count = (c.max.value() - c.min.value()) / step + 1;
  if (count > static_cast<std::int64_t>(kMaxCandidateLimits)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} W to {} W in steps of {} W is {} candidate limits (at most {}); "
                            "raise pl_step",
                            watts(c.max), watts(c.min), options_.pl_step.value(), count,
                            kMaxCandidateLimits));
  }
  for (std::int64_t l = c.max.value(); l >= c.min.value(); l -= step) candidates_.emplace_back(l);

  selector_ = options_.selector;
  if (!selector_) {
    const double world = reducer_->all_reduce_sum(static_cast<double>(gpus_.size()));
    selector_ = std::make_shared<ZeusCostSelector>(0.5, static_cast<int>(std::lround(world)));
  }

  if (options_.dry_run) {
    applied_ = gpus_[0]->power_limit();
    log::info(
        "power-limit optimizer in dry run: no GPU setting will change (would turn on "
        "persistence mode and set limits from {} W down to {} W)",
        watts(candidates_.front()), watts(candidates_.back()));
  } else {
    guard_ = std::make_unique<device::GpuSettingsGuard>(gpus_);
    applied_ = guard_->original_power_limits()[0];
    try {
      guard_->set_persistence_mode(true);
    } catch (const Error& e) {
      rethrow_with_privilege_hint(e, "turn on GPU persistence mode");
    }
  }

  if (!options_.profile_path.empty() && std::filesystem::exists(options_.profile_path)) {
    measurements_ = power_limit_internal::parse_power_limit_profile(
        read_file(options_.profile_path), options_.profile_path, candidates_);
    log::info("power-limit profile '{}' loaded ({} limits); applying its optimum",
              options_.profile_path, measurements_.size());
    finish(/*from_file=*/true);
    return;
  }
  set_limit(candidates_.front());
  state_ = State{Phase::kReady, candidates_.front(), options_.wait_steps + 1};
}

GlobalPowerLimitOptimizer::~GlobalPowerLimitOptimizer() {
  if (state_.phase == Phase::kProfiling) {
    try {
      const std::string name = window_name(state_.power_limit);
      if (monitor_.window_running(name)) monitor_.end_window(name, false, /*cancel=*/true);
    } catch (const std::exception& e) {
      log::warn("could not cancel the profiling window: {}", e.what());
    }
  }
  // guard_ restores the original settings as it goes.
}

void GlobalPowerLimitOptimizer::set_limit(Milliwatts limit) {
  if (options_.dry_run) {
    if (limit != applied_) {
      log::info("dry run: would set the power limit of {} GPU(s) to {} W", gpus_.size(),
                watts(limit));
    }
    applied_ = limit;
    return;
  }
  try {
    guard_->set_power_limit(limit);
  } catch (const Error& e) {
    rethrow_with_privilege_hint(e, fmt::format("set the GPU power limit to {} W", watts(limit)));
  }
  applied_ = limit;
}

void GlobalPowerLimitOptimizer::apply_power_limit(Milliwatts limit) {
  if (!done()) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("cannot apply {} W before profiling has ended (phase {})", watts(limit),
                            phase_name(state_.phase)));
  }
  const bool measured = std::any_of(measurements_.begin(), measurements_.end(),
                                    [&](const auto& m) { return m.power_limit == limit; });
  if (!measured) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{} W was not profiled; apply one of the measured limits", watts(limit)));
  }
  if (options_.observer_mode) {
    if (limit != applied_)
      log::info("observer mode: would set the power limit to {} W", watts(limit));
    return;
  }
  if (limit != applied_) set_limit(limit);
}

std::optional<Milliwatts> GlobalPowerLimitOptimizer::next_candidate(Milliwatts after) const {
  auto it = std::find(candidates_.begin(), candidates_.end(), after);
  if (it == candidates_.end() || std::next(it) == candidates_.end()) return std::nullopt;
  return *std::next(it);
}

void GlobalPowerLimitOptimizer::enter_warmup(Milliwatts limit) {
  set_limit(limit);
  if (options_.dry_run && !dry_run_note_logged_) {
    log::info(
        "dry run: every candidate is measured at the GPUs' current limit ({} W), so the "
        "profile shows run-to-run variation, not the effect of the limits",
        watts(gpus_[0]->power_limit()));
    dry_run_note_logged_ = true;
  }
  if (options_.warmup_steps == 0) {
    enter_profiling(limit);
  } else {
    state_ = State{Phase::kWarmup, limit, options_.warmup_steps};
  }
}

void GlobalPowerLimitOptimizer::enter_profiling(Milliwatts limit) {
  monitor_.begin_window(window_name(limit), /*sync=*/true, /*restart=*/false);
  state_ = State{Phase::kProfiling, limit, options_.profile_steps};
}

void GlobalPowerLimitOptimizer::finish_profiling() {
  const Milliwatts limit = state_.power_limit;
  const monitor::Measurement m =
      monitor_.end_window(window_name(limit), /*sync=*/true, /*cancel=*/false);
  const Joules energy(reducer_->all_reduce_sum(m.total_gpu_energy().value()));
  const Seconds time(reducer_->all_reduce_max(m.time.count()));
  measurements_.push_back(PowerLimitMeasurement{limit, energy, time});
  log::info("power limit {} W: {:.3f} s, {:.3f} J over {} steps", watts(limit), time.count(),
            energy.value(), options_.profile_steps);
  if (auto next = next_candidate(limit)) {
    enter_warmup(*next);
  } else {
    finish(/*from_file=*/false);
  }
}

void GlobalPowerLimitOptimizer::finish(bool from_file) {
  if (!from_file) {
    // One warning for the whole profile (the monitor flags each window too).
    std::vector<double> no_energy;
    for (const auto& x : measurements_) {
      if (!(x.energy.value() > 0.0)) no_energy.push_back(watts(x.power_limit));
    }
    if (!no_energy.empty()) {
      log::warn(
          "profiling windows at {} W measured no energy: they were shorter than the energy "
          "counter's update period; increase profile_steps",
          fmt::join(no_energy, ", "));
    }
  }
  optimal_ = selector_->select(measurements_);
  state_ = State{Phase::kDone, *optimal_, 0};
  set_limit(options_.observer_mode ? candidates_.front() : *optimal_);

  const auto s = saving();
  const auto energy = s ? s->energy_saving_fraction() : std::nullopt;
  const auto time = s ? s->time_change_fraction() : std::nullopt;
  const std::string gain =
      energy && time ? fmt::format("{:+.1f}% energy, {:+.1f}% time against the maximum limit {} W",
                                   -100.0 * *energy, 100.0 * *time, watts(s->maximum))
      : s            ? std::string("the maximum limit measured zero energy or time")
                     : std::string("no measurement at the maximum limit to compare with");
  if (options_.observer_mode) {
    log::info("observer mode: {} would choose {} W ({}); staying at the maximum limit {} W",
              selector_->name(), watts(*optimal_), gain, watts(candidates_.front()));
  } else if (options_.dry_run) {
    log::info("dry run: {} would choose {} W ({})", selector_->name(), watts(*optimal_), gain);
  } else {
    log::info("{} chose {} W ({})", selector_->name(), watts(*optimal_), gain);
  }

  if (from_file || options_.profile_path.empty()) return;
  if (options_.dry_run) {
    log::info("dry run: not saving the profile to '{}' (its limits were never applied)",
              options_.profile_path);
    return;
  }
  for (const auto& x : measurements_) {
    if (!(x.energy.value() > 0.0 && x.time.count() > 0.0)) {
      log::warn(
          "not saving the profile to '{}': the measurement at {} W has zero energy or "
          "time; increase profile_steps",
          options_.profile_path, watts(x.power_limit));
      return;
    }
  }
  try {
    // The constructor checked the nearest existing folder; make the rest.
    const auto folder = std::filesystem::path(options_.profile_path).parent_path();
    std::error_code ignored;  // a failure shows in the write's error
    if (!folder.empty()) std::filesystem::create_directories(folder, ignored);
    write_file_atomically(options_.profile_path,
                          power_limit_internal::power_limit_profile_json(measurements_));
    log::info("power-limit profile saved to '{}'", options_.profile_path);
  } catch (const Error& e) {
    // The choice stands; losing the file must not lose the training run.
    profile_save_error_ = e.what();
    log::error("could not save the power-limit profile: {}", e.what());
  }
}

void GlobalPowerLimitOptimizer::on_step_begin() {
  ++epoch_steps_;
  switch (state_.phase) {
    case Phase::kReady:
      if (--state_.steps == 0) enter_warmup(state_.power_limit);
      break;
    case Phase::kWarmup:
      if (--state_.steps == 0) enter_profiling(state_.power_limit);
      break;
    case Phase::kProfiling:
      if (--state_.steps == 0) finish_profiling();
      break;
    case Phase::kDone:
      break;
  }
}

void GlobalPowerLimitOptimizer::on_epoch_end() {
  const long long steps = std::exchange(epoch_steps_, 0);
  if (state_.phase != Phase::kWarmup && state_.phase != Phase::kProfiling) return;
  // A limit is retried from the first step of the next epoch: one step in
  // Ready, then warm-up and profiling. Shorter epochs never finish one, and
  // the run would end at the maximum limit without a word at the default
  // log level.
  const long long needed = 1LL + options_.warmup_steps + options_.profile_steps;
  if (steps < needed && !short_epoch_warned_) {
    short_epoch_warned_ = true;
    const long long warmup =
        std::max(0LL, std::min<long long>(options_.warmup_steps, (steps - 1) / 4));
    const long long profile = std::max(1LL, steps - 1 - warmup);
    log::warn(
        "power-limit profiling cannot finish: this epoch had {} steps, but profiling one limit "
        "needs {} (1 + warmup_steps {} + profile_steps {}) within one epoch, so the optimizer "
        "would stay at the maximum limit; lower them (e.g. warmup_steps={}, profile_steps={}) "
        "or call on_epoch_end less often",
        steps, needed, options_.warmup_steps, options_.profile_steps, warmup, profile);
  }
  const Milliwatts limit = state_.power_limit;
  log::info("epoch ended during {} at {} W; retrying that limit from warm-up next epoch",
            phase_name(state_.phase), watts(limit));
  if (state_.phase == Phase::kProfiling) {
    monitor_.end_window(window_name(limit), /*sync=*/false, /*cancel=*/true);
  }
  state_ = State{Phase::kReady, limit, 1};
  set_limit(candidates_.front());
}

std::optional<Milliwatts> GlobalPowerLimitOptimizer::optimal_power_limit() const {
  return optimal_;
}

std::optional<PowerLimitSaving> GlobalPowerLimitOptimizer::saving() const {
  if (!optimal_) return std::nullopt;
  return compare_limits(measurements_, *optimal_, candidates_.front());
}

}  // namespace zeus::power_limit
