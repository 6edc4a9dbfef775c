// Scripting the fake libnvidia-ml.so.1 from tests and benchmarks.
//
// The fake (tests/fakes/nvml/fake_nvml.cc) is a shared library that the NVML
// backend loads through its ordinary dlopen path. FakeNvml opens the same file
// (fakes/common/fake_library.h) and calls its fakeNvml* control functions.
// Keep a FakeNvml alive for as long as you script the fake: it also keeps the
// library loaded, so state survives the backend's dlclose.
//
// Where the fake is:
//   - test_device_nvml gets ZEUS_FAKE_NVML_PATH / ZEUS_FAKE_NVML_OLD_PATH as
//     compile definitions ($<TARGET_FILE:...>);
//   - any other target can use the fixed path
//     <build dir>/tests/fakes/nvml/libnvidia-ml.so.1 (old-driver variant:
//     <build dir>/tests/fakes/nvml/old/libnvidia-ml.so.1); with ZEUS_BINARY_DIR
//     defined (tests and benchmarks have it) fake_nvml_path() builds it; the
//     global CMake property ZEUS_FAKE_NVML_PATH holds the generator expression.
//   Such targets must add_dependencies(<target> fake_nvml) so the fake is built
//   (it exists only when tests are built: ZEUS_BUILD_TESTS=ON).
//
// Point the backend at it with NvmlOptions::library_path = fake.path() (or
// $ZEUS_NVML_LIBRARY). Always pass the full path: a bare "libnvidia-ml.so.1"
// would match the already-loaded fake by its soname.
//
// Defaults after reset(): 2 GPUs "NVIDIA H100 80GB HBM3" (Hopper), UUIDs
// GPU-1a2b3c4d-5e6f-4a1b-8c2d-00000000000<i>, energy (i+1)*1e6 mJ, instant
// 120 W / average 110 W / memory 25 W, module scope NOT_SUPPORTED, power limit
// range [200, 700] W with default and current 700 W, persistence off, memory
// clocks {2619, 1593} MHz (328 graphics clocks at 2619), 45 °C, nvml not
// initialized, driver "550.54.15", NVML "12.550.54.15"; telemetry: utilization
// 73 % GPU / 41 % memory, SM 1980 MHz, memory 2619 MHz, clock event reasons
// 0x4 (sw power cap), memory 1 GiB used of 85520809984 bytes (81559 MiB),
// minor number = index. Utilization answers NOT_SUPPORTED while MIG is on.
// Any call can be made NOT_SUPPORTED with fail_always(name, kNotSupported).
//
// Who runs on a GPU (all empty after reset()):
//   - per-process utilization samples (add_process_sample): a buffer of the
//     newest 128 per GPU, as the driver keeps a short one;
//     nvmlDeviceGetProcessUtilization answers the samples with a timestamp
//     greater than lastSeenTimeStamp, NOT_FOUND when there is none, and
//     INSUFFICIENT_SIZE with the count needed for a null or small buffer;
//     NOT_SUPPORTED while MIG is on. Samples do not depend on the running
//     processes: a process that exited keeps its samples.
//   - accounting: mode off by default (set_accounting_mode; -1: the GPU cannot
//     do accounting); the pid list and the stats answer NOT_SUPPORTED while it
//     is off. add_accounting_stats records a process; add_accounting_pid lists
//     one whose stats are gone (nvmlDeviceGetAccountingStats: NOT_FOUND).
//   - running compute processes (add_compute_process), _v3 and _v2 alike;
//     used_bytes ~0ULL is NVML_VALUE_NOT_AVAILABLE.
//   - MIG (with set_mig_mode(i, 1)): 7 slots per GPU; add_mig_device fills one
//     with a GPU instance id, a UUID and an SM count, add_mig_process puts a
//     process in it. Empty slots answer NOT_FOUND. The MIG handles answer
//     nvmlDeviceGetUUID, GetGpuInstanceId, GetAttributes_v2 and the compute
//     processes, and GPU_IS_LOST once their GPU is lost. The parent's
//     nvmlDeviceGetAttributes_v2 answers NOT_SUPPORTED, as real drivers do,
//     until set_sm_count gives it an SM count.
//   The old-driver variant has none of these entry points (the scripting
//   works, nothing reads it).
//
// $ZEUS_FAKE_NVML_JOURNAL: when set, successful power-limit, persistence and
// locked-clock setter and reset calls (the value: the maximum MHz, 0 for a
// reset) are appended to that file, so a test can check what a process
// set (and restored) after it has exited or been killed.
//
// $ZEUS_FAKE_NVML_SCRIPT: when set, the GPUs' use comes from that file, for
// a test that drives another process (zeusd) which loaded the fake: no
// FakeNvml can reach that process's state. The fake re-reads the file at
// every call (write it whole and rename it into place), and first advances
// every GPU from its last call to now by what the file said until then:
//   power <gpu> <idle W> <busy W>       the GPU draws idle + (busy - idle) x
//                                       min(100, sum of its processes' SM %)/100;
//                                       its energy counter advances by that
//                                       (a GPU without the line: unchanged)
//   process <gpu> <pid> <SM %> [<mem %>] a running process: a per-process
//                                       sample every 1/6 s (the driver's
//                                       period, on a wall-clock grid) and an
//                                       entry in the compute processes (1 GiB)
// '#' starts a comment line; a missing file is an idle node. Scripted
// samples join the buffer of add_process_sample; the rest of the state is
// scripted as above. Unset (the default), none of this happens.
//
// Thread-safety: the fake's functions are thread-safe; FakeNvml itself is
// immutable after construction.
#pragma once

