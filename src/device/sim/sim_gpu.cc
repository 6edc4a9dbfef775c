#include "zeus/device/sim_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zeus/util/error.h"

namespace zeus::device {

SimGpu::SimGpu(SimGpuModel model, Clock& clock, int index)
    : model_(std::move(model)),
      clock_(clock),
      index_(index),
      limit_(to_milliwatts(Watts(model_.power_limit_default.value()))),
      load_(model_.load),
      locked_max_mhz_(static_cast<double>(model_.max_graphics_clock.value())) {
  model_.validate();
  segments_.push_back(Segment{clock_.now().count(), 0.0, current_power_locked()});
}

void SimGpu::check_alive_locked() const {
  if (lost_) {
    throw_error(ErrorCode::kGpuLost,
                fmt::format("simulated GPU {} is lost (fell off the bus); a real GPU in this state "
                            "needs a reset or a reboot",
                            index_));
  }
}

double SimGpu::clock_fraction_locked() const {
  const double x_min = static_cast<double>(model_.min_graphics_clock.value()) /
                       static_cast<double>(model_.max_graphics_clock.value());
  const double x_lock = locked_max_mhz_ / static_cast<double>(model_.max_graphics_clock.value());
  double x = 1.0;
  if (load_ > 0.0) {
    const double headroom = (to_watts(limit_).value() - model_.idle_power.value()) /
                            (load_ * (model_.busy_power.value() - model_.idle_power.value()));
    x = headroom <= 0.0 ? x_min : std::min(1.0, std::cbrt(headroom));
  }
  // The power cap wins over a locked minimum clock, as on real GPUs.
  return std::max(x_min, std::min(x, x_lock));
}

double SimGpu::current_power_locked() const {
  const double x = clock_fraction_locked();
  return model_.idle_power.value() +
         load_ * (model_.busy_power.value() - model_.idle_power.value()) * x * x * x;
}

double SimGpu::energy_at_locked(double t) {
  // Segments are ordered by start; find the last one that starts at or before t.
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](double v, const Segment& s) { return v < s.start; });
  if (it == segments_.begin()) return segments_.front().energy_at_start;
  const Segment& s = *(it - 1);
  return s.energy_at_start + s.power * (t - s.start);
}

void SimGpu::change_state_locked() {
  const double now = clock_.now().count();
  const double energy = energy_at_locked(now);
  segments_.push_back(Segment{now, energy, current_power_locked()});
  // Keep enough history for the averaging window and counter steps.
  const double horizon =
      now - 2.0 * std::max(model_.average_window.count(), model_.counter_update_period.count()) -
      1.0;
  auto first_needed = std::upper_bound(segments_.begin(), segments_.end(), horizon,
                                       [](double v, const Segment& s) { return v < s.start; });
  if (first_needed - segments_.begin() > 1) segments_.erase(segments_.begin(), first_needed - 1);
}

std::string SimGpu::name() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return model_.name;
}

std::string SimGpu::uuid() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return fmt::format("GPU-51a00000-0000-4000-8000-{:012d}", index_);
}

GpuArchitecture SimGpu::architecture() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return model_.architecture;
}

bool SimGpu::supports_energy_counter() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return model_.energy_counter;
}

Joules SimGpu::total_energy() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  if (!model_.energy_counter) {
    throw_error(ErrorCode::kNotSupported,
                fmt::format("simulated GPU {} ({}) has no energy counter (like NVIDIA GPUs before "
                            "Volta); measure through the power timeline instead",
                            index_, architecture_name(model_.architecture)));
  }
  double t = clock_.now().count();
  if (model_.counter_update_period.count() > 0) {
    t = std::floor(t / model_.counter_update_period.count()) * model_.counter_update_period.count();
  }
  return Joules(energy_at_locked(t));
}

Joules SimGpu::true_energy() {
  std::lock_guard lock(mutex_);
  return Joules(energy_at_locked(clock_.now().count()));
}

