#include "device/nvml/nvml_library.h"

#include <fmt/format.h>

#include "device/nvml/nvml_error.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::nvml_internal {
namespace {

namespace abi = nvml_abi;

using device_internal::DynamicLibrary;
using device_internal::SessionRegistry;

}  // namespace

void throw_missing_symbol(std::string_view symbol, std::string_view context) {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this NVML does not export {}; the NVIDIA driver is too old for this "
                          "feature (update the driver)",
                          context, symbol));
}

NvmlLibrary::NvmlLibrary(std::string path, DynamicLibrary library, Api api)
    : path_(std::move(path)), library_(std::move(library)), api_(api) {}

NvmlLibrary::~NvmlLibrary() {
  const int rc = api_.shutdown();
  if (rc != abi::kSuccess) {
    log::warn("nvmlShutdown failed: {} (NVML error {})", error_string(rc), rc);
  }
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
  auto& sessions = SessionRegistry<NvmlLibrary>::instance();
  std::lock_guard lock(sessions.mutex());
  if (auto live = sessions.live(path)) return live;

  DynamicLibrary library(path);
  if (!library.is_open()) {
    throw_error(ErrorCode::kDriverNotLoaded,
                fmt::format("no NVIDIA driver found: cannot load {} ({}); install the NVIDIA "
                            "driver (it provides libnvidia-ml.so.1), point ZEUS_NVML_LIBRARY at "
                            "the library, or set ZEUS_GPU_BACKEND=sim to use simulated GPUs",
                            path, library.error()));
  }

  Api api;
  // Required: versioned names (the unversioned ones have older semantics).
  api.init = library.symbol<abi::InitFn>("nvmlInit_v2");
  api.shutdown = library.symbol<abi::ShutdownFn>("nvmlShutdown");
  api.error_string = library.symbol<abi::ErrorStringFn>("nvmlErrorString");
  api.device_get_count = library.symbol<abi::DeviceGetCountFn>("nvmlDeviceGetCount_v2");
  api.device_get_handle_by_index =
      library.symbol<abi::DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
  api.device_get_name = library.symbol<abi::DeviceStringFn>("nvmlDeviceGetName");
  api.device_get_uuid = library.symbol<abi::DeviceStringFn>("nvmlDeviceGetUUID");
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
      throw_error(ErrorCode::kDriverNotLoaded,
                  fmt::format("no NVIDIA driver found: {} does not export {}, so it is not NVML "
                              "or the NVIDIA driver is too old; install a current driver or point "
                              "ZEUS_NVML_LIBRARY at libnvidia-ml.so.1",
                              path, symbol));
    }
  }

  api.system_get_driver_version = library.symbol<abi::SystemStringFn>("nvmlSystemGetDriverVersion");
  api.system_get_nvml_version = library.symbol<abi::SystemStringFn>("nvmlSystemGetNVMLVersion");
  api.device_get_handle_by_uuid =
      library.symbol<abi::DeviceGetHandleByUuidFn>("nvmlDeviceGetHandleByUUID");
  api.device_get_index = library.symbol<abi::DeviceGetIndexFn>("nvmlDeviceGetIndex");
  api.device_get_architecture =
      library.symbol<abi::DeviceGetUnsignedFn>("nvmlDeviceGetArchitecture");
  api.device_get_total_energy_consumption =
      library.symbol<abi::DeviceGetTotalEnergyFn>("nvmlDeviceGetTotalEnergyConsumption");
  api.device_get_field_values =
      library.symbol<abi::DeviceGetFieldValuesFn>("nvmlDeviceGetFieldValues");
  api.device_get_power_usage = library.symbol<abi::DeviceGetUnsignedFn>("nvmlDeviceGetPowerUsage");
  api.device_get_power_management_limit =
      library.symbol<abi::DeviceGetUnsignedFn>("nvmlDeviceGetPowerManagementLimit");
  api.device_get_power_management_default_limit =
      library.symbol<abi::DeviceGetUnsignedFn>("nvmlDeviceGetPowerManagementDefaultLimit");
  api.device_get_power_management_limit_constraints =
      library.symbol<abi::DeviceGetLimitConstraintsFn>(
          "nvmlDeviceGetPowerManagementLimitConstraints");
  api.device_set_power_management_limit =
      library.symbol<abi::DeviceSetUnsignedFn>("nvmlDeviceSetPowerManagementLimit");
  api.device_get_persistence_mode =
      library.symbol<abi::DeviceGetPersistenceFn>("nvmlDeviceGetPersistenceMode");
  api.device_set_persistence_mode =
      library.symbol<abi::DeviceSetPersistenceFn>("nvmlDeviceSetPersistenceMode");
  api.device_get_supported_memory_clocks =
      library.symbol<abi::DeviceGetSupportedMemoryClocksFn>("nvmlDeviceGetSupportedMemoryClocks");
  api.device_get_supported_graphics_clocks =
      library.symbol<abi::DeviceGetSupportedGraphicsClocksFn>(
          "nvmlDeviceGetSupportedGraphicsClocks");
  api.device_set_gpu_locked_clocks =
      library.symbol<abi::DeviceSetClockRangeFn>("nvmlDeviceSetGpuLockedClocks");
  api.device_reset_gpu_locked_clocks =
      library.symbol<abi::DeviceResetFn>("nvmlDeviceResetGpuLockedClocks");
  api.device_set_memory_locked_clocks =
      library.symbol<abi::DeviceSetClockRangeFn>("nvmlDeviceSetMemoryLockedClocks");
  api.device_reset_memory_locked_clocks =
      library.symbol<abi::DeviceResetFn>("nvmlDeviceResetMemoryLockedClocks");
  api.device_get_temperature =
      library.symbol<abi::DeviceGetTemperatureFn>("nvmlDeviceGetTemperature");
  api.device_get_temperature_v =
      library.symbol<abi::DeviceGetTemperatureVFn>("nvmlDeviceGetTemperatureV");

  const int rc = api.init();
  if (rc != abi::kSuccess) {
    const char* text = api.error_string(rc);
    const std::string message = text != nullptr ? text : "unknown NVML error";
    throw_nvml_error(rc, "nvmlInit_v2", message, fmt::format("initializing NVML from {}", path),
                     rc == abi::kErrorNoPermission ? kDeviceAccessHint : std::string_view());
  }
  log::debug("NVML loaded from {} and initialized", path);

  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary(path, std::move(library), api));
  sessions.remember(path, lib);
  return lib;
}

}  // namespace zeus::nvml_internal