#include <string>
#include <utility>

#include "../common/fake_library.h"

namespace zeus::testing {

// nvmlReturn_t values, for scripting failures.
namespace nvml_rc {
inline constexpr int kSuccess = 0;
inline constexpr int kUninitialized = 1;
inline constexpr int kInvalidArgument = 2;
inline constexpr int kNotSupported = 3;
inline constexpr int kNoPermission = 4;
inline constexpr int kNotFound = 6;
inline constexpr int kInsufficientSize = 7;
inline constexpr int kDriverNotLoaded = 9;
inline constexpr int kTimeout = 10;
inline constexpr int kLibraryNotFound = 12;
inline constexpr int kGpuIsLost = 15;
inline constexpr int kResetRequired = 16;
inline constexpr int kLibRmVersionMismatch = 18;
inline constexpr int kUnknown = 999;
}  // namespace nvml_rc

// NVML architecture numbers.
namespace nvml_arch {
inline constexpr unsigned kPascal = 4;
inline constexpr unsigned kVolta = 5;
inline constexpr unsigned kAmpere = 7;
inline constexpr unsigned kHopper = 9;
inline constexpr unsigned kUnknown = 0xffffffffU;
}  // namespace nvml_arch

inline std::string fake_nvml_path() {
#if defined(ZEUS_FAKE_NVML_PATH)
  return ZEUS_FAKE_NVML_PATH;
#elif defined(ZEUS_BINARY_DIR)
  return ZEUS_BINARY_DIR "/tests/fakes/nvml/libnvidia-ml.so.1";
#else
  return "tests/fakes/nvml/libnvidia-ml.so.1";
#endif
}

// The variant that plays an old driver (optional entry points missing).
inline std::string fake_nvml_old_path() {
#if defined(ZEUS_FAKE_NVML_OLD_PATH)
  return ZEUS_FAKE_NVML_OLD_PATH;
#elif defined(ZEUS_BINARY_DIR)
  return ZEUS_BINARY_DIR "/tests/fakes/nvml/old/libnvidia-ml.so.1";
#else
  return "tests/fakes/nvml/old/libnvidia-ml.so.1";
#endif
}

class FakeNvml {
 public:
  explicit FakeNvml(std::string path = fake_nvml_path())
      : library_(std::move(path), "fake NVML", "build the fake_nvml target") {}

  const std::string& path() const { return library_.path(); }

