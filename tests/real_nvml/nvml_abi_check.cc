// The compile-time ABI check: every constant, struct layout and function
// pointer type of our hand-written NVML declarations (src/device/nvml/nvml_api.h)
// against NVIDIA's real nvml.h, fetched by scripts/fetch_real_nvml.sh from
// Debian's libnvidia-ml-dev (NVML header 11.8, API version 11). This file only
// compiles; any mismatch is a static_assert that breaks the build.
//
// Newer than the 11.8 header, so checked only against our own layout asserts
// in nvml_api.h and the fake NVML (header version where NVIDIA's nvml.h first
// has it, from the history of NVIDIA/go-nvml's vendored nvml.h; driver branch
// = the minimum driver of that CUDA release):
//
//   NVML_ERROR_DEPRECATED (26)               12.0, R525
//   NVML_ERROR_NOT_READY (27)                12.2, R535
//   NVML_ERROR_GPU_NOT_FOUND (28)            12.3, R545
//   NVML_ERROR_INVALID_STATE (29)            12.4, R550
//   NVML_ERROR_RESET_TYPE_NOT_SUPPORTED (30) 13.0, R580
//   NVML_VALUE_TYPE_SIGNED_INT (5), nvmlValue_t::siVal      12.2, R535
//   NVML_VALUE_TYPE_UNSIGNED_SHORT (6), nvmlValue_t::usVal  12.6, R560
//   NVML_FI_DEV_POWER_AVERAGE (185), NVML_FI_DEV_POWER_INSTANT (186),
//     NVML_POWER_SCOPE_GPU (0), NVML_POWER_SCOPE_MODULE (1)  12.2, R535
//   NVML_POWER_SCOPE_MEMORY (2)              12.3, R545
//   nvmlTemperature_v1_t, nvmlDeviceGetTemperatureV  12.8, R570 (absent from
//     the 535 library: tests/real_nvml checks that we fall back)
//   nvmlDeviceGetCurrentClocksEventReasons   12.2, R535 (the new name of
//     nvmlDeviceGetCurrentClocksThrottleReasons, checked below: same
//     signature and bits; the 535 library exports both, and the backend
//     falls back to the old name, tested on the old fake driver)
//
//   nvmlProcessInfo_t with usedGpuCcProtectedMemory (32 bytes)  12.2, early
//     R535 (our nvmlProcessInfoCc_t; later headers went back to the 11.8
//     layout, which is what the real 535.261 library's _v3 writes: it
//     exports nvmlDeviceGetRunningProcessDetailList, see nvml_processes.h)
//
// The real 535 library's nvmlErrorString agrees: it names 26 and 27 and
// answers "Unknown Error" for 28-30.
//
// NVML_NO_UNVERSIONED_FUNC_DEFS: without it the header hides
// nvmlDeviceGetComputeRunningProcesses_v2 (it maps the unversioned names to
// the newest versions instead); every name checked here is versioned.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#include <cstddef>
#include <type_traits>

#include "device/nvml/nvml_api.h"