Watts SimGpu::power(PowerDomain domain) {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  switch (domain) {
    case PowerDomain::kDeviceInstant:
      return Watts(current_power_locked());
    case PowerDomain::kDeviceAverage: {
      const double now = clock_.now().count();
      const double from = std::max(now - model_.average_window.count(), segments_.front().start);
      if (now - from <= 0.0) return Watts(current_power_locked());
      return Watts((energy_at_locked(now) - energy_at_locked(from)) / (now - from));
    }
    case PowerDomain::kMemoryAverage:
      if (!model_.memory_power) {
        throw_error(
            ErrorCode::kNotSupported,
            fmt::format("simulated GPU {} has no memory power sensor (like an A40)", index_));
      }
      return Watts(current_power_locked() * model_.memory_power_fraction);
  }
  throw_error(ErrorCode::kInternal, "unknown power domain");
}

PowerLimitConstraints SimGpu::power_limit_constraints() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return {to_milliwatts(Watts(model_.power_limit_min.value())),
          to_milliwatts(Watts(model_.power_limit_max.value()))};
}

Milliwatts SimGpu::power_limit() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return limit_;
}

Milliwatts SimGpu::default_power_limit() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return to_milliwatts(Watts(model_.power_limit_default.value()));
}

void SimGpu::set_power_limit(Milliwatts limit) {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  const Milliwatts lo = to_milliwatts(Watts(model_.power_limit_min.value()));
  const Milliwatts hi = to_milliwatts(Watts(model_.power_limit_max.value()));
  if (limit < lo || limit > hi) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("power limit {} W is outside the GPU's range [{}, {}] W",
                            to_watts(limit).value(), to_watts(lo).value(), to_watts(hi).value()));
  }
  const std::int64_t step = to_milliwatts(Watts(model_.power_limit_step.value())).value();
  const Milliwatts snapped(std::max(lo.value(), (limit.value() / step) * step));
  if (snapped == limit_) return;
  limit_ = snapped;
  change_state_locked();
}

bool SimGpu::persistence_mode() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return persistence_;
}

void SimGpu::set_persistence_mode(bool enabled) {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  persistence_ = enabled;
}

std::vector<Megahertz> SimGpu::supported_memory_clocks() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  std::vector<Megahertz> out = model_.memory_clocks;
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::vector<Megahertz> SimGpu::supported_graphics_clocks(Megahertz memory_clock) {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  const auto& mem = model_.memory_clocks;
  if (std::find(mem.begin(), mem.end(), memory_clock) == mem.end()) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("memory clock {} MHz is not supported by this GPU", memory_clock.value()));
  }
  std::vector<Megahertz> out;
  for (std::int64_t c = model_.max_graphics_clock.value(); c >= model_.min_graphics_clock.value();
       c -= model_.graphics_clock_step.value()) {
    out.emplace_back(c);
  }
  return out;
}

void SimGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  if (min > max || min.value() < model_.min_graphics_clock.value() ||
      max.value() > model_.max_graphics_clock.value()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("locked graphics clocks [{}, {}] MHz must satisfy {} <= min <= max <= "
                            "{} MHz",
                            min.value(), max.value(), model_.min_graphics_clock.value(),
                            model_.max_graphics_clock.value()));
  }
  locked_max_mhz_ = static_cast<double>(max.value());
  change_state_locked();
}

void SimGpu::reset_gpu_locked_clocks() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  locked_max_mhz_ = static_cast<double>(model_.max_graphics_clock.value());
  change_state_locked();
}

void SimGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  if (min > max) {
    throw_error(ErrorCode::kInvalidArgument, "locked memory clocks: min must not exceed max");
  }
  // Validated like a real GPU would; the model has no memory-clock effect.
}

void SimGpu::reset_memory_locked_clocks() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
}

Celsius SimGpu::temperature() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  return temperature_locked();
}

Celsius SimGpu::temperature_locked() const {
  const double share = (current_power_locked() - model_.idle_power.value()) /
                       (model_.busy_power.value() - model_.idle_power.value());
  return Celsius(model_.idle_temperature.value() +
                 share * (model_.busy_temperature.value() - model_.idle_temperature.value()));
}

