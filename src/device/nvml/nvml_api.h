// The subset of NVML's C ABI this backend uses, declared by hand because no
// nvml.h is installed here and the library is only ever reached through dlsym.
// Values and layouts follow NVML's header (API version 13). Return codes cross
// the boundary as plain int (nvmlReturn_t is an int-sized enum on every Linux
// ABI we target).
//
// tests/real_nvml/nvml_abi_check.cc static_asserts every declaration here
// against NVIDIA's real nvml.h (Debian's libnvidia-ml-dev, header 11.8) in
// every build that could fetch it; a mismatch breaks the build. Whatever is
// newer than that header is listed there with the driver branch that brought
// it. Add a declaration here, add its check there.
#pragma once

#include <cstddef>

namespace zeus::nvml_abi {

struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
using nvmlReturn_t = int;

// Return codes (nvmlReturn_t).
inline constexpr int kSuccess = 0;
inline constexpr int kErrorUninitialized = 1;
inline constexpr int kErrorInvalidArgument = 2;
inline constexpr int kErrorNotSupported = 3;
inline constexpr int kErrorNoPermission = 4;
inline constexpr int kErrorAlreadyInitialized = 5;
inline constexpr int kErrorNotFound = 6;
inline constexpr int kErrorInsufficientSize = 7;
inline constexpr int kErrorInsufficientPower = 8;
inline constexpr int kErrorDriverNotLoaded = 9;
inline constexpr int kErrorTimeout = 10;
inline constexpr int kErrorIrqIssue = 11;
inline constexpr int kErrorLibraryNotFound = 12;
inline constexpr int kErrorFunctionNotFound = 13;
inline constexpr int kErrorCorruptedInforom = 14;
inline constexpr int kErrorGpuIsLost = 15;
inline constexpr int kErrorResetRequired = 16;
inline constexpr int kErrorOperatingSystem = 17;
inline constexpr int kErrorLibRmVersionMismatch = 18;
inline constexpr int kErrorInUse = 19;
inline constexpr int kErrorMemory = 20;
inline constexpr int kErrorNoData = 21;
inline constexpr int kErrorVgpuEccNotSupported = 22;
inline constexpr int kErrorInsufficientResources = 23;
inline constexpr int kErrorFreqNotSupported = 24;
inline constexpr int kErrorArgumentVersionMismatch = 25;
inline constexpr int kErrorDeprecated = 26;
inline constexpr int kErrorNotReady = 27;
inline constexpr int kErrorGpuNotFound = 28;
inline constexpr int kErrorInvalidState = 29;
inline constexpr int kErrorResetTypeNotSupported = 30;
inline constexpr int kErrorUnknown = 999;

// nvmlDeviceArchitecture_t values.
inline constexpr unsigned kArchVolta = 5;
inline constexpr unsigned kArchUnknown = 0xffffffffU;

// Field ids and power scopes for nvmlDeviceGetFieldValues.
inline constexpr unsigned kFieldTotalEnergyConsumption = 83;
inline constexpr unsigned kFieldPowerAverage = 185;
inline constexpr unsigned kFieldPowerInstant = 186;
inline constexpr unsigned kPowerScopeGpu = 0;
inline constexpr unsigned kPowerScopeModule = 1;
inline constexpr unsigned kPowerScopeMemory = 2;

// nvmlValueType_t.
inline constexpr int kValueTypeDouble = 0;
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;
inline constexpr int kValueTypeSignedLongLong = 4;
inline constexpr int kValueTypeSignedInt = 5;
inline constexpr int kValueTypeUnsignedShort = 6;

inline constexpr int kTemperatureGpu = 0;   // nvmlTemperatureSensors_t
inline constexpr int kFeatureDisabled = 0;  // nvmlEnableState_t
inline constexpr int kFeatureEnabled = 1;

// Big enough for nvmlDeviceGetName/GetUUID (the *_V2_BUFFER_SIZE constants) and
// for the driver/NVML version strings (80).
inline constexpr unsigned kStringBufferSize = 96;

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;    // µs since 1970
  long long latencyUsec;  // how stale the value may be
  int valueType;          // nvmlValueType_t
  int nvmlReturn;         // per-entry result: always check it
  nvmlValue_t value;
};

// nvmlDeviceGetPciInfo_v3's answer. busId is "domain:bus:device.function",
// the domain in 8 hex digits ("00000000:3B:00.0").
inline constexpr unsigned kPciBusIdLegacySize = 16;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
inline constexpr unsigned kPciBusIdSize = 32;        // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
struct nvmlPciInfo_t {
  char busIdLegacy[kPciBusIdLegacySize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[kPciBusIdSize];
};

struct nvmlTemperature_v1_t {
  unsigned int version;
  int sensorType;   // nvmlTemperatureSensors_t
  int temperature;  // °C
};

// NVML_STRUCT_VERSION(data, ver): the struct size in the low bits, the version
// in the top byte. NVML rejects a wrong value with ARGUMENT_VERSION_MISMATCH.
constexpr unsigned struct_version(std::size_t size, unsigned version) {
  return static_cast<unsigned>(size) | (version << 24U);
}
inline constexpr unsigned kTemperatureV1Version = struct_version(sizeof(nvmlTemperature_v1_t), 1);

static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t layout");
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t layout");
static_assert(offsetof(nvmlFieldValue_t, timestamp) == 8, "nvmlFieldValue_t layout");
static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28, "nvmlFieldValue_t layout");
static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t layout");
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
static_assert(sizeof(nvmlTemperature_v1_t) == 12, "nvmlTemperature_v1_t layout");
static_assert(kTemperatureV1Version == 0x0100000CU, "nvmlTemperature_v1 version");

