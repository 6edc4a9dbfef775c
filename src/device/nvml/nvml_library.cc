#include "device/nvml/nvml_library.h"

#include <fmt/format.h>

#include <type_traits>

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

NvmlLibrary::Api NvmlLibrary::resolve(const DynamicLibrary& library, std::vector<Lookup>* lookups) {
  auto look_up = [&](auto& slot, const char* symbol, bool required) {
    slot = library.symbol<std::remove_reference_t<decltype(slot)>>(symbol);
    if (lookups != nullptr) lookups->push_back({symbol, required, slot != nullptr});
  };
  // A symbol only looked for, never called (its type does not matter).
  auto mark = [&](bool& exported, const char* symbol) {
    exported = library.symbol<void (*)()>(symbol) != nullptr;
    if (lookups != nullptr) lookups->push_back({symbol, false, exported});
  };
  constexpr bool kRequired = true;
  constexpr bool kOptional = false;
  Api api;
  // Required: versioned names (the unversioned ones have older semantics).
  look_up(api.init, "nvmlInit_v2", kRequired);
  look_up(api.shutdown, "nvmlShutdown", kRequired);
  look_up(api.error_string, "nvmlErrorString", kRequired);
  look_up(api.device_get_count, "nvmlDeviceGetCount_v2", kRequired);
  look_up(api.device_get_handle_by_index, "nvmlDeviceGetHandleByIndex_v2", kRequired);
  look_up(api.device_get_name, "nvmlDeviceGetName", kRequired);
  look_up(api.device_get_uuid, "nvmlDeviceGetUUID", kRequired);

  look_up(api.system_get_driver_version, "nvmlSystemGetDriverVersion", kOptional);
  look_up(api.system_get_nvml_version, "nvmlSystemGetNVMLVersion", kOptional);
  look_up(api.device_get_handle_by_uuid, "nvmlDeviceGetHandleByUUID", kOptional);
  look_up(api.device_get_index, "nvmlDeviceGetIndex", kOptional);
  look_up(api.device_get_architecture, "nvmlDeviceGetArchitecture", kOptional);
  look_up(api.device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption",
          kOptional);
  look_up(api.device_get_field_values, "nvmlDeviceGetFieldValues", kOptional);
  look_up(api.device_get_power_usage, "nvmlDeviceGetPowerUsage", kOptional);
  look_up(api.device_get_power_management_limit, "nvmlDeviceGetPowerManagementLimit", kOptional);
  look_up(api.device_get_power_management_default_limit, "nvmlDeviceGetPowerManagementDefaultLimit",
          kOptional);
  look_up(api.device_get_power_management_limit_constraints,
          "nvmlDeviceGetPowerManagementLimitConstraints", kOptional);
  look_up(api.device_set_power_management_limit, "nvmlDeviceSetPowerManagementLimit", kOptional);
  look_up(api.device_get_persistence_mode, "nvmlDeviceGetPersistenceMode", kOptional);
  look_up(api.device_set_persistence_mode, "nvmlDeviceSetPersistenceMode", kOptional);
  look_up(api.device_get_supported_memory_clocks, "nvmlDeviceGetSupportedMemoryClocks", kOptional);
  look_up(api.device_get_supported_graphics_clocks, "nvmlDeviceGetSupportedGraphicsClocks",
          kOptional);
  look_up(api.device_set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks", kOptional);
  look_up(api.device_reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks", kOptional);
  look_up(api.device_set_memory_locked_clocks, "nvmlDeviceSetMemoryLockedClocks", kOptional);
  look_up(api.device_reset_memory_locked_clocks, "nvmlDeviceResetMemoryLockedClocks", kOptional);
  look_up(api.device_get_temperature, "nvmlDeviceGetTemperature", kOptional);
  look_up(api.device_get_temperature_v, "nvmlDeviceGetTemperatureV", kOptional);
  look_up(api.device_get_pci_info, "nvmlDeviceGetPciInfo_v3", kOptional);
  look_up(api.device_get_mig_mode, "nvmlDeviceGetMigMode", kOptional);
  look_up(api.device_get_utilization_rates, "nvmlDeviceGetUtilizationRates", kOptional);
  look_up(api.device_get_clock_info, "nvmlDeviceGetClockInfo", kOptional);
  look_up(api.device_get_current_clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons",
          kOptional);
  look_up(api.device_get_current_clocks_throttle_reasons,
          "nvmlDeviceGetCurrentClocksThrottleReasons", kOptional);
  look_up(api.device_get_memory_info, "nvmlDeviceGetMemoryInfo", kOptional);
  look_up(api.device_get_minor_number, "nvmlDeviceGetMinorNumber", kOptional);
  look_up(api.device_get_process_utilization, "nvmlDeviceGetProcessUtilization", kOptional);
  look_up(api.device_get_accounting_mode, "nvmlDeviceGetAccountingMode", kOptional);
  look_up(api.device_get_accounting_pids, "nvmlDeviceGetAccountingPids", kOptional);
  look_up(api.device_get_accounting_stats, "nvmlDeviceGetAccountingStats", kOptional);
  look_up(api.device_get_compute_running_processes_v3, "nvmlDeviceGetComputeRunningProcesses_v3",
          kOptional);
  look_up(api.device_get_compute_running_processes_v2, "nvmlDeviceGetComputeRunningProcesses_v2",
          kOptional);
  look_up(api.device_get_max_mig_device_count, "nvmlDeviceGetMaxMigDeviceCount", kOptional);
  look_up(api.device_get_mig_device_handle_by_index, "nvmlDeviceGetMigDeviceHandleByIndex",
          kOptional);
  look_up(api.device_get_gpu_instance_id, "nvmlDeviceGetGpuInstanceId", kOptional);
  look_up(api.device_get_attributes_v2, "nvmlDeviceGetAttributes_v2", kOptional);
  mark(api.exports_conf_compute_mem_size_info, "nvmlDeviceGetConfComputeMemSizeInfo");
  mark(api.exports_running_process_detail_list, "nvmlDeviceGetRunningProcessDetailList");
  return api;
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

  std::vector<Lookup> lookups;
  const Api api = resolve(library, &lookups);
  for (const Lookup& lookup : lookups) {
    if (lookup.required && !lookup.found) {
      throw_error(ErrorCode::kDriverNotLoaded,
                  fmt::format("no NVIDIA driver found: {} does not export {}, so it is not NVML "
                              "or the NVIDIA driver is too old; install a current driver or point "
                              "ZEUS_NVML_LIBRARY at libnvidia-ml.so.1",
                              path, lookup.symbol));
    }
  }

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
