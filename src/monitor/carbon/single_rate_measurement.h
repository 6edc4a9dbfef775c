// What CarbonEmissionMonitor and EnergyCostMonitor share: each is an
// HourlyRateMonitor with one provider, and each turns a window's result into
// its own measurement struct, which keeps the energy under the same names and
// the provider's results under names of its own (emission or cost).
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "zeus/monitor/carbon/hourly_rate_monitor.h"

namespace zeus::carbon_internal {

// The members of Out that take the provider's results.
template <class Out>
struct RateFields {
  std::optional<std::map<int, double>> Out::*gpu;
  std::optional<std::map<int, double>> Out::*cpu;
  std::optional<std::map<int, double>> Out::*dram;
  std::vector<std::optional<double>> Out::*hour_rates;
};

// The window's energy and hours, and its only provider's results in `fields`.
template <class Out>
Out single_rate_measurement(carbon::HourlyMeasurement m, const RateFields<Out>& fields) {
  carbon::RateResult& r = m.rates.front();
  Out out;
  out.time = m.energy.time;
  out.gpu_energy = std::move(m.energy.gpu_energy);
  out.cpu_energy = std::move(m.energy.cpu_energy);
  out.dram_energy = std::move(m.energy.dram_energy);
  out.*fields.gpu = std::move(r.gpu);
  out.*fields.cpu = std::move(r.cpu);
  out.*fields.dram = std::move(r.dram);
  out.hours = std::move(m.hours);
  out.*fields.hour_rates = std::move(r.hour_rates);
  out.error = std::move(r.error);
  return out;
}

}  // namespace zeus::carbon_internal
