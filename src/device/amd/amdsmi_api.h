// The subset of AMD SMI's C ABI (libamd_smi.so) this backend uses, declared by
// hand: the library is only reached through dlsym, and three ABI majors are in
// the field (24: ROCm 6.3, 25: ROCm 6.4, 26: ROCm 7.x). Values and layouts
// follow AMD SMI's amdsmi.h of each major; where a layout differs between
// majors there is one struct per major, checked with static_asserts. Structs we
// only read a prefix of are passed as oversized, zeroed buffers, so a library
// that grew them cannot write past our memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zeus::amdsmi_abi {

using amdsmi_processor_handle = void*;
using amdsmi_socket_handle = void*;
using amdsmi_status_t = std::uint32_t;  // an int-sized enum on every Linux ABI we target

// Status codes (amdsmi_status_t).
inline constexpr amdsmi_status_t kSuccess = 0;
inline constexpr amdsmi_status_t kInval = 1;
inline constexpr amdsmi_status_t kNotSupported = 2;
inline constexpr amdsmi_status_t kNotYetImplemented = 3;
inline constexpr amdsmi_status_t kFailLoadModule = 4;
inline constexpr amdsmi_status_t kFailLoadSymbol = 5;
inline constexpr amdsmi_status_t kDrmError = 6;
inline constexpr amdsmi_status_t kApiFailed = 7;
inline constexpr amdsmi_status_t kTimeout = 8;
inline constexpr amdsmi_status_t kRetry = 9;
inline constexpr amdsmi_status_t kNoPerm = 10;
inline constexpr amdsmi_status_t kInterrupt = 11;
inline constexpr amdsmi_status_t kIo = 12;
inline constexpr amdsmi_status_t kAddressFault = 13;
inline constexpr amdsmi_status_t kFileError = 14;
inline constexpr amdsmi_status_t kOutOfResources = 15;
inline constexpr amdsmi_status_t kInternalException = 16;
inline constexpr amdsmi_status_t kInputOutOfBounds = 17;
inline constexpr amdsmi_status_t kInitError = 18;
inline constexpr amdsmi_status_t kBusy = 30;
inline constexpr amdsmi_status_t kNotFound = 31;
inline constexpr amdsmi_status_t kNotInit = 32;
inline constexpr amdsmi_status_t kNoSlot = 33;
inline constexpr amdsmi_status_t kDriverNotLoaded = 34;
inline constexpr amdsmi_status_t kNoData = 40;
inline constexpr amdsmi_status_t kInsufficientSize = 41;
inline constexpr amdsmi_status_t kUnexpectedSize = 42;
inline constexpr amdsmi_status_t kUnexpectedData = 43;
inline constexpr amdsmi_status_t kNoDrv = 51;
inline constexpr amdsmi_status_t kFileNotFound = 52;
inline constexpr amdsmi_status_t kArgPtrNull = 53;
inline constexpr amdsmi_status_t kSettingUnavailable = 55;
inline constexpr amdsmi_status_t kUnknownError = 0xFFFFFFFFU;

inline constexpr std::uint64_t kInitAmdGpus = 1U << 1U;   // amdsmi_init_flags_t
inline constexpr std::uint32_t kProcessorTypeAmdGpu = 1;  // processor_type_t

// amdsmi_clk_type_t.
inline constexpr std::uint32_t kClkTypeGfx = 0;
inline constexpr std::uint32_t kClkTypeMem = 4;
// amdsmi_clk_limit_type_t.
inline constexpr std::uint32_t kClkLimitMin = 0;
inline constexpr std::uint32_t kClkLimitMax = 1;
// amdsmi_dev_perf_level_t.
inline constexpr std::uint32_t kPerfLevelAuto = 0;
// amdsmi_temperature_type_t / amdsmi_temperature_metric_t.
inline constexpr std::uint32_t kTemperatureTypeHotspot = 1;
inline constexpr std::uint32_t kTemperatureMetricCurrent = 0;

// A power reading the driver does not have ("N/A" in amd-smi).
inline constexpr std::uint32_t kPowerNotAvailable = 0xFFFFFFFFU;

// amdsmi_version_t. ABI 24 and 25 lead with the year (24 or 25); ABI 26
// dropped it, so its first field is the major (26). Either way the first
// 32-bit word names the ABI, which is how the loader tells them apart.
struct Version24 {
  std::uint32_t year;
  std::uint32_t major;
  std::uint32_t minor;
  std::uint32_t release;
  const char* build;
};
struct Version26 {
  std::uint32_t major;
  std::uint32_t minor;
  std::uint32_t release;
  const char* build;
};
static_assert(sizeof(Version24) == 24 && offsetof(Version24, major) == 4, "amdsmi_version_t 24");
static_assert(sizeof(Version26) == 24 && offsetof(Version26, build) == 16, "amdsmi_version_t 26");