namespace {

namespace abi = zeus::nvml_abi;

// Whether our declared type passes the same bits as NVIDIA's. Our return codes
// and enums are plain int (NVIDIA's are int-sized enums), and our opaque and
// data structs live in our namespace (their layouts are asserted below).
template <class Ours, class Theirs>
struct Equivalent : std::is_same<Ours, Theirs> {};

template <class Theirs>
requires std::is_enum_v<Theirs>
struct Equivalent<int, Theirs>
    : std::bool_constant<sizeof(Theirs) == sizeof(int) && alignof(Theirs) == alignof(int)> {
};

template <>
struct Equivalent<abi::nvmlDevice_st, ::nvmlDevice_st> : std::true_type {};
template <>
struct Equivalent<abi::nvmlFieldValue_t, ::nvmlFieldValue_t> : std::true_type {};
template <>
struct Equivalent<abi::nvmlPciInfo_t, ::nvmlPciInfo_t> : std::true_type {};
template <>
struct Equivalent<abi::nvmlUtilization_t, ::nvmlUtilization_t> : std::true_type {};
template <>
struct Equivalent<abi::nvmlMemory_t, ::nvmlMemory_t> : std::true_type {};
template <>
struct Equivalent<abi::nvmlProcessUtilizationSample_t, ::nvmlProcessUtilizationSample_t>
    : std::true_type {};
template <>
struct Equivalent<abi::nvmlAccountingStats_t, ::nvmlAccountingStats_t> : std::true_type {};
// _v3 (nvmlProcessInfo_t) and _v2 (nvmlProcessInfo_v2_t) share our type.
template <>
struct Equivalent<abi::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_t> : std::true_type {};
template <>
struct Equivalent<abi::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_v2_t> : std::true_type {};
template <>
struct Equivalent<abi::nvmlDeviceAttributes_t, ::nvmlDeviceAttributes_t> : std::true_type {};

template <class Ours, class Theirs>
struct Equivalent<Ours*, Theirs*> : Equivalent<Ours, Theirs> {};
template <class Ours, class Theirs>
struct Equivalent<const Ours, const Theirs> : Equivalent<Ours, Theirs> {};

template <class OursR, class... OursA, class TheirsR, class... TheirsA>
requires(sizeof...(OursA) ==
         sizeof...(TheirsA)) struct Equivalent<OursR (*)(OursA...), TheirsR (*)(TheirsA...)>
    : std::bool_constant<Equivalent<OursR, TheirsR>::value &&
                         (Equivalent<OursA, TheirsA>::value && ...)> {
};

template <class Ours, class Theirs>
inline constexpr bool kEquivalent = Equivalent<Ours, Theirs>::value;

// The check itself must be able to fail: these are not equivalent.
static_assert(
    !kEquivalent<abi::DeviceGetUnsignedFn, decltype(&::nvmlDeviceGetTotalEnergyConsumption)>);
static_assert(!kEquivalent<abi::DeviceSetUnsignedFn, decltype(&::nvmlDeviceGetPowerUsage)>);
static_assert(!kEquivalent<int, unsigned int>);

// ---- function pointer types, one per symbol the loader looks up ----------
#define ZEUS_CHECK_FN(ours, symbol) \
  static_assert(kEquivalent<abi::ours, decltype(&::symbol)>, #symbol " vs nvml_abi::" #ours)

ZEUS_CHECK_FN(InitFn, nvmlInit_v2);
ZEUS_CHECK_FN(ShutdownFn, nvmlShutdown);
ZEUS_CHECK_FN(ErrorStringFn, nvmlErrorString);
ZEUS_CHECK_FN(SystemStringFn, nvmlSystemGetDriverVersion);
ZEUS_CHECK_FN(SystemStringFn, nvmlSystemGetNVMLVersion);
ZEUS_CHECK_FN(DeviceGetCountFn, nvmlDeviceGetCount_v2);
ZEUS_CHECK_FN(DeviceGetHandleByIndexFn, nvmlDeviceGetHandleByIndex_v2);
ZEUS_CHECK_FN(DeviceGetHandleByUuidFn, nvmlDeviceGetHandleByUUID);
ZEUS_CHECK_FN(DeviceGetIndexFn, nvmlDeviceGetIndex);
ZEUS_CHECK_FN(DeviceStringFn, nvmlDeviceGetName);
ZEUS_CHECK_FN(DeviceStringFn, nvmlDeviceGetUUID);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetArchitecture);
ZEUS_CHECK_FN(DeviceGetTotalEnergyFn, nvmlDeviceGetTotalEnergyConsumption);
ZEUS_CHECK_FN(DeviceGetFieldValuesFn, nvmlDeviceGetFieldValues);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetPowerUsage);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetPowerManagementLimit);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetPowerManagementDefaultLimit);
ZEUS_CHECK_FN(DeviceGetLimitConstraintsFn, nvmlDeviceGetPowerManagementLimitConstraints);
ZEUS_CHECK_FN(DeviceSetUnsignedFn, nvmlDeviceSetPowerManagementLimit);
ZEUS_CHECK_FN(DeviceGetPersistenceFn, nvmlDeviceGetPersistenceMode);
ZEUS_CHECK_FN(DeviceSetPersistenceFn, nvmlDeviceSetPersistenceMode);
ZEUS_CHECK_FN(DeviceGetSupportedMemoryClocksFn, nvmlDeviceGetSupportedMemoryClocks);
ZEUS_CHECK_FN(DeviceGetSupportedGraphicsClocksFn, nvmlDeviceGetSupportedGraphicsClocks);
ZEUS_CHECK_FN(DeviceSetClockRangeFn, nvmlDeviceSetGpuLockedClocks);
ZEUS_CHECK_FN(DeviceResetFn, nvmlDeviceResetGpuLockedClocks);
ZEUS_CHECK_FN(DeviceSetClockRangeFn, nvmlDeviceSetMemoryLockedClocks);
ZEUS_CHECK_FN(DeviceResetFn, nvmlDeviceResetMemoryLockedClocks);
ZEUS_CHECK_FN(DeviceGetTemperatureFn, nvmlDeviceGetTemperature);
ZEUS_CHECK_FN(DeviceGetPciInfoFn, nvmlDeviceGetPciInfo_v3);
ZEUS_CHECK_FN(DeviceGetMigModeFn, nvmlDeviceGetMigMode);
static_assert(abi::kDeviceMigEnable == NVML_DEVICE_MIG_ENABLE);
ZEUS_CHECK_FN(DeviceGetUtilizationRatesFn, nvmlDeviceGetUtilizationRates);
ZEUS_CHECK_FN(DeviceGetClockInfoFn, nvmlDeviceGetClockInfo);
ZEUS_CHECK_FN(DeviceGetClocksReasonsFn, nvmlDeviceGetCurrentClocksThrottleReasons);
ZEUS_CHECK_FN(DeviceGetMemoryInfoFn, nvmlDeviceGetMemoryInfo);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetMinorNumber);
ZEUS_CHECK_FN(DeviceGetProcessUtilizationFn, nvmlDeviceGetProcessUtilization);
ZEUS_CHECK_FN(DeviceGetAccountingModeFn, nvmlDeviceGetAccountingMode);
ZEUS_CHECK_FN(DeviceGetAccountingPidsFn, nvmlDeviceGetAccountingPids);
ZEUS_CHECK_FN(DeviceGetAccountingStatsFn, nvmlDeviceGetAccountingStats);
ZEUS_CHECK_FN(DeviceGetComputeRunningProcessesFn, nvmlDeviceGetComputeRunningProcesses_v3);
ZEUS_CHECK_FN(DeviceGetComputeRunningProcessesFn, nvmlDeviceGetComputeRunningProcesses_v2);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetMaxMigDeviceCount);
ZEUS_CHECK_FN(DeviceGetMigDeviceHandleByIndexFn, nvmlDeviceGetMigDeviceHandleByIndex);
ZEUS_CHECK_FN(DeviceGetUnsignedFn, nvmlDeviceGetGpuInstanceId);
ZEUS_CHECK_FN(DeviceGetAttributesFn, nvmlDeviceGetAttributes_v2);
// nvmlDeviceGetConfComputeMemSizeInfo and nvmlDeviceGetRunningProcessDetailList
// are only looked for, never called (nvml_processes.h), and newer than 11.8.
// nvmlDeviceGetCurrentClocksEventReasons is newer (see the top); same type.
// DeviceGetTemperatureVFn: nvmlDeviceGetTemperatureV is newer (see the top).
#undef ZEUS_CHECK_FN