// Operator telemetry (Gpu::telemetry()).
struct nvmlUtilization_t {
  unsigned int gpu;     // % of the last sample period a kernel ran
  unsigned int memory;  // % of it device memory was read or written
};
struct nvmlMemory_t {  // v1; bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr int kClockSm = 1;   // nvmlClockType_t NVML_CLOCK_SM
inline constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
// nvmlClocksEventReason* bits (named nvmlClocksThrottleReason* before R535).
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1ULL;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2ULL;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4ULL;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8ULL;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10ULL;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80ULL;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100ULL;

static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t layout");
static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");

// Function pointer types, named after the exported symbols.
using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using SystemStringFn = nvmlReturn_t (*)(char*, unsigned);
using DeviceGetCountFn = nvmlReturn_t (*)(unsigned*);
using DeviceGetHandleByIndexFn = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
using DeviceGetHandleByUuidFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using DeviceGetIndexFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
using DeviceStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned);
using DeviceGetUnsignedFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
using DeviceGetTotalEnergyFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using DeviceGetFieldValuesFn = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);
using DeviceGetLimitConstraintsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*);
using DeviceSetUnsignedFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned);
using DeviceGetPersistenceFn = nvmlReturn_t (*)(nvmlDevice_t, int*);
using DeviceSetPersistenceFn = nvmlReturn_t (*)(nvmlDevice_t, int);
using DeviceGetSupportedMemoryClocksFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*);
using DeviceGetSupportedGraphicsClocksFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, unsigned*,
                                                            unsigned*);
using DeviceSetClockRangeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, unsigned);
using DeviceResetFn = nvmlReturn_t (*)(nvmlDevice_t);
using DeviceGetTemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*);
using DeviceGetTemperatureVFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperature_v1_t*);
using DeviceGetUtilizationRatesFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using DeviceGetClockInfoFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*);
// nvmlDeviceGetCurrentClocksEventReasons (R535 on) and its deprecated former
// name nvmlDeviceGetCurrentClocksThrottleReasons share this type.
using DeviceGetClocksReasonsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using DeviceGetMemoryInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using DeviceGetPciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
// (current mode, pending mode): NVML_DEVICE_MIG_ENABLE when MIG is on.
using DeviceGetMigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*);
inline constexpr unsigned kDeviceMigEnable = 1;

// ---- Who runs on the GPU (Gpu::process_utilization and its siblings) ----

// NVML_VALUE_NOT_AVAILABLE ((-1) in NVML's header) as it lands in unsigned fields.
inline constexpr unsigned long long kValueNotAvailableULL = ~0ULL;
inline constexpr unsigned kValueNotAvailableUInt = ~0U;

struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, µs
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

struct nvmlAccountingStats_t {
  unsigned int gpuUtilization;  // % over the process's life (or NOT_AVAILABLE)
  unsigned int memoryUtilization;
  unsigned long long maxMemoryUsage;
  unsigned long long time;       // ms; the driver reports 0 while the process runs
  unsigned long long startTime;  // CPU timestamp, µs
  unsigned int isRunning;
  unsigned int reserved[5];
};

// What nvmlDeviceGetComputeRunningProcesses_v2 writes, and _v3 on every
// driver except the few that write nvmlProcessInfoCc_t (see
// compute_processes_entry in nvml_processes.h).
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NOT_AVAILABLE
  unsigned int gpuInstanceId;        // 0xFFFFFFFF without MIG
  unsigned int computeInstanceId;
};
// nvmlProcessInfo_t as header 12.2 declared it: _v3 of early R535 drivers
// writes entries of this size.
struct nvmlProcessInfoCc_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
};

struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};

static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t");
static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8, "sample layout");
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "sample layout");
static_assert(sizeof(nvmlAccountingStats_t) == 56, "nvmlAccountingStats_t layout");
static_assert(offsetof(nvmlAccountingStats_t, isRunning) == 32, "nvmlAccountingStats_t layout");
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t layout");
static_assert(sizeof(nvmlProcessInfoCc_t) == 32, "nvmlProcessInfo_t (12.2) layout");
static_assert(offsetof(nvmlProcessInfoCc_t, usedGpuCcProtectedMemory) == 24, "layout");
static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t layout");

// (device, buffer or nullptr, in: capacity / out: count, lastSeenTimeStamp µs)
using DeviceGetProcessUtilizationFn = nvmlReturn_t (*)(nvmlDevice_t,
                                                       nvmlProcessUtilizationSample_t*, unsigned*,
                                                       unsigned long long);
using DeviceGetAccountingModeFn = nvmlReturn_t (*)(nvmlDevice_t, int*);  // nvmlEnableState_t
using DeviceGetAccountingPidsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*);
using DeviceGetAccountingStatsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, nvmlAccountingStats_t*);
// _v3 and _v2 share it; _v3's entry size depends on the driver (above).
using DeviceGetComputeRunningProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*,
                                                            nvmlProcessInfo_v2_t*);
using DeviceGetMigDeviceHandleByIndexFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, nvmlDevice_t*);
using DeviceGetAttributesFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDeviceAttributes_t*);

}  // namespace zeus::nvml_abi