GpuTelemetry SimGpu::telemetry() {
  std::lock_guard lock(mutex_);
  check_alive_locked();
  const double max_mhz = static_cast<double>(model_.max_graphics_clock.value());
  const double x = clock_fraction_locked();
  const double x_lock = locked_max_mhz_ / max_mhz;
  GpuTelemetry t;
  t.gpu_utilization = Percent(load_ * 100.0);
  t.memory_utilization = Percent(load_ * (1.0 - model_.compute_bound_fraction) * 100.0);
  std::uint64_t reasons = 0;
  if (load_ <= 0.0) {
    reasons |= clock_event::kGpuIdle;
    t.sm_clock = model_.min_graphics_clock;
  } else {
    t.sm_clock = Megahertz(std::llround(x * max_mhz));
    // Which of the two caps binds: the power limit (below 1 and below the
    // lock) or the locked maximum.
    if (x < std::min(1.0, x_lock) - 1e-9) reasons |= clock_event::kSwPowerCap;
    if (x_lock < 1.0 && x >= x_lock - 1e-9) reasons |= clock_event::kApplicationsClocksSetting;
  }
  t.clock_event_reasons = reasons;
  t.memory_clock = *std::max_element(model_.memory_clocks.begin(), model_.memory_clocks.end());
  const auto total = model_.memory_total.value();
  const auto used = static_cast<std::int64_t>(static_cast<double>(total) * (0.02 + 0.88 * load_));
  t.memory_total = model_.memory_total;
  t.memory_used = Bytes(used);
  t.memory_free = Bytes(total - used);
  t.temperature = temperature_locked();
  return t;
}

void SimGpu::set_load(double load) {
  if (!(load >= 0.0 && load <= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("load must be in [0, 1], got {}", load));
  }
  std::lock_guard lock(mutex_);
  load_ = load;
  change_state_locked();
}

double SimGpu::load() {
  std::lock_guard lock(mutex_);
  return load_;
}

double SimGpu::throughput() {
  std::lock_guard lock(mutex_);
  const double x = clock_fraction_locked();
  const double c = model_.compute_bound_fraction;
  return load_ * model_.peak_throughput / ((1.0 - c) + c / x);
}

Seconds SimGpu::execute(double work_units) {
  double previous_load;
  double rate;
  {
    std::lock_guard lock(mutex_);
    check_alive_locked();
    previous_load = load_;
    load_ = 1.0;
    change_state_locked();
    const double x = clock_fraction_locked();
    const double c = model_.compute_bound_fraction;
    rate = model_.peak_throughput / ((1.0 - c) + c / x);
  }
  const Seconds duration(work_units / rate);
  clock_.sleep_for(duration);
  std::lock_guard lock(mutex_);
  load_ = previous_load;
  change_state_locked();
  return duration;
}

void SimGpu::fail_as_lost() {
  std::lock_guard lock(mutex_);
  lost_ = true;
}

std::vector<std::unique_ptr<SimGpu>> make_sim_gpus(int count, const SimGpuModel& model,
                                                   Clock& clock) {
  std::vector<std::unique_ptr<SimGpu>> gpus;
  for (int i = 0; i < count; ++i) gpus.push_back(std::make_unique<SimGpu>(model, clock, i));
  return gpus;
}

Seconds run_data_parallel_step(std::span<SimGpu* const> gpus, ManualClock& clock,
                               double work_units) {
  if (gpus.empty() || !(work_units > 0.0) || !std::isfinite(work_units)) {
    throw_error(ErrorCode::kInvalidArgument,
                "a simulated step needs at least one GPU and a positive, finite amount of work");
  }
  double rate = gpus[0]->throughput();
  for (SimGpu* g : gpus) rate = std::min(rate, g->throughput());
  const Seconds took(work_units / rate);
  clock.advance(took);
  return took;
}

}  // namespace zeus::device