// ---- return codes ---------------------------------------------------------
static_assert(abi::kSuccess == NVML_SUCCESS);
static_assert(abi::kErrorUninitialized == NVML_ERROR_UNINITIALIZED);
static_assert(abi::kErrorInvalidArgument == NVML_ERROR_INVALID_ARGUMENT);
static_assert(abi::kErrorNotSupported == NVML_ERROR_NOT_SUPPORTED);
static_assert(abi::kErrorNoPermission == NVML_ERROR_NO_PERMISSION);
static_assert(abi::kErrorAlreadyInitialized == NVML_ERROR_ALREADY_INITIALIZED);
static_assert(abi::kErrorNotFound == NVML_ERROR_NOT_FOUND);
static_assert(abi::kErrorInsufficientSize == NVML_ERROR_INSUFFICIENT_SIZE);
static_assert(abi::kErrorInsufficientPower == NVML_ERROR_INSUFFICIENT_POWER);
static_assert(abi::kErrorDriverNotLoaded == NVML_ERROR_DRIVER_NOT_LOADED);
static_assert(abi::kErrorTimeout == NVML_ERROR_TIMEOUT);
static_assert(abi::kErrorIrqIssue == NVML_ERROR_IRQ_ISSUE);
static_assert(abi::kErrorLibraryNotFound == NVML_ERROR_LIBRARY_NOT_FOUND);
static_assert(abi::kErrorFunctionNotFound == NVML_ERROR_FUNCTION_NOT_FOUND);
static_assert(abi::kErrorCorruptedInforom == NVML_ERROR_CORRUPTED_INFOROM);
static_assert(abi::kErrorGpuIsLost == NVML_ERROR_GPU_IS_LOST);
static_assert(abi::kErrorResetRequired == NVML_ERROR_RESET_REQUIRED);
static_assert(abi::kErrorOperatingSystem == NVML_ERROR_OPERATING_SYSTEM);
static_assert(abi::kErrorLibRmVersionMismatch == NVML_ERROR_LIB_RM_VERSION_MISMATCH);
static_assert(abi::kErrorInUse == NVML_ERROR_IN_USE);
static_assert(abi::kErrorMemory == NVML_ERROR_MEMORY);
static_assert(abi::kErrorNoData == NVML_ERROR_NO_DATA);
static_assert(abi::kErrorVgpuEccNotSupported == NVML_ERROR_VGPU_ECC_NOT_SUPPORTED);
static_assert(abi::kErrorInsufficientResources == NVML_ERROR_INSUFFICIENT_RESOURCES);
static_assert(abi::kErrorFreqNotSupported == NVML_ERROR_FREQ_NOT_SUPPORTED);
static_assert(abi::kErrorArgumentVersionMismatch == NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
static_assert(abi::kErrorUnknown == NVML_ERROR_UNKNOWN);
// 26-30 are newer (see the top); they must at least follow 25 in order.
static_assert(abi::kErrorDeprecated == NVML_ERROR_ARGUMENT_VERSION_MISMATCH + 1);
static_assert(abi::kErrorResetTypeNotSupported == abi::kErrorDeprecated + 4);

// ---- other constants ------------------------------------------------------
static_assert(abi::kArchVolta == NVML_DEVICE_ARCH_VOLTA);
static_assert(abi::kArchUnknown == NVML_DEVICE_ARCH_UNKNOWN);
static_assert(std::is_same_v<nvmlDeviceArchitecture_t, unsigned int>);
static_assert(abi::kFieldTotalEnergyConsumption == NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION);
// Fields 185/186 are newer, past this header's NVML_FI_MAX.
static_assert(abi::kFieldPowerAverage >= NVML_FI_MAX && abi::kFieldPowerInstant >= NVML_FI_MAX);
static_assert(abi::kValueTypeDouble == NVML_VALUE_TYPE_DOUBLE);
static_assert(abi::kValueTypeUnsignedInt == NVML_VALUE_TYPE_UNSIGNED_INT);
static_assert(abi::kValueTypeUnsignedLong == NVML_VALUE_TYPE_UNSIGNED_LONG);
static_assert(abi::kValueTypeUnsignedLongLong == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
static_assert(abi::kValueTypeSignedLongLong == NVML_VALUE_TYPE_SIGNED_LONG_LONG);
static_assert(abi::kValueTypeSignedInt == NVML_VALUE_TYPE_COUNT);  // the next value
static_assert(abi::kTemperatureGpu == NVML_TEMPERATURE_GPU);
static_assert(abi::kFeatureDisabled == NVML_FEATURE_DISABLED);
static_assert(abi::kFeatureEnabled == NVML_FEATURE_ENABLED);
// One buffer serves names, UUIDs and version strings: it must fit the largest.
static_assert(abi::kStringBufferSize >= NVML_DEVICE_NAME_V2_BUFFER_SIZE);
static_assert(abi::kStringBufferSize >= NVML_DEVICE_UUID_V2_BUFFER_SIZE);
static_assert(abi::kStringBufferSize >= NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
static_assert(abi::kStringBufferSize >= NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
static_assert(abi::kPciBusIdLegacySize == NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
static_assert(abi::kPciBusIdSize == NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
static_assert(abi::kValueNotAvailableULL ==
              static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
static_assert(abi::kValueNotAvailableUInt == static_cast<unsigned>(NVML_VALUE_NOT_AVAILABLE));

// NVML_STRUCT_VERSION, on a struct both headers know the size of.
static_assert(abi::struct_version(sizeof(nvmlMemory_v2_t), 2) == nvmlMemory_v2);

static_assert(abi::kClockSm == NVML_CLOCK_SM);
static_assert(abi::kClockMem == NVML_CLOCK_MEM);
static_assert(abi::kClocksEventGpuIdle == nvmlClocksThrottleReasonGpuIdle);
static_assert(abi::kClocksEventApplicationsClocksSetting ==
              nvmlClocksThrottleReasonApplicationsClocksSetting);
static_assert(abi::kClocksEventSwPowerCap == nvmlClocksThrottleReasonSwPowerCap);
static_assert(abi::kClocksEventHwSlowdown == nvmlClocksThrottleReasonHwSlowdown);
static_assert(abi::kClocksEventSyncBoost == nvmlClocksThrottleReasonSyncBoost);
static_assert(abi::kClocksEventSwThermalSlowdown == nvmlClocksThrottleReasonSwThermalSlowdown);
static_assert(abi::kClocksEventHwThermalSlowdown == nvmlClocksThrottleReasonHwThermalSlowdown);
static_assert(abi::kClocksEventHwPowerBrakeSlowdown ==
              nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
static_assert(abi::kClocksEventDisplayClockSetting == nvmlClocksThrottleReasonDisplayClockSetting);

// ---- struct layouts -------------------------------------------------------
#define ZEUS_CHECK_FIELD(ours, theirs, field)                                           \
  static_assert(offsetof(abi::ours, field) == offsetof(::theirs, field) &&              \
                    sizeof(abi::ours::field) == sizeof(::theirs::field) &&              \
                    kEquivalent<decltype(abi::ours::field), decltype(::theirs::field)>, \
                #theirs "::" #field)

static_assert(sizeof(abi::nvmlValue_t) == sizeof(::nvmlValue_t));
static_assert(alignof(abi::nvmlValue_t) == alignof(::nvmlValue_t));
ZEUS_CHECK_FIELD(nvmlValue_t, nvmlValue_t, dVal);
ZEUS_CHECK_FIELD(nvmlValue_t, nvmlValue_t, uiVal);
ZEUS_CHECK_FIELD(nvmlValue_t, nvmlValue_t, ulVal);
ZEUS_CHECK_FIELD(nvmlValue_t, nvmlValue_t, ullVal);
ZEUS_CHECK_FIELD(nvmlValue_t, nvmlValue_t, sllVal);
// siVal and usVal are newer; as union members they start at 0 and fit in 8 bytes.
static_assert(offsetof(abi::nvmlValue_t, siVal) == 0 && offsetof(abi::nvmlValue_t, usVal) == 0);

static_assert(sizeof(abi::nvmlFieldValue_t) == sizeof(::nvmlFieldValue_t));
static_assert(alignof(abi::nvmlFieldValue_t) == alignof(::nvmlFieldValue_t));
ZEUS_CHECK_FIELD(nvmlFieldValue_t, nvmlFieldValue_t, fieldId);
ZEUS_CHECK_FIELD(nvmlFieldValue_t, nvmlFieldValue_t, scopeId);
ZEUS_CHECK_FIELD(nvmlFieldValue_t, nvmlFieldValue_t, timestamp);
ZEUS_CHECK_FIELD(nvmlFieldValue_t, nvmlFieldValue_t, latencyUsec);
ZEUS_CHECK_FIELD(nvmlFieldValue_t, nvmlFieldValue_t, valueType);
ZEUS_CHECK_FIELD(nvmlFieldValue_t, nvmlFieldValue_t, nvmlReturn);
static_assert(offsetof(abi::nvmlFieldValue_t, value) == offsetof(::nvmlFieldValue_t, value));

static_assert(sizeof(abi::nvmlPciInfo_t) == sizeof(::nvmlPciInfo_t));
static_assert(alignof(abi::nvmlPciInfo_t) == alignof(::nvmlPciInfo_t));
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, busIdLegacy);
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, domain);
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, bus);
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, device);
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, pciDeviceId);
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, pciSubSystemId);
ZEUS_CHECK_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, busId);

static_assert(sizeof(abi::nvmlUtilization_t) == sizeof(::nvmlUtilization_t));
static_assert(alignof(abi::nvmlUtilization_t) == alignof(::nvmlUtilization_t));
ZEUS_CHECK_FIELD(nvmlUtilization_t, nvmlUtilization_t, gpu);
ZEUS_CHECK_FIELD(nvmlUtilization_t, nvmlUtilization_t, memory);

static_assert(sizeof(abi::nvmlMemory_t) == sizeof(::nvmlMemory_t));
static_assert(alignof(abi::nvmlMemory_t) == alignof(::nvmlMemory_t));
ZEUS_CHECK_FIELD(nvmlMemory_t, nvmlMemory_t, total);
ZEUS_CHECK_FIELD(nvmlMemory_t, nvmlMemory_t, free);
ZEUS_CHECK_FIELD(nvmlMemory_t, nvmlMemory_t, used);

static_assert(sizeof(abi::nvmlProcessUtilizationSample_t) ==
              sizeof(::nvmlProcessUtilizationSample_t));
static_assert(alignof(abi::nvmlProcessUtilizationSample_t) ==
              alignof(::nvmlProcessUtilizationSample_t));
ZEUS_CHECK_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, pid);
ZEUS_CHECK_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, timeStamp);
ZEUS_CHECK_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, smUtil);
ZEUS_CHECK_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, memUtil);
ZEUS_CHECK_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, encUtil);
ZEUS_CHECK_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, decUtil);