  // Back to the defaults above; also forgets init references, call counts and
  // scripted failures. Call it in SetUp, with no backend GPU alive.
  void reset() const { call<void (*)()>("fakeNvmlReset")(); }
  // At most 16. Returns false when too many.
  bool set_device_count(unsigned n) const {
    return call<int (*)(unsigned)>("fakeNvmlSetDeviceCount")(n) == 0;
  }
  void set_name(unsigned i, const std::string& name) const {
    call<void (*)(unsigned, const char*)>("fakeNvmlSetName")(i, name.c_str());
  }
  void set_uuid(unsigned i, const std::string& uuid) const {
    call<void (*)(unsigned, const char*)>("fakeNvmlSetUuid")(i, uuid.c_str());
  }
  // Before Volta the energy counter reports NOT_SUPPORTED, as on real GPUs.
  void set_architecture(unsigned i, unsigned arch) const {
    call<void (*)(unsigned, unsigned)>("fakeNvmlSetArchitecture")(i, arch);
  }
  void set_energy_mj(unsigned i, unsigned long long mj) const {
    call<void (*)(unsigned, unsigned long long)>("fakeNvmlSetEnergy")(i, mj);
  }
  void advance_energy_mj(unsigned i, unsigned long long mj) const {
    call<void (*)(unsigned, unsigned long long)>("fakeNvmlAdvanceEnergy")(i, mj);
  }
  // GPU-scope instant (field 186) and average (185) power, memory-scope 185.
  void set_power_mw(unsigned i, unsigned instant, unsigned average, unsigned memory) const {
    call<void (*)(unsigned, unsigned, unsigned, unsigned)>("fakeNvmlSetPower")(i, instant, average,
                                                                               memory);
  }
  // One field value (or per-entry error `result`) for (field id, scope).
  void set_field(unsigned i, unsigned field, unsigned scope, int result, unsigned value) const {
    call<void (*)(unsigned, unsigned, unsigned, int, unsigned)>("fakeNvmlSetField")(i, field, scope,
                                                                                    result, value);
  }
  // Grace Hopper: GPU scope NOT_SUPPORTED, module scope readable.
  void set_module_scope_only(unsigned i, unsigned instant_mw, unsigned average_mw) const {
    call<void (*)(unsigned, unsigned, unsigned)>("fakeNvmlSetModuleScopeOnly")(i, instant_mw,
                                                                               average_mw);
  }
  // A driver older than R535: no power fields; nvmlDeviceGetPowerUsage still works.
  void set_no_power_fields(unsigned i) const {
    call<void (*)(unsigned)>("fakeNvmlSetNoPowerFields")(i);
  }
  void set_power_limits(unsigned i, unsigned min_mw, unsigned max_mw, unsigned default_mw,
                        unsigned current_mw) const {
    call<void (*)(unsigned, unsigned, unsigned, unsigned, unsigned)>("fakeNvmlSetPowerLimits")(
        i, min_mw, max_mw, default_mw, current_mw);
  }
  unsigned power_limit_mw(unsigned i) const {
    return call<unsigned (*)(unsigned)>("fakeNvmlGetPowerLimit")(i);
  }
  void set_persistence(unsigned i, bool on) const {
    call<void (*)(unsigned, int)>("fakeNvmlSetPersistence")(i, on ? 1 : 0);
  }
  bool persistence(unsigned i) const {
    return call<int (*)(unsigned)>("fakeNvmlGetPersistence")(i) == 1;
  }
  void clear_supported_clocks(unsigned i) const {
    call<void (*)(unsigned)>("fakeNvmlClearSupportedClocks")(i);
  }
  void add_supported_clocks(unsigned i, unsigned memory_mhz, const unsigned* graphics,
                            unsigned count) const {
    call<void (*)(unsigned, unsigned, const unsigned*, unsigned)>("fakeNvmlAddSupportedClocks")(
        i, memory_mhz, graphics, count);
  }
  // Returns whether the clock domain is locked; fills the range last set.
  bool locked_clocks(unsigned i, bool memory, unsigned& min_mhz, unsigned& max_mhz) const {
    return call<int (*)(unsigned, int, unsigned*, unsigned*)>("fakeNvmlGetLockedClocks")(
               i, memory ? 1 : 0, &min_mhz, &max_mhz) == 1;
  }
  void set_temperature(unsigned i, int celsius) const {
    call<void (*)(unsigned, int)>("fakeNvmlSetTemperature")(i, celsius);
  }
  void set_telemetry(unsigned i, unsigned util_gpu, unsigned util_memory, unsigned sm_mhz,
                     unsigned mem_mhz, unsigned long long clock_event_reasons,
                     unsigned long long memory_used, unsigned long long memory_total) const {
    call<void (*)(unsigned, unsigned, unsigned, unsigned, unsigned, unsigned long long,
                  unsigned long long, unsigned long long)>("fakeNvmlSetTelemetry")(
        i, util_gpu, util_memory, sm_mhz, mem_mhz, clock_event_reasons, memory_used, memory_total);
  }
  void set_minor_number(unsigned i, unsigned minor) const {
    call<void (*)(unsigned, unsigned)>("fakeNvmlSetMinorNumber")(i, minor);
  }
  // -1: the GPU cannot do MIG (the default); 0: MIG off; 1: MIG on.
  void set_mig_mode(unsigned i, int mode) const {
    call<void (*)(unsigned, int)>("fakeNvmlSetMigMode")(i, mode);
  }
  // Who runs on the GPU (see the top).
  void add_process_sample(unsigned i, unsigned pid, unsigned long long timestamp_us, unsigned sm,
                          unsigned mem) const {
    call<void (*)(unsigned, unsigned, unsigned long long, unsigned, unsigned)>(
        "fakeNvmlAddProcessSample")(i, pid, timestamp_us, sm, mem);
  }
  // -1: accounting not supported; 0: off (the default); 1: on.
  void set_accounting_mode(unsigned i, int mode) const {
    call<void (*)(unsigned, int)>("fakeNvmlSetAccountingMode")(i, mode);
  }
  void add_accounting_stats(unsigned i, unsigned pid, unsigned gpu_percent, unsigned memory_percent,
                            unsigned long long max_memory_bytes, unsigned long long time_ms,
                            unsigned long long start_time_us, bool running) const {
    call<void (*)(unsigned, unsigned, unsigned, unsigned, unsigned long long, unsigned long long,
                  unsigned long long, int)>("fakeNvmlAddAccountingStats")(
        i, pid, gpu_percent, memory_percent, max_memory_bytes, time_ms, start_time_us,
        running ? 1 : 0);
  }
  // Listed by nvmlDeviceGetAccountingPids, but its stats are NOT_FOUND.
  void add_accounting_pid(unsigned i, unsigned pid) const {
    call<void (*)(unsigned, unsigned)>("fakeNvmlAddAccountingPid")(i, pid);
  }
  void add_compute_process(unsigned i, unsigned pid, unsigned long long used_bytes) const {
    call<void (*)(unsigned, unsigned, unsigned long long)>("fakeNvmlAddComputeProcess")(i, pid,
                                                                                        used_bytes);
  }
  // The parent GPU's SMs in nvmlDeviceGetAttributes_v2 (0: NOT_SUPPORTED, the default).
  void set_sm_count(unsigned i, unsigned sms) const {
    call<void (*)(unsigned, unsigned)>("fakeNvmlSetSmCount")(i, sms);
  }
  // Slot 0-6 of GPU i. Returns false for a bad slot.
  bool add_mig_device(unsigned i, unsigned slot, unsigned gpu_instance_id, const std::string& uuid,
                      unsigned sms) const {
    return call<int (*)(unsigned, unsigned, unsigned, const char*, unsigned)>(
               "fakeNvmlAddMigDevice")(i, slot, gpu_instance_id, uuid.c_str(), sms) == 0;
  }
  // Returns false when the slot holds no MIG device.
  bool add_mig_process(unsigned i, unsigned slot, unsigned pid,
                       unsigned long long used_bytes) const {
    return call<int (*)(unsigned, unsigned, unsigned, unsigned long long)>("fakeNvmlAddMigProcess")(
               i, slot, pid, used_bytes) == 0;
  }
  // A lost GPU answers GPU_IS_LOST to every call.
  void set_lost(unsigned i, bool lost) const {
    call<void (*)(unsigned, int)>("fakeNvmlSetLost")(i, lost ? 1 : 0);
  }
  // Setters answer NO_PERMISSION, as for a non-root user.
  void set_permission_denied(bool denied) const {
    call<void (*)(int)>("fakeNvmlSetPermissionDenied")(denied ? 1 : 0);
  }
  // The next call to `function` (exported NVML name) returns `result`.
  void fail_next(const std::string& function, int result) const {
    call<void (*)(const char*, int)>("fakeNvmlFailNext")(function.c_str(), result);
  }
  // Every call to `function` returns `result` until cleared with 0.
  void fail_always(const std::string& function, int result) const {
    call<void (*)(const char*, int)>("fakeNvmlFailAlways")(function.c_str(), result);
  }
  // Every call to `function` sleeps `microseconds` first (0: none).
  void set_call_delay(const std::string& function, unsigned microseconds) const {
    call<void (*)(const char*, unsigned)>("fakeNvmlSetCallDelay")(function.c_str(), microseconds);
  }
  unsigned call_count(const std::string& function) const {
    return call<unsigned (*)(const char*)>("fakeNvmlCallCount")(function.c_str());
  }
  // nvmlInit_v2 calls not yet matched by nvmlShutdown.
  int init_ref_count() const { return call<int (*)()>("fakeNvmlInitRefCount")(); }
  void set_driver_version(const std::string& v) const {
    call<void (*)(const char*)>("fakeNvmlSetDriverVersion")(v.c_str());
  }

 private:
  template <class Fn>
  Fn call(const char* symbol) const {
    return library_.function<Fn>(symbol);
  }

  FakeLibrary library_;
};

}  // namespace zeus::testing
