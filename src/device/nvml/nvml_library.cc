#include "device/nvml/nvml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "device/nvml/nvml_error.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::nvml_internal {
namespace {

namespace abi = nvml_abi;

template <class Fn>
Fn lookup(void* handle, const char* symbol) {
  // POSIX guarantees that dlsym's object pointer converts to a function pointer.
  return reinterpret_cast<Fn>(dlsym(handle, symbol));
}

// Live sessions by library path. Never destroyed, so NvmlLibrary destructors
// that run during static destruction still find it.
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<NvmlLibrary>> sessions;
};
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

}  // namespace

void throw_missing_symbol(std::string_view symbol, std::string_view context) {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this NVML does not export {}; the NVIDIA driver is too old for this "
                          "feature (update the driver)",
                          context, symbol));
}

NvmlLibrary::NvmlLibrary(std::string path, void* handle, Api api)
    : path_(std::move(path)), handle_(handle), api_(api) {}

NvmlLibrary::~NvmlLibrary() {
  const int rc = api_.shutdown();
  if (rc != abi::kSuccess) {
    log::warn("nvmlShutdown failed: {} (NVML error {})", error_string(rc), rc);
  }
  dlclose(handle_);
}

std::string_view NvmlLibrary::error_string(int nvml_return) const {
  const char* text = api_.error_string(nvml_return);
  return text != nullptr ? std::string_view(text) : std::string_view("unknown NVML error");
}

void NvmlLibrary::check(int nvml_return, std::string_view function, std::string_view context,
                        std::string_view hint) const {
  if (nvml_return != abi::kSuccess) fail(nvml_return, function, context, hint);
}

void NvmlLibrary::fail(int nvml_return, std::string_view function, std::string_view context,
                       std::string_view hint) const {
  throw_nvml_error(nvml_return, function, error_string(nvml_return), context, hint);
}