static_assert(sizeof(abi::nvmlAccountingStats_t) == sizeof(::nvmlAccountingStats_t));
static_assert(alignof(abi::nvmlAccountingStats_t) == alignof(::nvmlAccountingStats_t));
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, gpuUtilization);
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, memoryUtilization);
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, maxMemoryUsage);
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, time);
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, startTime);
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, isRunning);
ZEUS_CHECK_FIELD(nvmlAccountingStats_t, nvmlAccountingStats_t, reserved);

// Our one process-info type against both of NVIDIA's (identical in 11.8).
static_assert(sizeof(abi::nvmlProcessInfo_v2_t) == sizeof(::nvmlProcessInfo_v2_t));
static_assert(alignof(abi::nvmlProcessInfo_v2_t) == alignof(::nvmlProcessInfo_v2_t));
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, pid);
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, usedGpuMemory);
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, gpuInstanceId);
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, computeInstanceId);
static_assert(sizeof(abi::nvmlProcessInfo_v2_t) == sizeof(::nvmlProcessInfo_t));
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_t, pid);
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_t, usedGpuMemory);
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_t, gpuInstanceId);
ZEUS_CHECK_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_t, computeInstanceId);
// The 12.2 layout extends it (newer, see the top).
static_assert(offsetof(abi::nvmlProcessInfoCc_t, computeInstanceId) ==
              offsetof(::nvmlProcessInfo_t, computeInstanceId));
static_assert(offsetof(abi::nvmlProcessInfoCc_t, usedGpuCcProtectedMemory) ==
              sizeof(::nvmlProcessInfo_t));

static_assert(sizeof(abi::nvmlDeviceAttributes_t) == sizeof(::nvmlDeviceAttributes_t));
static_assert(alignof(abi::nvmlDeviceAttributes_t) == alignof(::nvmlDeviceAttributes_t));
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, multiprocessorCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, sharedCopyEngineCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, sharedDecoderCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, sharedEncoderCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, sharedJpegCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, sharedOfaCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, gpuInstanceSliceCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, computeInstanceSliceCount);
ZEUS_CHECK_FIELD(nvmlDeviceAttributes_t, nvmlDeviceAttributes_t, memorySizeMB);
#undef ZEUS_CHECK_FIELD

}  // namespace
