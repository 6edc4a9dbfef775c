// Small hand-checkable inputs for the Chase replay's tests: a job with three
// power limits whose per-epoch numbers are round, and hourly carbon signals
// of a few days built in memory. Every expected number in the tests is
// derived from these by hand (the derivations sit beside the assertions).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"
#include "zeus/sim/carbon_aware/replay.h"

namespace zeus::sim::carbon_aware::testing {

inline constexpr std::int64_t kHour = 3600;
inline constexpr std::int64_t kDay = 24 * kHour;
// A charge is energy (J) / kJoulesPerKwh × the signal (per kWh).
inline constexpr double kJoulesPerKwh = 3.6e6;
// 2023-01-01T00:00:00Z: a UTC multiple of a day, so of 1 h and 2 h periods too.
inline constexpr std::int64_t kT0 = 1'672'531'200;
// The source name every synthetic signal carries (errors must name it).
inline const std::string kSource = "synthetic-signal.csv";

// Per epoch, drawing exactly its limit:
//   300 W: 1800 s, 540 kJ (0.15 kWh)   250 W: 2000 s, 500 kJ   200 W: 2400 s, 480 kJ
// listed out of order (the profile may come in any order). The Zeus cost
// eta_eff*E + (1-eta_eff)*300 W*T picks 300 W for eta_eff < 0.6, 250 W for
// 0.6 < eta_eff < 6/7 and 200 W above 6/7. The profiling epoch (every limit
// in turn) is given round numbers of its own: 3000 s, 750 kJ.
JobProfile three_limit_profile();

// An hourly carbon signal (gCO2/kWh) from kT0, one value per hour.
zeus::carbon_aware::GridSignal hourly_signal(const std::vector<double>& values);
// `hours` values of f(hour index).
zeus::carbon_aware::GridSignal hourly_signal(int hours, const std::function<double(int)>& f);

}  // namespace zeus::sim::carbon_aware::testing