std::shared_ptr<NvmlLibrary> NvmlLibrary::acquire(const std::string& path) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (auto live = reg.sessions[path].lock()) return live;

  dlerror();  // clear a stale message
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw_error(ErrorCode::kDriverNotLoaded,
                fmt::format("no NVIDIA driver found: cannot load {} ({}); install the NVIDIA "
                            "driver (it provides libnvidia-ml.so.1), point ZEUS_NVML_LIBRARY at "
                            "the library, or set ZEUS_GPU_BACKEND=sim to use simulated GPUs",
                            path, why != nullptr ? why : "unknown dlopen error"));
  }

  Api api;
  // Required: versioned names (the unversioned ones have older semantics).
  api.init = lookup<abi::InitFn>(handle, "nvmlInit_v2");
  api.shutdown = lookup<abi::ShutdownFn>(handle, "nvmlShutdown");
  api.error_string = lookup<abi::ErrorStringFn>(handle, "nvmlErrorString");
  api.device_get_count = lookup<abi::DeviceGetCountFn>(handle, "nvmlDeviceGetCount_v2");
  api.device_get_handle_by_index =
      lookup<abi::DeviceGetHandleByIndexFn>(handle, "nvmlDeviceGetHandleByIndex_v2");
  api.device_get_name = lookup<abi::DeviceStringFn>(handle, "nvmlDeviceGetName");
  api.device_get_uuid = lookup<abi::DeviceStringFn>(handle, "nvmlDeviceGetUUID");
  const std::pair<const char*, bool> required[] = {
      {"nvmlInit_v2", api.init != nullptr},
      {"nvmlShutdown", api.shutdown != nullptr},
      {"nvmlErrorString", api.error_string != nullptr},
      {"nvmlDeviceGetCount_v2", api.device_get_count != nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", api.device_get_handle_by_index != nullptr},
      {"nvmlDeviceGetName", api.device_get_name != nullptr},
      {"nvmlDeviceGetUUID", api.device_get_uuid != nullptr},
  };
  for (const auto& [symbol, present] : required) {
    if (!present) {
      dlclose(handle);
      throw_error(ErrorCode::kDriverNotLoaded,
                  fmt::format("no NVIDIA driver found: {} does not export {}, so it is not NVML "
                              "or the NVIDIA driver is too old; install a current driver or point "
                              "ZEUS_NVML_LIBRARY at libnvidia-ml.so.1",
                              path, symbol));
    }
  }

  api.system_get_driver_version = lookup<abi::SystemStringFn>(handle, "nvmlSystemGetDriverVersion");
  api.system_get_nvml_version = lookup<abi::SystemStringFn>(handle, "nvmlSystemGetNVMLVersion");
  api.device_get_handle_by_uuid =
      lookup<abi::DeviceGetHandleByUuidFn>(handle, "nvmlDeviceGetHandleByUUID");
  api.device_get_index = lookup<abi::DeviceGetIndexFn>(handle, "nvmlDeviceGetIndex");
  api.device_get_architecture =
      lookup<abi::DeviceGetUnsignedFn>(handle, "nvmlDeviceGetArchitecture");
  api.device_get_total_energy_consumption =
      lookup<abi::DeviceGetTotalEnergyFn>(handle, "nvmlDeviceGetTotalEnergyConsumption");
  api.device_get_field_values =
      lookup<abi::DeviceGetFieldValuesFn>(handle, "nvmlDeviceGetFieldValues");
  api.device_get_power_usage = lookup<abi::DeviceGetUnsignedFn>(handle, "nvmlDeviceGetPowerUsage");
  api.device_get_power_management_limit =
      lookup<abi::DeviceGetUnsignedFn>(handle, "nvmlDeviceGetPowerManagementLimit");
  api.device_get_power_management_default_limit =
      lookup<abi::DeviceGetUnsignedFn>(handle, "nvmlDeviceGetPowerManagementDefaultLimit");
  api.device_get_power_management_limit_constraints = lookup<abi::DeviceGetLimitConstraintsFn>(
      handle, "nvmlDeviceGetPowerManagementLimitConstraints");
  api.device_set_power_management_limit =
      lookup<abi::DeviceSetUnsignedFn>(handle, "nvmlDeviceSetPowerManagementLimit");
  api.device_get_persistence_mode =
      lookup<abi::DeviceGetPersistenceFn>(handle, "nvmlDeviceGetPersistenceMode");
  api.device_set_persistence_mode =
      lookup<abi::DeviceSetPersistenceFn>(handle, "nvmlDeviceSetPersistenceMode");
  api.device_get_supported_memory_clocks =
      lookup<abi::DeviceGetSupportedMemoryClocksFn>(handle, "nvmlDeviceGetSupportedMemoryClocks");
  api.device_get_supported_graphics_clocks = lookup<abi::DeviceGetSupportedGraphicsClocksFn>(
      handle, "nvmlDeviceGetSupportedGraphicsClocks");
  api.device_set_gpu_locked_clocks =
      lookup<abi::DeviceSetClockRangeFn>(handle, "nvmlDeviceSetGpuLockedClocks");
  api.device_reset_gpu_locked_clocks =
      lookup<abi::DeviceResetFn>(handle, "nvmlDeviceResetGpuLockedClocks");
  api.device_set_memory_locked_clocks =
      lookup<abi::DeviceSetClockRangeFn>(handle, "nvmlDeviceSetMemoryLockedClocks");
  api.device_reset_memory_locked_clocks =
      lookup<abi::DeviceResetFn>(handle, "nvmlDeviceResetMemoryLockedClocks");
  api.device_get_temperature =
      lookup<abi::DeviceGetTemperatureFn>(handle, "nvmlDeviceGetTemperature");
  api.device_get_temperature_v =
      lookup<abi::DeviceGetTemperatureVFn>(handle, "nvmlDeviceGetTemperatureV");

  const int rc = api.init();
  if (rc != abi::kSuccess) {
    const char* text = api.error_string(rc);
    const std::string message = text != nullptr ? text : "unknown NVML error";
    dlclose(handle);
    throw_nvml_error(rc, "nvmlInit_v2", message, fmt::format("initializing NVML from {}", path),
                     rc == abi::kErrorNoPermission ? kDeviceAccessHint : std::string_view());
  }
  log::debug("NVML loaded from {} and initialized", path);

  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary(path, handle, api));
  reg.sessions[path] = lib;
  return lib;
}

}  // namespace zeus::nvml_internal
