#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zeus/device/sim_gpu.h"
#include "zeus/util/error.h"

namespace zeus::device {
namespace {

// Sensible ranges: wide enough for any GPU there is or will soon be, narrow
// enough that nothing computed from a model (candidate limits, clock lists,
// energy integrals) overflows or takes unbounded memory.
constexpr double kMaxWatts = 10000.0;
constexpr std::int64_t kMaxMegahertz = 100000;
constexpr std::int64_t kMaxListLength = 100000;  // power-limit grid points, clock steps
constexpr double kMaxThroughput = 1e12;

[[noreturn]] void fail(const std::string& msg) { throw_error(ErrorCode::kInvalidArgument, msg); }

void check_watts(const char* field, Watts w, bool allow_zero = false) {
  const double v = w.value();
  if (!(std::isfinite(v) && (allow_zero ? v >= 0.0 : v > 0.0) && v <= kMaxWatts)) {
    fail(fmt::format("{} must be in {}0, {}] W (got {})", field, allow_zero ? "[" : "(", kMaxWatts,
                     v));
  }
}

void check_mhz(const char* field, Megahertz f) {
  if (f.value() <= 0 || f.value() > kMaxMegahertz) {
    fail(fmt::format("{} must be in (0, {}] MHz (got {})", field, kMaxMegahertz, f.value()));
  }
}

void check_fraction(const char* field, double v) {
  if (!(v >= 0.0 && v <= 1.0)) fail(fmt::format("{} must be in [0, 1] (got {})", field, v));
}

}  // namespace

void SimGpuModel::validate() const {
  check_watts("idle_power_w", idle_power, /*allow_zero=*/true);
  check_watts("busy_power_w", busy_power);
  if (!(busy_power > idle_power)) {
    fail(fmt::format("need idle_power_w < busy_power_w (got {} and {})", idle_power.value(),
                     busy_power.value()));
  }
  check_watts("power_limit_min_w", power_limit_min);
  check_watts("power_limit_max_w", power_limit_max);
  check_watts("power_limit_default_w", power_limit_default);
  check_watts("power_limit_step_w", power_limit_step);
  if (!(power_limit_min <= power_limit_max)) {
    fail(fmt::format("need power_limit_min_w <= power_limit_max_w (got {} and {})",
                     power_limit_min.value(), power_limit_max.value()));
  }
  if (power_limit_default < power_limit_min || power_limit_default > power_limit_max) {
    fail(fmt::format("power_limit_default_w {} is outside [{}, {}]", power_limit_default.value(),
                     power_limit_min.value(), power_limit_max.value()));
  }
  if (to_milliwatts(power_limit_step).value() < 1 ||
      (power_limit_max - power_limit_min).value() / power_limit_step.value() > kMaxListLength) {
    fail(
        fmt::format("power_limit_step_w {} W is too fine: at least 1 mW and at most {} steps "
                    "between the minimum and maximum limits",
                    power_limit_step.value(), kMaxListLength));
  }
  check_mhz("max_graphics_clock_mhz", max_graphics_clock);
  check_mhz("min_graphics_clock_mhz", min_graphics_clock);
  check_mhz("graphics_clock_step_mhz", graphics_clock_step);
  if (min_graphics_clock > max_graphics_clock) {
    fail("need min_graphics_clock_mhz <= max_graphics_clock_mhz");
  }
  if ((max_graphics_clock - min_graphics_clock).value() / graphics_clock_step.value() >
      kMaxListLength) {
    fail("graphics_clock_step_mhz is too fine for the clock range");
  }
  if (memory_clocks.empty() || memory_clocks.size() > 64) {
    fail("memory_clocks_mhz must list 1 to 64 clocks");
  }
  for (const Megahertz m : memory_clocks) check_mhz("memory_clocks_mhz", m);
  if (!(peak_throughput > 0.0 && peak_throughput <= kMaxThroughput)) {
    fail(fmt::format("peak_throughput must be in (0, {:g}] (got {})", kMaxThroughput,
                     peak_throughput));
  }
  check_fraction("compute_bound_fraction", compute_bound_fraction);
  check_fraction("load", load);
  check_fraction("memory_power_fraction", memory_power_fraction);
  if (!(counter_update_period.count() >= 0.0 && counter_update_period.count() <= 60.0)) {
    fail("counter_update_period_s must be in [0, 60]");
  }
  if (!(average_window.count() > 0.0 && average_window.count() <= 3600.0)) {
    fail("average_window_s must be in (0, 3600]");
  }
  for (const auto& [field, t] : {std::pair{"idle_temperature_c", idle_temperature},
                                 std::pair{"busy_temperature_c", busy_temperature}}) {
    if (!(t.value() >= -100.0 && t.value() <= 200.0)) {
      fail(fmt::format("{} must be in [-100, 200] (got {})", field, t.value()));
    }
  }
  // 1 MiB to 16 TiB: the largest GPU memory is far below that.
  if (memory_total.value() < 1048576 || memory_total.value() > (std::int64_t{1} << 44)) {
    fail(fmt::format("memory_total_mib must be in [1, 16777216] (got {})",
                     memory_total.value() / 1048576));
  }
}

double SimGpuModel::clock_fraction_at(Milliwatts limit) const {
  const double x_min = static_cast<double>(min_graphics_clock.value()) /
                       static_cast<double>(max_graphics_clock.value());
  const double headroom = (to_watts(limit) - idle_power) / (busy_power - idle_power);
  if (headroom >= 1.0) return 1.0;
  if (headroom <= 0.0) return x_min;
  return std::clamp(std::cbrt(headroom), x_min, 1.0);
}

Watts SimGpuModel::power_at(Milliwatts limit) const {
  const double x = clock_fraction_at(limit);
  return idle_power + (busy_power - idle_power) * (x * x * x);
}

double SimGpuModel::throughput_at(Milliwatts limit) const {
  const double x = clock_fraction_at(limit);
  return peak_throughput / ((1.0 - compute_bound_fraction) + compute_bound_fraction / x);
}

}  // namespace zeus::device
