#include "device/zeusd/attach_zeusd.h"

#include <fmt/format.h>

#include "zeus/device/zeusd_backend.h"
#include "zeus/util/error.h"

namespace zeus {

void attach_zeusd(const std::string& backend, bool cpus, bool persistent_settings,
                  DeviceInventory& inv) {
  auto config = ZeusdConfig::from_env();
  if (!config) {
    if (backend == "zeusd") {
      throw_error(ErrorCode::kInvalidArgument,
                  "ZEUS_GPU_BACKEND=zeusd needs ZEUSD_SOCK_PATH (or ZEUSD_HOST_PORT) pointing at "
                  "a running zeusd; see docs/zeusd.md");
    }
    return;
  }
  config->persistent_settings = persistent_settings;
  auto connection = std::make_shared<ZeusdConnection>(*config);
  const ZeusdStatus& status = connection->status();
  inv.zeusd = std::make_shared<ZeusdStatus>(status);
  if (!status.auth_error.empty()) {
    inv.notes.push_back(fmt::format("zeusd at {}: {}", status.endpoint, status.auth_error));
  }

  const bool remote_gpus = backend == "zeusd" || (backend == "auto" && inv.gpus.empty());
  if (remote_gpus) {
    if (status.can("gpu-read")) {
      inv.gpus.clear();
      inv.gpu_physical_indices.clear();
      for (const auto& g : status.gpus) {
        inv.gpus.push_back(make_zeusd_gpu(connection, g.id, nullptr));
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
  } else if (inv.gpu_backend == "nvml" && !inv.gpus.empty()) {
    if (status.can("gpu-control")) {
      for (std::size_t k = 0; k < inv.gpus.size(); ++k) {
        inv.gpus[k] =
            make_zeusd_gpu(connection, static_cast<int>(inv.gpu_physical_indices[k]), inv.gpus[k]);
      }
      inv.gpu_backend = "nvml+zeusd";
    } else {
      inv.notes.push_back(fmt::format(
          "zeusd at {} does not offer gpu-control to this process; GPU settings go to NVML "
          "directly",
          status.endpoint));
    }
  }

  // RAPL: through zeusd when the local counters cannot all be read.
  if (cpus && status.can("cpu-read") && inv.cpus.size() < status.cpus.size()) {
    inv.cpus.clear();
    for (const auto& c : status.cpus) inv.cpus.push_back(make_zeusd_cpu(connection, c.id));
    inv.notes.push_back(
        fmt::format("RAPL energy is read through zeusd at {} (the local counters are root-only)",
                    status.endpoint));
  }
}

}  // namespace zeus
