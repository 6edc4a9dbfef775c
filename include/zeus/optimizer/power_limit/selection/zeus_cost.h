// Cost metrics shared by the optimizers and the simulator.
#pragma once

#include "zeus/util/units.h"

namespace zeus::power_limit {

// The Zeus cost of a run: eta * energy + (1 - eta) * max_power * time.
// eta in [0, 1] trades energy (eta = 1) against time (eta = 0); max_power is
// the largest power limit of the GPUs (times their number for several GPUs),
// which turns time into joules so the two terms share a unit.
constexpr double zeus_cost(Joules energy, Seconds time, double eta, Watts max_power) {
  return eta * energy.value() + (1.0 - eta) * max_power.value() * time.count();
}

}  // namespace zeus::power_limit
