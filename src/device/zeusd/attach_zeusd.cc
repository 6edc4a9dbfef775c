#include "device/zeusd/attach_zeusd.h"

#include <fmt/format.h>

#include "device/zeusd/gpu_pairing.h"
#include "zeus/device/forwarding_gpu.h"
#include "zeus/device/zeusd_backend.h"
#include "zeus/util/error.h"

namespace zeus::device_internal {
namespace {

// A local GPU that zeusd does not serve: reads stay local, settings are
// refused with the reason (sending them to the driver would fail for an
// ordinary user with a less helpful message, or silently act as root).
class UnservedGpu final : public device::ForwardingGpu {
 public:
  UnservedGpu(std::shared_ptr<device::Gpu> local, std::string why)
      : device::ForwardingGpu(std::move(local)), why_(std::move(why)) {}

  void set_power_limit(Milliwatts) override { refuse(); }
  void set_persistence_mode(bool) override { refuse(); }
  void set_gpu_locked_clocks(Megahertz, Megahertz) override { refuse(); }
  void reset_gpu_locked_clocks() override { refuse(); }
  void set_memory_locked_clocks(Megahertz, Megahertz) override { refuse(); }
  void reset_memory_locked_clocks() override { refuse(); }

 private:
  [[noreturn]] void refuse() const { throw_error(ErrorCode::kNotFound, why_); }
  const std::string why_;
};

std::string pci_address_or_empty(device::Gpu& gpu) {
  try {
    return gpu.pci_bus_id();
  } catch (const Error&) {
    return {};  // paired by index, with a note
  }
}

// Local NVML or AMD SMI GPUs keep their reads; their settings go to the
// daemon GPU with the same PCI address.
void route_settings_through(const std::shared_ptr<device::ZeusdConnection>& connection,
                            device::DeviceInventory& inv) {
  const device::ZeusdStatus& status = connection->status();
  std::vector<device_internal::LocalGpuAddress> local;
  for (std::size_t k = 0; k < inv.gpus.size(); ++k) {
    local.push_back({pci_address_or_empty(*inv.gpus[k]), inv.gpu_physical_indices[k]});
  }
  const auto pairing = device_internal::pair_with_daemon_gpus(local, status.gpus);
  for (std::size_t k = 0; k < inv.gpus.size(); ++k) {
    if (const auto id = pairing.daemon_ids[k]) {
      inv.gpus[k] = device::make_zeusd_gpu(connection, *id, inv.gpus[k]);
    } else {
      inv.gpus[k] = std::make_shared<UnservedGpu>(
          inv.gpus[k],
          fmt::format("zeusd at {} does not serve GPU {} ({}), so this process cannot change its "
                      "settings; run zeusd on this node with the GPU visible to it (see `zeus "
                      "show-env` for what it serves)",
                      status.endpoint, k,
                      local[k].pci_address.empty()
                          ? fmt::format("index {}", local[k].physical_index)
                          : device_internal::normalized_pci_address(local[k].pci_address)));
    }
  }
  for (const auto& note : pairing.notes) {
    inv.notes.push_back(fmt::format("zeusd at {}: {}", status.endpoint, note));
  }
}

}  // namespace

void attach_zeusd(const std::string& backend, bool cpus, bool persistent_settings,
                  device::DeviceInventory& inv) {
  auto config = device::ZeusdConfig::from_env();
  if (!config) {
    if (backend == "zeusd") {
      throw_error(ErrorCode::kInvalidArgument,
                  "ZEUS_GPU_BACKEND=zeusd needs ZEUSD_SOCK_PATH (or ZEUSD_HOST_PORT) pointing at "
                  "a running zeusd; see docs/zeusd.md");
    }
    return;
  }
  config->persistent_settings = persistent_settings;
  auto connection = std::make_shared<device::ZeusdConnection>(*config);
  const device::ZeusdStatus& status = connection->status();
  inv.zeusd = std::make_shared<device::ZeusdStatus>(status);
  if (!status.auth_error.empty()) {
    inv.notes.push_back(fmt::format("zeusd at {}: {}", status.endpoint, status.auth_error));
  }

  const bool remote_gpus = backend == "zeusd" || (backend == "auto" && inv.gpus.empty());
  if (remote_gpus) {
    if (status.can("gpu-read")) {
      inv.gpus.clear();
      inv.gpu_physical_indices.clear();
      for (const auto& g : status.gpus) {
        inv.gpus.push_back(device::make_zeusd_gpu(connection, g.id, nullptr));
        inv.gpu_physical_indices.push_back(static_cast<unsigned>(g.id));
      }
      inv.gpu_backend = "zeusd";
      // "No driver ...; continuing without GPUs" is not true any more.
      const auto replaced = std::erase_if(
          inv.notes, [](const std::string& n) { return n.ends_with(kContinuingWithoutGpus); });
      if (replaced > 0) {
        inv.notes.push_back(fmt::format(
            "no local GPU driver was found; measuring the {} GPU(s) of zeusd at {} instead",
            status.gpus.size(), status.endpoint));
      }
    } else if (!status.gpus.empty()) {
      inv.notes.push_back(
          fmt::format("zeusd at {} has GPUs but does not let this process read them (gpu-read)",
                      status.endpoint));
    }
  } else if ((inv.gpu_backend == "nvml" || inv.gpu_backend == "amdsmi") && !inv.gpus.empty()) {
    if (status.can("gpu-control")) {
      route_settings_through(connection, inv);
      inv.gpu_backend += "+zeusd";
    } else {
      inv.notes.push_back(fmt::format(
          "zeusd at {} does not offer gpu-control to this process; GPU settings go to {} "
          "directly",
          status.endpoint, inv.gpu_backend == "nvml" ? "NVML" : "AMD SMI"));
    }
  }

  // RAPL: through zeusd when the local counters cannot all be read.
  if (cpus && status.can("cpu-read") && inv.cpus.size() < status.cpus.size()) {
    inv.cpus.clear();
    for (const auto& c : status.cpus) inv.cpus.push_back(device::make_zeusd_cpu(connection, c.id));
    inv.notes.push_back(
        fmt::format("RAPL energy is read through zeusd at {} (the local counters are root-only)",
                    status.endpoint));
  }
}

}  // namespace zeus::device_internal
