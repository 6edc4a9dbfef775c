#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zeus/monitor/power_monitor.h"
#include "zeus/util/error.h"

namespace zeus::monitor {
namespace {

// Power at t from time-ordered samples: linear between neighbours, held flat
// beyond the first and last sample.
double interpolate(const std::deque<PowerSample>& s, double t) {
  auto it = std::lower_bound(s.begin(), s.end(), t,
                             [](const PowerSample& x, double v) { return x.time.count() < v; });
  if (it == s.end()) return s.back().power.value();
  if (it == s.begin() || it->time.count() == t) return it->power.value();
  const PowerSample& b = *it;
  const PowerSample& a = *(it - 1);
  const double span = b.time.count() - a.time.count();
  if (span <= 0) return b.power.value();
  const double w = (t - a.time.count()) / span;
  return a.power.value() + w * (b.power.value() - a.power.value());
}

}  // namespace

std::optional<Watts> interpolate_power(const std::deque<PowerSample>& samples, Seconds t) {
  if (samples.empty()) return std::nullopt;
  return Watts(interpolate(samples, t.count()));
}

std::optional<Joules> integrate_power(const std::deque<PowerSample>& samples, Seconds start,
                                      Seconds end) {
  const double t0 = start.count();
  const double t1 = end.count();
  // A reversed or NaN range is a caller's mistake: it must not read as 0 J.
  if (!std::isfinite(t0) || !std::isfinite(t1)) {
    throw_error(ErrorCode::kInvalidArgument,
                "the time range to integrate power over is not finite (NaN or infinite)");
  }
  if (t1 < t0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the time range to integrate power over ends {:g} s before it starts; "
                            "give start_time <= end_time",
                            t0 - t1));
  }
  if (samples.empty()) return std::nullopt;
  if (t1 == t0) return Joules(0.0);
  auto it = std::upper_bound(samples.begin(), samples.end(), t0,
                             [](double v, const PowerSample& x) { return v < x.time.count(); });
  double prev_t = t0;
  double prev_p = interpolate(samples, t0);
  double energy = 0.0;
  for (; it != samples.end() && it->time.count() < t1; ++it) {
    const double t = it->time.count();
    const double p = it->power.value();
    energy += 0.5 * (prev_p + p) * (t - prev_t);
    prev_t = t;
    prev_p = p;
  }
  energy += 0.5 * (prev_p + interpolate(samples, t1)) * (t1 - prev_t);
  return Joules(energy);
}

}  // namespace zeus::monitor
