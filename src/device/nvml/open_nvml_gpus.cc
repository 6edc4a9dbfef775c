// open_nvml_gpus: loads NVML, applies CUDA_VISIBLE_DEVICES, opens each GPU.
#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "device/nvml/cuda_visible_devices.h"
#include "device/nvml/nvml_error.h"
#include "device/nvml/nvml_gpu.h"
#include "device/nvml/nvml_library.h"
#include "zeus/device/nvml.h"
#include "zeus/util/log.h"

namespace zeus::device {
namespace {

namespace abi = nvml_abi;
using nvml_internal::NvmlLibrary;

std::string library_path(const NvmlOptions& options) {
  if (!options.library_path.empty()) return options.library_path;
  if (const char* env = std::getenv("ZEUS_NVML_LIBRARY"); env != nullptr && *env != '\0') {
    return env;
  }
  return "libnvidia-ml.so.1";
}

std::string system_string(abi::SystemStringFn fn) {
  if (fn == nullptr) return {};
  char buffer[abi::kStringBufferSize] = {};
  if (fn(buffer, sizeof(buffer)) != abi::kSuccess) return {};
  buffer[sizeof(buffer) - 1] = '\0';
  return buffer;
}

std::string device_string(const NvmlLibrary& lib, abi::DeviceStringFn fn, abi::nvmlDevice_t device,
                          const char* function, const std::string& ctx) {
  char buffer[abi::kStringBufferSize] = {};
  lib.check(fn(device, buffer, sizeof(buffer)), function, ctx);
  buffer[sizeof(buffer) - 1] = '\0';
  return buffer;
}

abi::nvmlDevice_t handle_by_index(const NvmlLibrary& lib, unsigned nvml_index) {
  abi::nvmlDevice_t device = nullptr;
  const int rc = lib.api().device_get_handle_by_index(nvml_index, &device);
  lib.check(rc, "nvmlDeviceGetHandleByIndex_v2", fmt::format("opening NVML GPU {}", nvml_index),
            rc == abi::kErrorNoPermission ? nvml_internal::kDeviceAccessHint : std::string_view());
  return device;
}

// Finds the NVML indices whose UUID starts with `prefix`: an exact lookup
// through nvmlDeviceGetHandleByUUID when the driver has it, else (or for a
// prefix) by comparing every GPU's UUID.
class UuidFinder {
 public:
  UuidFinder(const NvmlLibrary& lib, unsigned count) : lib_(lib), count_(count) {}

  std::vector<unsigned> find(std::string_view prefix) {
    const auto& api = lib_.api();
    if (api.device_get_handle_by_uuid != nullptr) {
      abi::nvmlDevice_t device = nullptr;
      const std::string full(prefix);
      const int rc = api.device_get_handle_by_uuid(full.c_str(), &device);
      if (rc == abi::kSuccess) {
        unsigned index = 0;
        if (api.device_get_index != nullptr &&
            api.device_get_index(device, &index) == abi::kSuccess) {
          return {index};
        }
        load();
        for (unsigned i = 0; i < count_; ++i) {
          if (handles_[i] == device) return {i};
        }
      } else if (rc != abi::kErrorNotFound && rc != abi::kErrorInvalidArgument) {
        lib_.fail(rc, "nvmlDeviceGetHandleByUUID",
                  fmt::format("looking up CUDA_VISIBLE_DEVICES entry '{}'", prefix));
      }
    }
    load();
    std::vector<unsigned> out;
    for (unsigned i = 0; i < count_; ++i) {
      if (!uuids_[i].empty() && nvml_internal::uuid_has_prefix(uuids_[i], prefix)) {
        out.push_back(i);
      }
    }
    return out;
  }

