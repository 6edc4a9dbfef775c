// The energy metric families that EnergyHistogram and EnergyCumulativeCounter
// share: their names (those of the Python Zeus), which devices feed them and
// how a measurement's energies reach them.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <vector>

#include "zeus/device/devices.h"
#include "zeus/metric/pushgateway.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus::metric_internal {

struct EnergyFamily {
  const char* name;  // the metric
  const char* help;
  const char* kind;  // the device kind, in messages
  std::map<int, Joules> monitor::Measurement::*energy;
};

// GPU, CPU, DRAM.
inline constexpr std::array<EnergyFamily, 3> kEnergyFamilies{{
    {"energy_monitor_gpu_energy_joules", "GPU energy consumption", "GPU",
     &monitor::Measurement::gpu_energy},
    {"energy_monitor_cpu_energy_joules", "CPU energy consumption", "CPU",
     &monitor::Measurement::cpu_energy},
    {"energy_monitor_dram_energy_joules", "DRAM energy consumption", "DRAM",
     &monitor::Measurement::dram_energy},
}};

// Adds, in kEnergyFamilies' order, the families the devices feed: GPU with
// GPUs, CPU with CPUs, DRAM with a CPU that has DRAM. Family k of a histogram
// gets buckets[k].
void add_energy_families(metric::PushRegistry& registry, const device::DeviceInventory& devices,
                         const std::vector<int>& cpu_indices, const std::vector<int>& gpu_indices,
                         metric::PushRegistry::Type type,
                         const std::array<std::vector<double>, 3>& buckets = {});

// Calls record(k, device_index, energy) for every energy of `m` whose family
// kEnergyFamilies[k] the registry has.
template <class Record>
void for_each_energy(const metric::PushRegistry& registry, const monitor::Measurement& m,
                     Record record) {
  for (std::size_t k = 0; k < kEnergyFamilies.size(); ++k) {
    if (!registry.has_family(kEnergyFamilies[k].name)) continue;
    for (const auto& [index, energy] : m.*kEnergyFamilies[k].energy) record(k, index, energy);
  }
}

}  // namespace zeus::metric_internal
