#include "metric/energy_families.h"

namespace zeus::metric_internal {
namespace {

bool any_dram(const device::DeviceInventory& devices, const std::vector<int>& cpus) {
  for (int i : cpus) {
    if (i >= 0 && static_cast<std::size_t>(i) < devices.cpus.size() &&
        devices.cpus[static_cast<std::size_t>(i)]->has_dram()) {
      return true;
    }
  }
  return false;
}

}  // namespace

void add_energy_families(metric::PushRegistry& registry, const device::DeviceInventory& devices,
                         const std::vector<int>& cpu_indices, const std::vector<int>& gpu_indices,
                         metric::PushRegistry::Type type,
                         const std::array<std::vector<double>, 3>& buckets) {
  const std::array<bool, 3> fed = {!gpu_indices.empty(), !cpu_indices.empty(),
                                   !cpu_indices.empty() && any_dram(devices, cpu_indices)};
  for (std::size_t k = 0; k < kEnergyFamilies.size(); ++k) {
    if (fed[k]) {
      registry.add_family(kEnergyFamilies[k].name, kEnergyFamilies[k].help, type, buckets[k]);
    }
  }
}

}  // namespace zeus::metric_internal