// amdsmi_power_info_t, whose layout changed with every major. Power in whole
// watts; kPowerNotAvailable where the ASIC has no such reading
// (current_socket_power: MI300 and newer; average_socket_power: Navi, MI200
// and older).
struct PowerInfo24 {
  std::uint32_t current_socket_power;
  std::uint32_t average_socket_power;
  std::uint32_t gfx_voltage;
  std::uint32_t soc_voltage;
  std::uint32_t mem_voltage;
  std::uint32_t power_limit;
  std::uint32_t reserved[11];
};
struct PowerInfo25 {
  std::uint64_t socket_power;
  std::uint32_t current_socket_power;
  std::uint32_t average_socket_power;
  std::uint32_t gfx_voltage;
  std::uint32_t soc_voltage;
  std::uint32_t mem_voltage;
  std::uint32_t power_limit;
  std::uint32_t reserved[2];
};
struct PowerInfo26 {
  std::uint64_t socket_power;
  std::uint32_t current_socket_power;
  std::uint32_t average_socket_power;
  std::uint64_t gfx_voltage;
  std::uint64_t soc_voltage;
  std::uint64_t mem_voltage;
  std::uint32_t power_limit;
  std::uint64_t reserved[18];
};
static_assert(sizeof(PowerInfo24) == 68 && offsetof(PowerInfo24, average_socket_power) == 4,
              "amdsmi_power_info_t 24");
static_assert(sizeof(PowerInfo25) == 40 && offsetof(PowerInfo25, current_socket_power) == 8,
              "amdsmi_power_info_t 25");
static_assert(sizeof(PowerInfo26) == 192 && offsetof(PowerInfo26, average_socket_power) == 12,
              "amdsmi_power_info_t 26");

// amdsmi_power_cap_info_t (same in 24-26). Caps in microwatts.
struct PowerCapInfo {
  std::uint64_t power_cap;
  std::uint64_t default_power_cap;
  std::uint64_t dpm_cap;  // MHz
  std::uint64_t min_power_cap;
  std::uint64_t max_power_cap;
  std::uint64_t reserved[3];
};
static_assert(sizeof(PowerCapInfo) == 64, "amdsmi_power_cap_info_t");

// amdsmi_clk_info_t (same in 24-26). MHz.
struct ClkInfo {
  std::uint32_t clk;
  std::uint32_t min_clk;
  std::uint32_t max_clk;
  std::uint8_t clk_locked;
  std::uint8_t clk_deep_sleep;
  std::uint32_t reserved[4];
};
static_assert(sizeof(ClkInfo) == 32 && offsetof(ClkInfo, reserved) == 16, "amdsmi_clk_info_t");

// amdsmi_frequencies_t: the DPM levels of a clock domain. The prefix is the
// same in 24-26; the array length (33 in 24) may grow, so the caller passes a
// FrequenciesBuffer. Unit: Hz in 24, MHz in 26 (see to_megahertz in amdsmi_gpu.cc).
struct FrequenciesHeader {
  bool has_deep_sleep;
  std::uint32_t num_supported;
  std::uint32_t current;
};
inline constexpr std::size_t kFrequenciesArrayOffset = 16;
inline constexpr std::size_t kMaxFrequencies = 256;  // we accept at most this many levels
struct FrequenciesBuffer {
  FrequenciesHeader header;
  std::uint32_t pad;
  std::uint64_t frequency[kMaxFrequencies];
};
static_assert(offsetof(FrequenciesHeader, num_supported) == 4, "amdsmi_frequencies_t");
static_assert(offsetof(FrequenciesBuffer, frequency) == kFrequenciesArrayOffset,
              "amdsmi_frequencies_t");

// amdsmi_kfd_info_t (same in 24-26).
struct KfdInfo {
  std::uint64_t kfd_id;
  std::uint32_t node_id;
  std::uint32_t current_partition_id;
  std::uint32_t reserved[12];
};
static_assert(sizeof(KfdInfo) == 64, "amdsmi_kfd_info_t");

// amdsmi_enumeration_info_t (25 and newer): hip_uuid is 64 or 256 chars
// depending on the release, so we read it through EnumerationBuffer.
struct EnumerationHeader {
  std::uint32_t drm_render;
  std::uint32_t drm_card;
  std::uint32_t hsa_id;
  std::uint32_t hip_id;
};
struct EnumerationBuffer {
  EnumerationHeader header;
  char hip_uuid[256];
  char slack[1024];  // room for fields a newer library appends
};
static_assert(offsetof(EnumerationBuffer, hip_uuid) == 16, "amdsmi_enumeration_info_t");

