#include "zeus/optimizer/power_limit/carbon_aware/chase.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "zeus/util/error.h"

namespace zeus::carbon_aware {

double chase_eta_eff(double eta, double forecast, double signal_max) {
  const double k = eta * forecast + (1.0 - eta) * signal_max;
  if (k == 0.0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: eta*forecast + (1-eta)*max is 0 (eta {}, forecast {}, max {}); "
                            "no Zeus knob corresponds",
                            eta, forecast, signal_max));
  }
  return eta * forecast / k;
}

ChasePolicy::ChasePolicy(double eta, double signal_max, int world_size)
    : eta_(eta), signal_max_(signal_max), world_size_(world_size) {
  if (!(eta >= 0.0 && eta <= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: eta must be in [0, 1], got {}", eta));
  }
  if (!(std::isfinite(signal_max) && signal_max > 0.0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: the signal's normaliser (its maximum over the 24 h before the "
                            "job) must be positive and finite, got {}; give one explicitly",
                            signal_max));
  }
  if (world_size < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("chase: world size must be at least 1, got {}", world_size));
  }
}

std::string ChasePolicy::name() const {
  return world_size_ == 1 ? fmt::format("chase(eta={}, max={:g})", eta_, signal_max_)
                          : fmt::format("chase(eta={}, max={:g}, world_size={})", eta_, signal_max_,
                                        world_size_);
}

ChasePolicy::Choice ChasePolicy::choose(std::span<const power_limit::PowerLimitMeasurement> m,
                                        double forecast) const {
  const double max_power = to_watts(power_limit::max_measured_limit(m)).value() * world_size_;
  const double k = eta_ * forecast + (1.0 - eta_) * signal_max_;
  if (k > 0.0) {
    // The paper's cost divided by k > 0 (same argmin): ZeusCost(eta_eff).
    const double eta_eff = eta_ * forecast / k;
    return {power_limit::min_weighted_cost_limit(m, eta_eff, (1.0 - eta_eff) * max_power), eta_eff};
  }
  // A price so negative that running costs less than nothing outweighs time:
  // no Zeus knob corresponds; minimise the paper's cost directly.
  return {power_limit::min_weighted_cost_limit(m, eta_ * forecast,
                                               (1.0 - eta_) * max_power * signal_max_),
          std::numeric_limits<double>::quiet_NaN()};
}

double ChasePolicy::cost(const power_limit::PowerLimitMeasurement& m, double forecast,
                         Watts max_power) const {
  return eta_ * m.energy.value() * forecast +
         (1.0 - eta_) * max_power.value() * signal_max_ * m.time.count();
}

}  // namespace zeus::carbon_aware
