// One loaded and initialized NVML: the dlopen handle, the resolved entry
// points, and the nvmlInit_v2/nvmlShutdown pairing. Shared (shared_ptr) by
// every NvmlGpu opened from it, so NVML is shut down and the library closed
// only when the last GPU goes. Immutable after construction, so it is safe to
// use from any thread (NVML itself is thread-safe).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/dynamic_library.h"
#include "device/nvml/nvml_api.h"

namespace zeus::nvml_internal {

class NvmlLibrary {
 public:
  // Entry points. The first group is required (loading fails without them);
  // the rest are nullptr when this driver does not export them, and the
  // features that need them report kNotSupported.
  struct Api {
    nvml_abi::InitFn init = nullptr;
    nvml_abi::ShutdownFn shutdown = nullptr;
    nvml_abi::ErrorStringFn error_string = nullptr;
    nvml_abi::DeviceGetCountFn device_get_count = nullptr;
    nvml_abi::DeviceGetHandleByIndexFn device_get_handle_by_index = nullptr;
    nvml_abi::DeviceStringFn device_get_name = nullptr;
    nvml_abi::DeviceStringFn device_get_uuid = nullptr;

    nvml_abi::SystemStringFn system_get_driver_version = nullptr;
    nvml_abi::SystemStringFn system_get_nvml_version = nullptr;
    nvml_abi::DeviceGetHandleByUuidFn device_get_handle_by_uuid = nullptr;
    nvml_abi::DeviceGetIndexFn device_get_index = nullptr;
    nvml_abi::DeviceGetUnsignedFn device_get_architecture = nullptr;
    nvml_abi::DeviceGetTotalEnergyFn device_get_total_energy_consumption = nullptr;
    nvml_abi::DeviceGetFieldValuesFn device_get_field_values = nullptr;
    nvml_abi::DeviceGetUnsignedFn device_get_power_usage = nullptr;  // optional
    nvml_abi::DeviceGetUnsignedFn device_get_power_management_limit = nullptr;
    nvml_abi::DeviceGetUnsignedFn device_get_power_management_default_limit = nullptr;
    nvml_abi::DeviceGetLimitConstraintsFn device_get_power_management_limit_constraints = nullptr;
    nvml_abi::DeviceSetUnsignedFn device_set_power_management_limit = nullptr;
    nvml_abi::DeviceGetPersistenceFn device_get_persistence_mode = nullptr;
    nvml_abi::DeviceSetPersistenceFn device_set_persistence_mode = nullptr;
    nvml_abi::DeviceGetSupportedMemoryClocksFn device_get_supported_memory_clocks = nullptr;
    nvml_abi::DeviceGetSupportedGraphicsClocksFn device_get_supported_graphics_clocks = nullptr;
    nvml_abi::DeviceSetClockRangeFn device_set_gpu_locked_clocks = nullptr;
    nvml_abi::DeviceResetFn device_reset_gpu_locked_clocks = nullptr;
    nvml_abi::DeviceSetClockRangeFn device_set_memory_locked_clocks = nullptr;
    nvml_abi::DeviceResetFn device_reset_memory_locked_clocks = nullptr;
    nvml_abi::DeviceGetTemperatureFn device_get_temperature = nullptr;
    nvml_abi::DeviceGetTemperatureVFn device_get_temperature_v = nullptr;
    nvml_abi::DeviceGetPciInfoFn device_get_pci_info = nullptr;
    nvml_abi::DeviceGetMigModeFn device_get_mig_mode = nullptr;
    // Telemetry; event_reasons is the R535 name, throttle_reasons the older
    // one (used only when the new one is missing).
    nvml_abi::DeviceGetUtilizationRatesFn device_get_utilization_rates = nullptr;
    nvml_abi::DeviceGetClockInfoFn device_get_clock_info = nullptr;
    nvml_abi::DeviceGetClocksReasonsFn device_get_current_clocks_event_reasons = nullptr;
    nvml_abi::DeviceGetClocksReasonsFn device_get_current_clocks_throttle_reasons = nullptr;
    nvml_abi::DeviceGetMemoryInfoFn device_get_memory_info = nullptr;
    nvml_abi::DeviceGetUnsignedFn device_get_minor_number = nullptr;
    // Who runs on the GPU (nvml_processes.cc).
    nvml_abi::DeviceGetProcessUtilizationFn device_get_process_utilization = nullptr;
    nvml_abi::DeviceGetAccountingModeFn device_get_accounting_mode = nullptr;
    nvml_abi::DeviceGetAccountingPidsFn device_get_accounting_pids = nullptr;
    nvml_abi::DeviceGetAccountingStatsFn device_get_accounting_stats = nullptr;
    nvml_abi::DeviceGetComputeRunningProcessesFn device_get_compute_running_processes_v3 = nullptr;
    nvml_abi::DeviceGetComputeRunningProcessesFn device_get_compute_running_processes_v2 = nullptr;
    nvml_abi::DeviceGetUnsignedFn device_get_max_mig_device_count = nullptr;
    nvml_abi::DeviceGetMigDeviceHandleByIndexFn device_get_mig_device_handle_by_index = nullptr;
    nvml_abi::DeviceGetUnsignedFn device_get_gpu_instance_id = nullptr;
    nvml_abi::DeviceGetAttributesFn device_get_attributes_v2 = nullptr;
    // Never called: whether they are exported tells which entry size _v3
    // writes (compute_processes_entry in nvml_processes.h).
    bool exports_conf_compute_mem_size_info = false;
    bool exports_running_process_detail_list = false;
  };

  // One entry point resolve() looked up: its exported name, whether loading
  // needs it, and whether this library has it.
  struct Lookup {
    std::string_view symbol;
    bool required = false;
    bool found = false;
  };

  // Looks every entry point up in `library` (nothing is called). When
  // `lookups` is given, each lookup is recorded there: acquire() names the
  // first missing required symbol from it, and the tests hold real NVML
  // builds against the same list.
  static Api resolve(const device_internal::DynamicLibrary& library,
                     std::vector<Lookup>* lookups = nullptr);

  // Returns the live NVML session for `path`, loading and initializing it if
  // none is alive. Throws kDriverNotLoaded ("no NVIDIA driver found: ...")
  // when the library cannot be loaded, is not NVML, or the driver is missing.
  static std::shared_ptr<NvmlLibrary> acquire(const std::string& path);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }

  // nvmlErrorString's text for a return code.
  std::string_view error_string(int nvml_return) const;

  // Throws the mapped NvmlError unless nvml_return is NVML_SUCCESS.
  // `hint` replaces the default advice for the code when not empty.
  void check(int nvml_return, std::string_view function, std::string_view context,
             std::string_view hint = {}) const;
  [[noreturn]] void fail(int nvml_return, std::string_view function, std::string_view context,
                         std::string_view hint = {}) const;

 private:
  NvmlLibrary(std::string path, device_internal::DynamicLibrary library, Api api);

  std::string path_;
  device_internal::DynamicLibrary library_;  // closed after nvmlShutdown
  Api api_;
};

[[noreturn]] void throw_missing_symbol(std::string_view symbol, std::string_view context);

// Throws kNotSupported when an optional entry point is missing.
template <class Fn>
void require_symbol(Fn fn, std::string_view symbol, std::string_view context) {
  if (fn == nullptr) throw_missing_symbol(symbol, context);
}

}  // namespace zeus::nvml_internal
