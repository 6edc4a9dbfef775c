#include "device/amd/amdsmi_library.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "device/amd/amdsmi_error.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::amdsmi_internal {
namespace {

namespace abi = amdsmi_abi;

using device_internal::DynamicLibrary;
using device_internal::SessionRegistry;

AmdSmiLibrary::Api resolve(const DynamicLibrary& library) {
  AmdSmiLibrary::Api api;
  api.init = library.symbol<abi::InitFn>("amdsmi_init");
  api.shut_down = library.symbol<abi::ShutDownFn>("amdsmi_shut_down");
  api.get_lib_version = library.symbol<abi::GetLibVersionFn>("amdsmi_get_lib_version");
  api.get_socket_handles = library.symbol<abi::GetSocketHandlesFn>("amdsmi_get_socket_handles");
  api.get_processor_handles =
      library.symbol<abi::GetProcessorHandlesFn>("amdsmi_get_processor_handles");
  api.status_code_to_string =
      library.symbol<abi::StatusCodeToStringFn>("amdsmi_status_code_to_string");
  api.get_processor_type = library.symbol<abi::GetProcessorTypeFn>("amdsmi_get_processor_type");
  api.get_gpu_asic_info = library.symbol<abi::GetInfoFn>("amdsmi_get_gpu_asic_info");
  api.get_gpu_kfd_info = library.symbol<abi::GetInfoFn>("amdsmi_get_gpu_kfd_info");
  api.get_gpu_enumeration_info = library.symbol<abi::GetInfoFn>("amdsmi_get_gpu_enumeration_info");
  api.get_gpu_device_uuid = library.symbol<abi::GetDeviceUuidFn>("amdsmi_get_gpu_device_uuid");
  api.get_gpu_bdf_id = library.symbol<abi::GetDeviceBdfFn>("amdsmi_get_gpu_bdf_id");
  api.get_energy_count = library.symbol<abi::GetEnergyCountFn>("amdsmi_get_energy_count");
  api.get_power_info = library.symbol<abi::GetPowerInfoFn>("amdsmi_get_power_info");
  api.get_power_cap_info = library.symbol<abi::GetPowerCapInfoFn>("amdsmi_get_power_cap_info");
  api.set_power_cap = library.symbol<abi::SetPowerCapFn>("amdsmi_set_power_cap");
  api.get_clock_info = library.symbol<abi::GetClockInfoFn>("amdsmi_get_clock_info");
  api.get_clk_freq = library.symbol<abi::GetClkFreqFn>("amdsmi_get_clk_freq");
  api.set_gpu_clk_limit = library.symbol<abi::SetGpuClkLimitFn>("amdsmi_set_gpu_clk_limit");
  api.set_gpu_perf_level = library.symbol<abi::SetGpuPerfLevelFn>("amdsmi_set_gpu_perf_level");
  api.get_temp_metric = library.symbol<abi::GetTempMetricFn>("amdsmi_get_temp_metric");
  api.get_gpu_process_list =
      library.symbol<abi::GetGpuProcessListFn>("amdsmi_get_gpu_process_list");
  return api;
}

// The first required symbol the library lacks, or nullptr.
const char* missing_required(const AmdSmiLibrary::Api& api) {
  if (api.init == nullptr) return "amdsmi_init";
  if (api.shut_down == nullptr) return "amdsmi_shut_down";
  if (api.get_lib_version == nullptr) return "amdsmi_get_lib_version";
  if (api.get_socket_handles == nullptr) return "amdsmi_get_socket_handles";
  if (api.get_processor_handles == nullptr) return "amdsmi_get_processor_handles";
  return nullptr;
}

}  // namespace

void throw_missing_symbol(std::string_view symbol, std::string_view context) {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this AMD SMI does not export {}; the ROCm installation is too old "
                          "for this feature (update ROCm)",
                          context, symbol));
}

bool needs_serialized_calls(const AmdSmiLibrary::Version& version) {
  if (version.abi < 26) return true;
  return version.major == 26 && version.minor < 3;
}

