// Choosing a GPU power limit from profiled measurements. Pure functions over
// measurements: the live GlobalPowerLimitOptimizer and the trace-driven
// simulator both call these, so the choice is implemented once.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "zeus/util/units.h"

namespace zeus::power_limit {

// What was measured while training ran at one power limit: the energy and time
// of the same amount of work (a fixed number of steps, or one epoch).
struct PowerLimitMeasurement {
  Milliwatts power_limit;
  Joules energy;
  Seconds time;
};

// Picks the power limit to use from measurements at several limits. Ties go to
// the higher limit (same cost, less risk of slowing down). Implementations are
// immutable and thread-safe. Write your own by deriving and overriding select().
class PowerLimitSelector {
 public:
  virtual ~PowerLimitSelector() = default;
  // Throws kInvalidArgument when `measurements` is empty.
  virtual Milliwatts select(std::span<const PowerLimitMeasurement> measurements) const = 0;
  // For logs and reports, e.g. "zeus-cost(eta=0.5)".
  virtual std::string name() const = 0;
};

// The limit with the least energy.
class EnergySelector final : public PowerLimitSelector {
 public:
  Milliwatts select(std::span<const PowerLimitMeasurement> measurements) const override;
  std::string name() const override { return "energy"; }
};

// The limit with the least time. Noise may make this pick a limit below the
// maximum; that is measured truth, not an error.
class TimeSelector final : public PowerLimitSelector {
 public:
  Milliwatts select(std::span<const PowerLimitMeasurement> measurements) const override;
  std::string name() const override { return "time"; }
};

// The limit with the least Zeus cost eta*E + (1-eta)*MaxPower*T, where MaxPower
// is the largest measured limit times world_size (the GPUs whose energy the
// measurements sum). eta in [0,1], world_size >= 1, else kInvalidArgument.
class ZeusCostSelector final : public PowerLimitSelector {
 public:
  explicit ZeusCostSelector(double eta, int world_size = 1);
  Milliwatts select(std::span<const PowerLimitMeasurement> measurements) const override;
  std::string name() const override;
  double eta() const { return eta_; }

 private:
  double eta_;
  int world_size_;
};

// The argmin every cost selector shares: the limit with the least
// energy_weight * energy[J] + time_weight * time[s]; ties go to the higher
// limit. Weights are any finite numbers (a time-varying knob such as Chase's
// may make one negative, e.g. at a negative electricity price).
// kInvalidArgument when `measurements` is empty.
Milliwatts min_weighted_cost_limit(std::span<const PowerLimitMeasurement> measurements,
                                   double energy_weight, double time_weight);

// The largest measured limit (kInvalidArgument when there is none).
Milliwatts max_measured_limit(std::span<const PowerLimitMeasurement> measurements);

// The lowest limit whose time is at most factor x the time at the maximum
// measured limit. factor >= 1, else kInvalidArgument.
class MaxSlowdownSelector final : public PowerLimitSelector {
 public:
  explicit MaxSlowdownSelector(double factor);
  Milliwatts select(std::span<const PowerLimitMeasurement> measurements) const override;
  std::string name() const override;

 private:
  double factor_;
};

// Parses "time", "energy", "zeus-cost:ETA" (also "zeus-cost:ETA:WORLD_SIZE")
// and "max-slowdown:FACTOR". kInvalidArgument naming the accepted forms.
std::unique_ptr<PowerLimitSelector> make_power_limit_selector(const std::string& spec);

}  // namespace zeus::power_limit
