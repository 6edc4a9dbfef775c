// One loaded and initialized AMD SMI: the dlopen handle, the resolved entry
// points, the ABI major read back from the library, amdsmi_init/shut_down
// pairing, and the mutex that serializes calls on libraries that are not
// thread-safe (before ROCm 7.2). Shared by every AmdSmiGpu opened from it.
// Immutable after construction except for the mutex, so it may be used from
// any thread; callers hold lock() around every AMD SMI call.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "device/amd/amdsmi_api.h"
#include "device/dynamic_library.h"

namespace zeus::amdsmi_internal {

class AmdSmiLibrary {
 public:
  // Entry points. The first group is required; the rest are nullptr when the
  // library lacks them and the features that need them report kNotSupported.
  struct Api {
    amdsmi_abi::InitFn init = nullptr;
    amdsmi_abi::ShutDownFn shut_down = nullptr;
    amdsmi_abi::GetLibVersionFn get_lib_version = nullptr;
    amdsmi_abi::GetSocketHandlesFn get_socket_handles = nullptr;
    amdsmi_abi::GetProcessorHandlesFn get_processor_handles = nullptr;

    amdsmi_abi::StatusCodeToStringFn status_code_to_string = nullptr;
    amdsmi_abi::GetProcessorTypeFn get_processor_type = nullptr;
    amdsmi_abi::GetInfoFn get_gpu_asic_info = nullptr;
    amdsmi_abi::GetInfoFn get_gpu_kfd_info = nullptr;
    amdsmi_abi::GetInfoFn get_gpu_enumeration_info = nullptr;  // ROCm 6.4+
    amdsmi_abi::GetDeviceUuidFn get_gpu_device_uuid = nullptr;
    amdsmi_abi::GetDeviceBdfFn get_gpu_bdf_id = nullptr;
    amdsmi_abi::GetEnergyCountFn get_energy_count = nullptr;
    amdsmi_abi::GetPowerInfoFn get_power_info = nullptr;
    amdsmi_abi::GetPowerCapInfoFn get_power_cap_info = nullptr;
    amdsmi_abi::SetPowerCapFn set_power_cap = nullptr;
    amdsmi_abi::GetClockInfoFn get_clock_info = nullptr;
    amdsmi_abi::GetClkFreqFn get_clk_freq = nullptr;
    amdsmi_abi::SetGpuClkLimitFn set_gpu_clk_limit = nullptr;
    amdsmi_abi::SetGpuPerfLevelFn set_gpu_perf_level = nullptr;
    amdsmi_abi::GetTempMetricFn get_temp_metric = nullptr;
    amdsmi_abi::GetGpuProcessListFn get_gpu_process_list = nullptr;
  };

  struct Version {
    int abi = 0;  // 24, 25 or 26
    unsigned major = 0;
    unsigned minor = 0;
    unsigned release = 0;
    std::string text;  // "24.7.1.0" (with the year) or "26.2.0"
  };

  // Loads the first candidate that is a supported AMD SMI and initializes it,
  // or returns the live session of a library already loaded from that path.
  // `serialize` overrides the version rule when set (1/0). Throws
  // kDriverNotLoaded listing why each candidate failed.
  static std::shared_ptr<AmdSmiLibrary> acquire(const std::vector<std::string>& candidates,
                                                int serialize);

  ~AmdSmiLibrary();
  AmdSmiLibrary(const AmdSmiLibrary&) = delete;
  AmdSmiLibrary& operator=(const AmdSmiLibrary&) = delete;

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }
  const Version& version() const { return version_; }
  bool serialized() const { return serialize_; }

  // Held around every AMD SMI call: locks the library-wide mutex when calls
  // must be serialized, else an empty lock.
  std::unique_lock<std::mutex> lock() const {
    return serialize_ ? std::unique_lock<std::mutex>(mutex_) : std::unique_lock<std::mutex>();
  }

  // amdsmi_status_code_to_string's text for a status.
  std::string status_string(amdsmi_abi::amdsmi_status_t status) const;
  // Throws the mapped AmdSmiError unless status is success.
  void check(amdsmi_abi::amdsmi_status_t status, std::string_view function,
             std::string_view context) const;
  [[noreturn]] void fail(amdsmi_abi::amdsmi_status_t status, std::string_view function,
                         std::string_view context) const;

 private:
  AmdSmiLibrary(std::string path, device_internal::DynamicLibrary library, Api api, Version version,
                bool serialize);

  std::string path_;
  device_internal::DynamicLibrary library_;  // closed after amdsmi_shut_down
  Api api_;
  Version version_;
  bool serialize_;
  mutable std::mutex mutex_;  // serializes AMD SMI calls when serialize_
};

// Whether calls into this AMD SMI version must be serialized: before ROCm 7.2
// AMD SMI is not thread-safe. ROCm 7.1.1 ships 26.2.0, so every version up to
// 26.2 is serialized.
bool needs_serialized_calls(const AmdSmiLibrary::Version& version);

// Reads the version of a loaded library and tells its ABI from the first
// word (see amdsmi_api.h). Throws kDriverNotLoaded for unsupported versions
// (ROCm 6.2 and older, or a newer ABI than 26).
AmdSmiLibrary::Version read_version(amdsmi_abi::GetLibVersionFn get_lib_version,
                                    std::string_view path);

[[noreturn]] void throw_missing_symbol(std::string_view symbol, std::string_view context);

}  // namespace zeus::amdsmi_internal