AmdSmiLibrary::Version read_version(abi::GetLibVersionFn get_lib_version, std::string_view path) {
  // Zeroed and larger than either layout, so a wrong guess cannot overrun.
  alignas(8) unsigned char buffer[64] = {};
  const abi::amdsmi_status_t status = get_lib_version(buffer);
  if (status != abi::kSuccess) {
    throw_error(ErrorCode::kDriverNotLoaded,
                fmt::format("{}: amdsmi_get_lib_version failed (AMD SMI status {})", path, status));
  }
  std::uint32_t first = 0;
  std::memcpy(&first, buffer, sizeof(first));
  AmdSmiLibrary::Version v;
  if (first == 24 || first == 25) {
    abi::Version24 raw{};
    std::memcpy(&raw, buffer, sizeof(raw));
    v.abi = static_cast<int>(first);
    v.major = raw.major;
    v.minor = raw.minor;
    v.release = raw.release;
    v.text = fmt::format("{}.{}.{}.{}", raw.year, raw.major, raw.minor, raw.release);
    // 24.x before 24.7 is ROCm 6.2 and older, whose power and energy readings
    // were wrong (ROCm/amdsmi#22) and whose ABI we do not declare.
    if (v.abi == 24 && v.major < 7) {
      throw_error(ErrorCode::kDriverNotLoaded,
                  fmt::format("{} is AMD SMI {} (ROCm 6.2 or older); zeus needs ROCm 6.3 or newer",
                              path, v.text));
    }
  } else if (first == 26) {
    abi::Version26 raw{};
    std::memcpy(&raw, buffer, sizeof(raw));
    v.abi = 26;
    v.major = raw.major;
    v.minor = raw.minor;
    v.release = raw.release;
    v.text = fmt::format("{}.{}.{}", raw.major, raw.minor, raw.release);
  } else {
    throw_error(
        ErrorCode::kDriverNotLoaded,
        fmt::format("{} reports AMD SMI ABI {}, which this zeus does not know (it knows 24, "
                    "25 and 26: ROCm 6.3 to 7.x); update zeus or point AMDSMI_LIB_DIR at "
                    "a supported ROCm",
                    path, first));
  }
  return v;
}

AmdSmiLibrary::AmdSmiLibrary(std::string path, DynamicLibrary library, Api api, Version version,
                             bool serialize)
    : path_(std::move(path)),
      library_(std::move(library)),
      api_(api),
      version_(std::move(version)),
      serialize_(serialize) {}

AmdSmiLibrary::~AmdSmiLibrary() {
  const abi::amdsmi_status_t status = api_.shut_down();
  if (status != abi::kSuccess) {
    log::warn("amdsmi_shut_down failed: {} (AMD SMI status {})", status_string(status), status);
  }
}

std::string AmdSmiLibrary::status_string(abi::amdsmi_status_t status) const {
  if (api_.status_code_to_string != nullptr) {
    const char* text = nullptr;
    if (api_.status_code_to_string(status, &text) == abi::kSuccess && text != nullptr) return text;
  }
  return fmt::format("status {}", status);
}

void AmdSmiLibrary::check(abi::amdsmi_status_t status, std::string_view function,
                          std::string_view context) const {
  if (status != abi::kSuccess) fail(status, function, context);
}

void AmdSmiLibrary::fail(abi::amdsmi_status_t status, std::string_view function,
                         std::string_view context) const {
  throw_amdsmi_error(status, function, status_string(status), context);
}

std::shared_ptr<AmdSmiLibrary> AmdSmiLibrary::acquire(const std::vector<std::string>& candidates,
                                                      int serialize) {
  auto& sessions = SessionRegistry<AmdSmiLibrary>::instance();
  std::lock_guard lock(sessions.mutex());
  std::vector<std::string> tried;
  for (const std::string& path : candidates) {
    if (auto live = sessions.live(path)) return live;
    DynamicLibrary library(path);
    if (!library.is_open()) {
      tried.push_back(library.error());
      continue;
    }
    const Api api = resolve(library);
    if (const char* symbol = missing_required(api); symbol != nullptr) {
      tried.push_back(fmt::format("{}: does not export {} (not AMD SMI, or older than ROCm 6.3)",
                                  path, symbol));
      continue;
    }
    Version version;
    try {
      version = read_version(api.get_lib_version, path);
    } catch (const Error& e) {
      tried.push_back(e.what());
      continue;
    }
    const abi::amdsmi_status_t status = api.init(abi::kInitAmdGpus);
    if (status != abi::kSuccess) {
      const char* text = nullptr;
      std::string why = fmt::format("status {}", status);
      if (api.status_code_to_string != nullptr &&
          api.status_code_to_string(status, &text) == abi::kSuccess && text != nullptr) {
        why = text;
      }
      throw_amdsmi_error(status, "amdsmi_init", why,
                         fmt::format("initializing AMD SMI {} from {}", version.text, path));
    }
    const bool serialized = serialize >= 0 ? serialize != 0 : needs_serialized_calls(version);
    log::debug("AMD SMI {} (ABI {}) loaded from {}{}", version.text, version.abi, path,
               serialized ? "; calls serialized (not thread-safe before ROCm 7.2)" : "");
    std::shared_ptr<AmdSmiLibrary> lib(
        new AmdSmiLibrary(path, std::move(library), api, std::move(version), serialized));
    sessions.remember(path, lib);
    return lib;
  }
  // One line: notes are printed one per line, with control characters escaped.
  throw_error(ErrorCode::kDriverNotLoaded,
              fmt::format("no AMD SMI found (ROCm 6.3 or newer is needed); install ROCm, or point "
                          "AMDSMI_LIB_DIR (or ROCM_PATH) at it. Tried: {}",
                          tried.empty() ? std::string("nothing")
                                        : fmt::format("{}", fmt::join(tried, "; "))));
}

}  // namespace zeus::amdsmi_internal