 private:
  void load() {
    if (loaded_) return;
    handles_.assign(count_, nullptr);
    uuids_.assign(count_, std::string());
    for (unsigned i = 0; i < count_; ++i) {
      abi::nvmlDevice_t device = nullptr;
      // A GPU this user may not open cannot be the one named; skip it.
      if (lib_.api().device_get_handle_by_index(i, &device) != abi::kSuccess) continue;
      handles_[i] = device;
      uuids_[i] = device_string(lib_, lib_.api().device_get_uuid, device, "nvmlDeviceGetUUID",
                                fmt::format("reading the UUID of NVML GPU {}", i));
    }
    loaded_ = true;
  }

  const NvmlLibrary& lib_;
  unsigned count_;
  bool loaded_ = false;
  std::vector<abi::nvmlDevice_t> handles_;
  std::vector<std::string> uuids_;
};

// Whether MIG is on. Drivers without the call, and GPUs that cannot do MIG
// (NOT_SUPPORTED), are MIG-free; any other failure is only logged, since the
// answer changes a note, not a measurement.
bool mig_enabled(const NvmlLibrary& lib, abi::nvmlDevice_t device) {
  if (lib.api().device_get_mig_mode == nullptr) return false;
  unsigned current = 0;
  unsigned pending = 0;
  const abi::nvmlReturn_t rc = lib.api().device_get_mig_mode(device, &current, &pending);
  if (rc != abi::kSuccess) {
    if (rc != abi::kErrorNotSupported) log::debug("nvmlDeviceGetMigMode failed: {}", rc);
    return false;
  }
  return current == abi::kDeviceMigEnable;
}

}  // namespace

NvmlGpuSet open_nvml_gpus(const NvmlOptions& options) {
  const std::string path = library_path(options);
  std::shared_ptr<NvmlLibrary> lib = NvmlLibrary::acquire(path);
  const auto& api = lib->api();

  NvmlGpuSet set;
  set.driver_version = system_string(api.system_get_driver_version);
  set.nvml_version = system_string(api.system_get_nvml_version);

  unsigned count = 0;
  lib->check(api.device_get_count(&count), "nvmlDeviceGetCount_v2", "counting NVIDIA GPUs");

  std::optional<std::string> visible = options.cuda_visible_devices;
  if (!visible) {
    if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env != nullptr) visible = env;
  }
  std::vector<unsigned> indices;
  if (!visible) {
    for (unsigned i = 0; i < count; ++i) indices.push_back(i);
  } else {
    UuidFinder finder(*lib, count);
    auto applied = nvml_internal::apply_cuda_visible_devices(
        *visible, count, [&](std::string_view prefix) { return finder.find(prefix); });
    if (!applied.hidden.empty()) {
      log::warn("{}", applied.hidden);
      set.notes.push_back(std::move(applied.hidden));
    }
    indices = std::move(applied.indices);
  }

  for (std::size_t k = 0; k < indices.size(); ++k) {
    const unsigned nvml_index = indices[k];
    abi::nvmlDevice_t device = handle_by_index(*lib, nvml_index);
    const std::string ctx = fmt::format("opening NVML GPU {}", nvml_index);
    std::string name = device_string(*lib, api.device_get_name, device, "nvmlDeviceGetName", ctx);
    std::string uuid = device_string(*lib, api.device_get_uuid, device, "nvmlDeviceGetUUID", ctx);
    if (mig_enabled(*lib, device)) {
      set.notes.push_back(fmt::format(
          "GPU {} (NVML {}, {}) has MIG enabled: NVML measures the whole physical GPU, so its "
          "energy and power include every MIG instance on it, not only this process's work",
          k, nvml_index, name));
    }
    set.gpus.push_back(std::make_unique<nvml_internal::NvmlGpu>(
        lib, device, static_cast<unsigned>(k), nvml_index, std::move(name), std::move(uuid)));
    set.nvml_indices.push_back(nvml_index);
  }
  log::debug("NVML {} (driver {}): {} of {} GPUs visible", set.nvml_version, set.driver_version,
             indices.size(), count);
  return set;
}

}  // namespace zeus::device
