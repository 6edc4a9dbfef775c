// The Chase policy (Yang et al., "Chasing Low-Carbon Electricity for Practical
// and Sustainable DNN Training", 2023): at each period, pick the power limit
//   argmin_p [eta * P(p) * S_hat + (1 - eta) * MaxPower * S_max] / throughput(p)
// where S_hat is the forecast signal (carbon intensity or price) and S_max its
// normaliser (the maximum over the 24 h before the job). Dividing by
// k = eta*S_hat + (1-eta)*S_max > 0 shows this is the Zeus cost with a
// time-varying knob, ZeusCost(eta_eff), eta_eff = eta*S_hat / k; the policy is
// implemented that way, on the selector code. See docs/chase.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/util/units.h"

namespace zeus::carbon_aware {

// eta * forecast / (eta * forecast + (1 - eta) * signal_max). Outside [0, 1]
// only for a negative forecast (a negative price); kInvalidArgument when the
// denominator is 0 (no defined knob).
double chase_eta_eff(double eta, double forecast, double signal_max);

// One period's decision, as logged by the live optimizer and the simulator.
struct ChaseDecision {
  std::int64_t period_start_utc = 0;
  double signal_seen = 0.0;  // the last completed period's value
  double forecast = 0.0;     // the forecast for this period
  double eta_eff = 0.0;      // the Zeus knob it amounts to (NaN when k <= 0)
  Milliwatts power_limit{0};
};

class ChasePolicy {
 public:
  // eta in [0, 1]; signal_max > 0 and finite; world_size >= 1 (MaxPower is the
  // largest measured limit times world_size). kInvalidArgument otherwise.
  ChasePolicy(double eta, double signal_max, int world_size = 1);

  double eta() const { return eta_; }
  double signal_max() const { return signal_max_; }
  int world_size() const { return world_size_; }
  std::string name() const;

  struct Choice {
    Milliwatts power_limit;
    double eta_eff;  // NaN when eta*forecast + (1-eta)*signal_max <= 0
  };
  // The limit for a period whose signal is forecast to be `forecast`, from the
  // profile's measurements (same amount of work at every limit).
  Choice choose(std::span<const power_limit::PowerLimitMeasurement> measurements,
                double forecast) const;

  // The paper's per-work cost of one measurement (eq. 6 times the work):
  // eta * E * S_hat + (1 - eta) * MaxPower * S_max * T. For tests and reports.
  double cost(const power_limit::PowerLimitMeasurement& m, double forecast, Watts max_power) const;

 private:
  double eta_;
  double signal_max_;
  int world_size_;
};

}  // namespace zeus::carbon_aware