// amdsmi_asic_info_t: only market_name (256 chars at offset 0 in 24-26) is
// read; the struct is about 450 bytes in 24 and 900 in 26.
struct AsicInfoBuffer {
  char market_name[256];
  unsigned char rest[3840];
};

// amdsmi_proc_info_t: one entry of amdsmi_get_gpu_process_list, an array the
// caller allocates, so the entry size is the stride and must be exact. Its
// name and container_name grew from AMDSMI_NORMAL_STRING_LENGTH (32) to
// AMDSMI_MAX_STRING_LENGTH (256), which moves pid and mem. Layouts from AMD
// SMI's amdsmi.h: ABI 24 as of 24.7 (ROCm 6.3; also its ctypes wrapper,
// which lists the 4 padding bytes after pid), ABI 26 as of 26.1 (ROCm 7.1:
// cu_occupancy and reserved[11]; later 26.x name one reserved word
// evicted_time, same size). ABI 25's (ROCm 6.4) is not declared: the
// backend refuses it (amdsmi_gpu.cc). We read pid and mem only.
struct ProcEngineUsage {
  std::uint64_t gfx;  // ns the process used the graphics/compute engine, cumulative
  std::uint64_t enc;
  std::uint32_t reserved[12];
};
struct ProcMemoryUsage {
  std::uint64_t gtt_mem;
  std::uint64_t cpu_mem;
  std::uint64_t vram_mem;
  std::uint32_t reserved[10];
};
struct ProcInfo24 {
  char name[32];
  std::uint32_t pid;
  std::uint64_t mem;  // bytes
  ProcEngineUsage engine_usage;
  ProcMemoryUsage memory_usage;
  char container_name[32];
  std::uint32_t reserved[4];
};
struct ProcInfo26 {
  char name[256];
  std::uint32_t pid;
  std::uint64_t mem;  // bytes
  ProcEngineUsage engine_usage;
  ProcMemoryUsage memory_usage;
  char container_name[256];
  std::uint32_t cu_occupancy;
  std::uint32_t reserved[11];
};
static_assert(sizeof(ProcEngineUsage) == 64 && sizeof(ProcMemoryUsage) == 64,
              "amdsmi_proc_info_t usage structs");
static_assert(sizeof(ProcInfo24) == 224 && offsetof(ProcInfo24, pid) == 32 &&
                  offsetof(ProcInfo24, mem) == 40 && offsetof(ProcInfo24, container_name) == 176,
              "amdsmi_proc_info_t 24");
static_assert(sizeof(ProcInfo26) == 704 && offsetof(ProcInfo26, pid) == 256 &&
                  offsetof(ProcInfo26, mem) == 264 && offsetof(ProcInfo26, container_name) == 400,
              "amdsmi_proc_info_t 26");

inline constexpr unsigned kUuidBufferSize = 64;  // AMDSMI_GPU_UUID_SIZE is 38

// Function pointer types, named after the exported symbols.
using InitFn = amdsmi_status_t (*)(std::uint64_t);
using ShutDownFn = amdsmi_status_t (*)();
using StatusCodeToStringFn = amdsmi_status_t (*)(amdsmi_status_t, const char**);
using GetLibVersionFn = amdsmi_status_t (*)(void*);
using GetSocketHandlesFn = amdsmi_status_t (*)(std::uint32_t*, amdsmi_socket_handle*);
using GetProcessorHandlesFn = amdsmi_status_t (*)(amdsmi_socket_handle, std::uint32_t*,
                                                  amdsmi_processor_handle*);
using GetProcessorTypeFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t*);
using GetInfoFn = amdsmi_status_t (*)(amdsmi_processor_handle, void*);  // asic, kfd, enumeration
using GetDeviceUuidFn = amdsmi_status_t (*)(amdsmi_processor_handle, unsigned*, char*);
using GetDeviceBdfFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint64_t*);
using GetEnergyCountFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint64_t*, float*,
                                             std::uint64_t*);
using GetPowerInfoFn = amdsmi_status_t (*)(amdsmi_processor_handle, void*);
using GetPowerCapInfoFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t,
                                              PowerCapInfo*);
using SetPowerCapFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t, std::uint64_t);
using GetClockInfoFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t, ClkInfo*);
using GetClkFreqFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t, void*);
using SetGpuClkLimitFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t, std::uint32_t,
                                             std::uint64_t);
using SetGpuPerfLevelFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t);
using GetTempMetricFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t, std::uint32_t,
                                            std::int64_t*);
// (handle, max_processes in/out, list of amdsmi_proc_info_t): see
// AmdSmiGpu::compute_processes for the size protocol.
using GetGpuProcessListFn = amdsmi_status_t (*)(amdsmi_processor_handle, std::uint32_t*, void*);

}  // namespace zeus::amdsmi_abi
