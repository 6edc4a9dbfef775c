// A fake libnvidia-ml.so.1 for tests and benchmarks. It exports the subset of
// the NVML C ABI that zeus's NVML backend uses, with the contracts of the real
// library (UNINITIALIZED before nvmlInit_v2, reference-counted init,
// INSUFFICIENT_SIZE with the needed count, struct version checks, per-entry
// field-value results, NO_PERMISSION for setters without privileges,
// GPU_IS_LOST once a device is gone), plus fakeNvml* control functions that
// script its state. Declared here independently of the backend's own ABI
// header, the way a vendor library would be, so a mismatch shows up in tests.
//
// Thread-safe: one mutex guards all state, as NVML is documented thread-safe.
// Build with FAKE_NVML_OLD_DRIVER=1 for an old driver that lacks the optional
// entry points listed in CMakeLists.txt.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../common/call_script.h"

namespace {

constexpr int NVML_SUCCESS = 0;
constexpr int NVML_ERROR_UNINITIALIZED = 1;
constexpr int NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr int NVML_ERROR_NOT_SUPPORTED = 3;
constexpr int NVML_ERROR_NO_PERMISSION = 4;
constexpr int NVML_ERROR_NOT_FOUND = 6;
constexpr int NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr int NVML_ERROR_GPU_IS_LOST = 15;
// [[maybe_unused]]: the old-driver variant (FAKE_NVML_OLD_DRIVER) does not use it.
[[maybe_unused]] constexpr int NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;

constexpr unsigned NVML_DEVICE_ARCH_VOLTA = 5;
[[maybe_unused]] constexpr unsigned NVML_DEVICE_ARCH_AMPERE = 7;  // not in the old-driver variant
constexpr unsigned NVML_DEVICE_ARCH_HOPPER = 9;
constexpr unsigned NVML_DEVICE_ARCH_UNKNOWN = 0xffffffffU;

constexpr unsigned NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83;
constexpr unsigned NVML_FI_DEV_POWER_AVERAGE = 185;
constexpr unsigned NVML_FI_DEV_POWER_INSTANT = 186;
constexpr unsigned NVML_POWER_SCOPE_GPU = 0;
constexpr unsigned NVML_POWER_SCOPE_MODULE = 1;
constexpr unsigned NVML_POWER_SCOPE_MEMORY = 2;
constexpr int NVML_VALUE_TYPE_UNSIGNED_INT = 1;
constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;

constexpr unsigned kMaxDevices = 16;

bool has_energy_counter(unsigned arch) {
  return arch == NVML_DEVICE_ARCH_UNKNOWN || arch >= NVML_DEVICE_ARCH_VOLTA;
}

struct FieldSlot {
  int result = NVML_SUCCESS;
  unsigned value_mw = 0;
};

// The driver keeps a short buffer of per-process samples; the oldest go first.
constexpr std::size_t kMaxProcessSamples = 128;
constexpr unsigned kMaxMigDevices = 7;  // A100/H100: seven GPU instances at most

struct ProcessSample {
  unsigned pid = 0;
  unsigned long long timestamp_us = 0;
  unsigned sm = 0;
  unsigned mem = 0;
};

struct AccountingEntry {
  unsigned pid = 0;
  bool has_stats = true;  // false: listed, but its stats are gone (NOT_FOUND)
  unsigned gpu = 0;
  unsigned mem = 0;
  unsigned long long max_memory = 0;
  unsigned long long time_ms = 0;
  unsigned long long start_us = 0;
  unsigned running = 0;
};

struct ComputeProcess {
  unsigned pid = 0;
  unsigned long long used_bytes = 0;
};

struct ScriptedProcess {
  unsigned pid = 0;
  unsigned sm = 0;   // %
  unsigned mem = 0;  // %
};

}  // namespace

extern "C" {

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  int nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct {
  unsigned int version;
  int sensorType;
  int temperature;
} nvmlTemperature_t;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct nvmlAccountingStats_st {
  unsigned int gpuUtilization;
  unsigned int memoryUtilization;
  unsigned long long maxMemoryUsage;
  unsigned long long time;
  unsigned long long startTime;
  unsigned int isRunning;
  unsigned int reserved[5];
} nvmlAccountingStats_t;

// What _v2 and (on current drivers) _v3 write.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct nvmlDeviceAttributes_st {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

static_assert(sizeof(nvmlFieldValue_t) == 40, "NVML ABI");
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "NVML ABI");
static_assert(sizeof(nvmlAccountingStats_t) == 56, "NVML ABI");
static_assert(sizeof(nvmlProcessInfo_t) == 24, "NVML ABI");
static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "NVML ABI");
static_assert(sizeof(nvmlPciInfo_t) == 68, "NVML ABI");
static_assert(sizeof(nvmlTemperature_t) == 12, "NVML ABI");

// The device handle NVML hands out points at the device's state.
struct nvmlDevice_st {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  unsigned arch = NVML_DEVICE_ARCH_HOPPER;
  unsigned long long energy_mj = 0;
  std::map<std::pair<unsigned, unsigned>, FieldSlot> fields;  // (field id, scope)
  unsigned limit_min_mw = 0;
  unsigned limit_max_mw = 0;
  unsigned limit_default_mw = 0;
  unsigned limit_mw = 0;
  int persistence = 0;
  std::vector<std::pair<unsigned, std::vector<unsigned>>> clocks;  // memory -> graphics
  bool gpu_locked = false;
  unsigned gpu_locked_min = 0;
  unsigned gpu_locked_max = 0;
  bool mem_locked = false;
  unsigned mem_locked_min = 0;
  unsigned mem_locked_max = 0;
  int temperature_c = 45;
  int mig_mode = -1;     // -1: not MIG-capable (NOT_SUPPORTED); 0/1: disabled/enabled
  unsigned pci_bus = 0;  // domain 0, device 0, function 0
  bool lost = false;
  unsigned power_usage_mw = 120000;  // nvmlDeviceGetPowerUsage (board power)
  // Telemetry (fakeNvmlSetTelemetry).
  unsigned util_gpu = 73;
  unsigned util_memory = 41;
  unsigned sm_clock_mhz = 1980;
  unsigned mem_clock_mhz = 2619;
  unsigned long long clocks_event_reasons = 0x4;     // sw power cap
  unsigned long long memory_total = 85520809984ULL;  // 81559 MiB, an H100 80GB
  unsigned long long memory_used = 1073741824ULL;    // 1 GiB
  unsigned minor_number = 0;                         // /dev/nvidia<minor>
  // Who runs on it (fakeNvmlAddProcessSample and the rest).
  std::deque<ProcessSample> samples;  // oldest first, at most kMaxProcessSamples
  int accounting_mode = 0;            // -1: unsupported; 0/1: off/on
  std::vector<AccountingEntry> accounting;
  std::vector<ComputeProcess> processes;
  unsigned sm_count = 0;  // nvmlDeviceGetAttributes_v2; 0 on a parent: NOT_SUPPORTED
  // $ZEUS_FAKE_NVML_SCRIPT: the processes the script says run here, and the
  // power it gives the GPU (none: the energy counter stays where it is).
  std::vector<ScriptedProcess> scripted;
  bool scripted_power = false;
  double scripted_idle_w = 0;
  double scripted_busy_w = 0;
  double energy_carry_mj = 0;  // the fraction of a millijoule not yet on the counter
  // Set on MIG device handles only: the GPU they belong to, and their GPU instance.
  nvmlDevice_st* parent = nullptr;
  unsigned gpu_instance_id = 0;
};
typedef struct nvmlDevice_st* nvmlDevice_t;

}  // extern "C"

namespace {

[[maybe_unused]] const unsigned kVersionTemperatureV1 =  // not in the old-driver variant
    static_cast<unsigned>(sizeof(nvmlTemperature_t)) | (1U << 24U);

struct State {
  std::mutex mutex;
  int init_refcount = 0;
  unsigned count = 0;
  nvmlDevice_st devices[kMaxDevices];
  // MIG device handles: slot j of GPU i is mig[i][j], in use while its parent is set.
  nvmlDevice_st mig[kMaxDevices][kMaxMigDevices];
  zeus::testing::CallScript<int> script;  // counts, scripted failures, delays
  bool permission_denied = false;
  std::string driver_version;
  std::string nvml_version;
  long long script_last_us = 0;  // when the script last advanced the GPUs; 0: not yet
};

// Never destroyed: a process may call nvmlShutdown from its own static
// destructors (a device singleton released at exit), which can run after this
// library's; the real NVML keeps working then, so the fake must too.
State& state() {
  static State& s = *new State;
  return s;
}

void reset_device(nvmlDevice_st& d, unsigned i) {
  d = nvmlDevice_st{};
  d.index = i;
  d.name = "NVIDIA H100 80GB HBM3";
  char uuid[64];
  std::snprintf(uuid, sizeof(uuid), "GPU-1a2b3c4d-5e6f-4a1b-8c2d-%012x", i);
  d.uuid = uuid;
  d.arch = NVML_DEVICE_ARCH_HOPPER;
  d.minor_number = i;
  d.pci_bus = 0x18 + 0x20 * i;  // 00000000:18:00.0, 00000000:38:00.0, ...
  d.energy_mj = 1000000ULL * (i + 1);
  d.fields[{NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_GPU}] = {NVML_SUCCESS, 120000};
  d.fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_GPU}] = {NVML_SUCCESS, 110000};
  d.fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY}] = {NVML_SUCCESS, 25000};
  // Module scope exists only on NVIDIA CPUs (Grace); an x86 host says no.
  d.fields[{NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MODULE}] = {NVML_ERROR_NOT_SUPPORTED, 0};
  d.fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MODULE}] = {NVML_ERROR_NOT_SUPPORTED, 0};
  d.limit_min_mw = 200000;
  d.limit_max_mw = 700000;
  d.limit_default_mw = 700000;
  d.limit_mw = 700000;
  // 328 graphics clocks: more than a first guess of 128, so callers must resize.
  std::vector<unsigned> graphics;
  for (unsigned mhz = 1980; mhz >= 345; mhz -= 5) graphics.push_back(mhz);
  d.clocks.emplace_back(2619, graphics);
  d.clocks.emplace_back(1593, std::vector<unsigned>{1500, 1200, 900});
}

void reset_locked(State& s) {
  s.init_refcount = 0;
  s.count = 2;
  for (unsigned i = 0; i < kMaxDevices; ++i) {
    reset_device(s.devices[i], i);
    for (nvmlDevice_st& mig : s.mig[i]) mig = nvmlDevice_st{};
  }
  s.script.clear();
  s.permission_denied = false;
  s.driver_version = "550.54.15";
  s.nvml_version = "12.550.54.15";
  s.script_last_us = 0;
}

long long now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// $ZEUS_FAKE_NVML_SCRIPT (fake_nvml_control.h): the GPUs' use as a file that
// another process (a test driving zeusd, which loaded this library) rewrites.
// Re-read at every call; what it said holds until the call that reads a
// change, so the GPUs advance over (last call, this call] with the previous
// contents first.
constexpr long long kSamplePeriodUs = 166667;  // the driver samples every 1/6 s

void read_script(State& s, const char* path) {
  for (unsigned i = 0; i < s.count; ++i) {
    nvmlDevice_st& d = s.devices[i];
    d.scripted.clear();
    d.scripted_power = false;
  }
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return;  // no file yet: nothing runs, no GPU advances
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    char word[16] = {};
    unsigned gpu = 0;
    double a = 0;
    double b = 0;
    unsigned pid = 0;
    unsigned sm = 0;
    unsigned mem = 0;
    if (std::sscanf(line, "%15s", word) != 1 || word[0] == '#') continue;
    if (std::strcmp(word, "power") == 0 && std::sscanf(line, "%*s %u %lf %lf", &gpu, &a, &b) == 3 &&
        gpu < s.count) {
      nvmlDevice_st& d = s.devices[gpu];
      d.scripted_power = true;
      d.scripted_idle_w = a;
      d.scripted_busy_w = b;
    } else if (std::strcmp(word, "process") == 0 &&
               std::sscanf(line, "%*s %u %u %u %u", &gpu, &pid, &sm, &mem) >= 3 && gpu < s.count) {
      nvmlDevice_st& d = s.devices[gpu];
      d.scripted.push_back({pid, std::min(sm, 100U), std::min(mem, 100U)});
    }
  }
  std::fclose(f);
}

void advance_script(State& s) {
  const char* path = std::getenv("ZEUS_FAKE_NVML_SCRIPT");
  if (path == nullptr || *path == '\0') return;
  const long long now = now_us();
  if (s.script_last_us != 0 && now > s.script_last_us) {
    const long long last = s.script_last_us;
    for (unsigned i = 0; i < s.count; ++i) {
      nvmlDevice_st& d = s.devices[i];
      if (d.lost) continue;
      // Samples on the driver's grid in (last, now]; after a long silence
      // only what the buffer would still hold.
      long long t = (last / kSamplePeriodUs + 1) * kSamplePeriodUs;
      t = std::max(t, now - static_cast<long long>(kMaxProcessSamples) * kSamplePeriodUs);
      unsigned busy = 0;
      for (const ScriptedProcess& p : d.scripted) busy += p.sm;
      for (; t <= now; t += kSamplePeriodUs) {
        for (const ScriptedProcess& p : d.scripted) {
          if (d.samples.size() == kMaxProcessSamples) d.samples.pop_front();
          d.samples.push_back({p.pid, static_cast<unsigned long long>(t), p.sm, p.mem});
        }
      }
      if (d.scripted_power) {
        const double watts = d.scripted_idle_w + (d.scripted_busy_w - d.scripted_idle_w) *
                                                     static_cast<double>(std::min(busy, 100U)) /
                                                     100.0;
        d.energy_carry_mj += watts * static_cast<double>(now - last) / 1000.0;
        const auto whole = static_cast<unsigned long long>(d.energy_carry_mj);
        d.energy_mj += whole;
        d.energy_carry_mj -= static_cast<double>(whole);
      }
    }
  }
  s.script_last_us = now;
  read_script(s, path);
}

// Common prologue of every NVML entry point: count the call, apply scripted
// failures, refuse to work before nvmlInit_v2. Call with the mutex held.
int begin(State& s, const char* function, bool needs_init = true) {
  advance_script(s);
  if (const int rc = s.script.enter(function); rc != NVML_SUCCESS) return rc;
  if (needs_init && s.init_refcount == 0) return NVML_ERROR_UNINITIALIZED;
  return NVML_SUCCESS;
}

int check_device(State& s, nvmlDevice_t device) {
  if (device < s.devices || device >= s.devices + s.count) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->lost) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

int copy_string(const std::string& value, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

// Successful setter calls are appended to the file named by
// $ZEUS_FAKE_NVML_JOURNAL ("<function> <device index> <value>" per line, one
// write each), so a test can see what a process set even after it died.
void journal(const char* function, unsigned index, long long value) {
  const char* path = std::getenv("ZEUS_FAKE_NVML_JOURNAL");
  if (path == nullptr || *path == '\0') return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[160];
  const int n = std::snprintf(line, sizeof(line), "%s %u %lld\n", function, index, value);
  if (n > 0) (void)!::write(fd, line, static_cast<std::size_t>(n));
  ::close(fd);
}

// For the calls that also take a MIG device handle.
int check_device_or_mig(State& s, nvmlDevice_t device) {
  const nvmlDevice_st* first = &s.mig[0][0];
  const nvmlDevice_st* last = first + kMaxDevices * kMaxMigDevices;
  if (device < first || device >= last) return check_device(s, device);
  if (device->parent == nullptr) return NVML_ERROR_INVALID_ARGUMENT;  // a destroyed instance
  return device->parent->lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}

nvmlDevice_st* control_device(State& s, unsigned i) {
  return i < kMaxDevices ? &s.devices[i] : nullptr;
}

// Entry-point prologue: lock, count, inject, check init (and the device).
#define FAKE_NVML_BEGIN(name)                \
  State& s = state();                        \
  std::lock_guard<std::mutex> lock(s.mutex); \
  if (int rc_ = begin(s, name); rc_ != 0) {  \
    return rc_;                              \
  }
#define FAKE_NVML_BEGIN_DEVICE(name, device)         \
  FAKE_NVML_BEGIN(name)                              \
  if (int rc_ = check_device(s, device); rc_ != 0) { \
    return rc_;                                      \
  }
#define FAKE_NVML_BEGIN_DEVICE_OR_MIG(name, device)         \
  FAKE_NVML_BEGIN(name)                                     \
  if (int rc_ = check_device_or_mig(s, device); rc_ != 0) { \
    return rc_;                                             \
  }

struct Initializer {
  Initializer() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    reset_locked(s);
  }
};
const Initializer initializer;

}  // namespace

extern "C" {

// ---- NVML API ---------------------------------------------------------------

int nvmlInit_v2(void) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (int rc = begin(s, "nvmlInit_v2", false); rc != 0) return rc;
  s.init_refcount++;
  return NVML_SUCCESS;
}

int nvmlShutdown(void) {
  FAKE_NVML_BEGIN("nvmlShutdown")
  s.init_refcount--;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(int result) {
  switch (result) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 5:
      return "Already Initialized";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 8:
      return "Insufficient External Power";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 11:
      return "Interrupt request issue";
    case 12:
      return "NVML Shared Library Not Found";
    case 13:
      return "Function Not Found";
    case 14:
      return "Corrupted infoROM";
    case 15:
      return "GPU is lost";
    case 16:
      return "GPU requires restart";
    case 17:
      return "The operating system has blocked the request.";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    case 25:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  FAKE_NVML_BEGIN("nvmlSystemGetDriverVersion")
  return copy_string(s.driver_version, version, length);
}

#if !FAKE_NVML_OLD_DRIVER
int nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  FAKE_NVML_BEGIN("nvmlSystemGetNVMLVersion")
  return copy_string(s.nvml_version, version, length);
}
#endif

int nvmlDeviceGetCount_v2(unsigned* count) {
  FAKE_NVML_BEGIN("nvmlDeviceGetCount_v2")
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = s.count;
  return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  FAKE_NVML_BEGIN("nvmlDeviceGetHandleByIndex_v2")
  if (device == nullptr || index >= s.count) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.devices[index].lost) return NVML_ERROR_GPU_IS_LOST;
  *device = &s.devices[index];
  return NVML_SUCCESS;
}

#if !FAKE_NVML_OLD_DRIVER
int nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  FAKE_NVML_BEGIN("nvmlDeviceGetHandleByUUID")
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned i = 0; i < s.count; ++i) {
    if (s.devices[i].uuid == uuid) {  // exact match only, like NVML
      if (s.devices[i].lost) return NVML_ERROR_GPU_IS_LOST;
      *device = &s.devices[i];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

int nvmlDeviceGetIndex(nvmlDevice_t device, unsigned* index) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetIndex", device)
  if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *index = device->index;
  return NVML_SUCCESS;
}
#endif

int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetName", device)
  return copy_string(device->name, name, length);
}

int nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  FAKE_NVML_BEGIN_DEVICE_OR_MIG("nvmlDeviceGetUUID", device)
  return copy_string(device->uuid, uuid, length);
}

int nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetPciInfo_v3", device)
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  pci->bus = device->pci_bus;
  pci->pciDeviceId = 0x233010deU;  // H100 SXM5 80GB, NVIDIA's vendor id
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", device->pci_bus);
  std::snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", device->pci_bus);
  return NVML_SUCCESS;
}

int nvmlDeviceGetArchitecture(nvmlDevice_t device, unsigned* arch) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetArchitecture", device)
  if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *arch = device->arch;
  return NVML_SUCCESS;
}

int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetTotalEnergyConsumption", device)
  if (energy == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!has_energy_counter(device->arch)) return NVML_ERROR_NOT_SUPPORTED;
  *energy = device->energy_mj;
  return NVML_SUCCESS;
}

int nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetFieldValues", device)
  if (count <= 0 || values == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const long long now = now_us();
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.timestamp = now;
    v.latencyUsec = 0;
    if (v.fieldId == NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION) {
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v.nvmlReturn = has_energy_counter(device->arch) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
      v.value.ullVal = device->energy_mj;
      continue;
    }
    auto it = device->fields.find({v.fieldId, v.scopeId});
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (it == device->fields.end()) {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      v.value.uiVal = 0;
    } else {
      v.nvmlReturn = it->second.result;
      v.value.uiVal = it->second.result == NVML_SUCCESS ? it->second.value_mw : 0;
    }
  }
  return NVML_SUCCESS;  // per-entry results carry the failures
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* power) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetPowerUsage", device)
  if (power == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *power = device->power_usage_mw;
  return NVML_SUCCESS;
}

int nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned* limit) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetPowerManagementLimit", device)
  if (limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = device->limit_mw;
  return NVML_SUCCESS;
}

int nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned* limit) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetPowerManagementDefaultLimit", device)
  if (limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = device->limit_default_mw;
  return NVML_SUCCESS;
}

int nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned* min_limit,
                                                 unsigned* max_limit) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetPowerManagementLimitConstraints", device)
  if (min_limit == nullptr || max_limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *min_limit = device->limit_min_mw;
  *max_limit = device->limit_max_mw;
  return NVML_SUCCESS;
}

int nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned limit) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceSetPowerManagementLimit", device)
  if (s.permission_denied) return NVML_ERROR_NO_PERMISSION;
  if (limit < device->limit_min_mw || limit > device->limit_max_mw) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  device->limit_mw = limit;
  journal("nvmlDeviceSetPowerManagementLimit", device->index, limit);
  return NVML_SUCCESS;
}

int nvmlDeviceGetPersistenceMode(nvmlDevice_t device, int* mode) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetPersistenceMode", device)
  if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = device->persistence;
  return NVML_SUCCESS;
}

int nvmlDeviceSetPersistenceMode(nvmlDevice_t device, int mode) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceSetPersistenceMode", device)
  if (s.permission_denied) return NVML_ERROR_NO_PERMISSION;
  if (mode != 0 && mode != 1) return NVML_ERROR_INVALID_ARGUMENT;
  device->persistence = mode;
  journal("nvmlDeviceSetPersistenceMode", device->index, mode);
  return NVML_SUCCESS;
}

namespace {
int copy_list(const std::vector<unsigned>& list, unsigned* count, unsigned* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned needed = static_cast<unsigned>(list.size());
  if (*count < needed || out == nullptr) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(list.begin(), list.end(), out);
  *count = needed;
  return NVML_SUCCESS;
}
}  // namespace

int nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned* count, unsigned* clocks) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetSupportedMemoryClocks", device)
  std::vector<unsigned> memory;
  for (const auto& entry : device->clocks) memory.push_back(entry.first);
  return copy_list(memory, count, clocks);
}

int nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned memory_mhz, unsigned* count,
                                         unsigned* clocks) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetSupportedGraphicsClocks", device)
  for (const auto& entry : device->clocks) {
    if (entry.first == memory_mhz) return copy_list(entry.second, count, clocks);
  }
  return NVML_ERROR_NOT_FOUND;
}

int nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceSetGpuLockedClocks", device)
  if (device->arch < NVML_DEVICE_ARCH_VOLTA) return NVML_ERROR_NOT_SUPPORTED;
  if (s.permission_denied) return NVML_ERROR_NO_PERMISSION;
  if (min_mhz > max_mhz) return NVML_ERROR_INVALID_ARGUMENT;
  device->gpu_locked = true;
  device->gpu_locked_min = min_mhz;
  device->gpu_locked_max = max_mhz;
  journal("nvmlDeviceSetGpuLockedClocks", device->index, max_mhz);
  return NVML_SUCCESS;
}

int nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceResetGpuLockedClocks", device)
  if (device->arch < NVML_DEVICE_ARCH_VOLTA) return NVML_ERROR_NOT_SUPPORTED;
  if (s.permission_denied) return NVML_ERROR_NO_PERMISSION;
  device->gpu_locked = false;
  journal("nvmlDeviceResetGpuLockedClocks", device->index, 0);
  return NVML_SUCCESS;
}

#if !FAKE_NVML_OLD_DRIVER
int nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceSetMemoryLockedClocks", device)
  if (device->arch < NVML_DEVICE_ARCH_AMPERE) return NVML_ERROR_NOT_SUPPORTED;
  if (s.permission_denied) return NVML_ERROR_NO_PERMISSION;
  if (min_mhz > max_mhz) return NVML_ERROR_INVALID_ARGUMENT;
  device->mem_locked = true;
  device->mem_locked_min = min_mhz;
  device->mem_locked_max = max_mhz;
  journal("nvmlDeviceSetMemoryLockedClocks", device->index, max_mhz);
  return NVML_SUCCESS;
}

int nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceResetMemoryLockedClocks", device)
  if (device->arch < NVML_DEVICE_ARCH_AMPERE) return NVML_ERROR_NOT_SUPPORTED;
  if (s.permission_denied) return NVML_ERROR_NO_PERMISSION;
  device->mem_locked = false;
  journal("nvmlDeviceResetMemoryLockedClocks", device->index, 0);
  return NVML_SUCCESS;
}
#endif

int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned* temperature) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetTemperature", device)
  if (sensor != 0 || temperature == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *temperature = static_cast<unsigned>(std::max(device->temperature_c, 0));
  return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetUtilizationRates", device)
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // As on real GPUs: no utilization for a GPU split into MIG instances.
  if (device->mig_mode == 1) return NVML_ERROR_NOT_SUPPORTED;
  utilization->gpu = device->util_gpu;
  utilization->memory = device->util_memory;
  return NVML_SUCCESS;
}

int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned* clock) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetClockInfo", device)
  if (clock == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  switch (type) {
    case 0:  // graphics: the same domain as SM on these GPUs
    case 1:  // SM
      *clock = device->sm_clock_mhz;
      return NVML_SUCCESS;
    case 2:  // memory
      *clock = device->mem_clock_mhz;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetCurrentClocksThrottleReasons", device)
  if (reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *reasons = device->clocks_event_reasons;
  return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetMemoryInfo", device)
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  memory->total = device->memory_total;
  memory->used = std::min(device->memory_used, device->memory_total);
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

int nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned* minor) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetMinorNumber", device)
  if (minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *minor = device->minor_number;
  return NVML_SUCCESS;
}

#if !FAKE_NVML_OLD_DRIVER
// The R535 name of nvmlDeviceGetCurrentClocksThrottleReasons; older drivers
// (the old fake) export only the former.
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetCurrentClocksEventReasons", device)
  if (reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *reasons = device->clocks_event_reasons;
  return NVML_SUCCESS;
}

int nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetMigMode", device)
  if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->mig_mode < 0) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = static_cast<unsigned>(device->mig_mode);
  return NVML_SUCCESS;
}

int nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetTemperatureV", device)
  if (temperature == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (temperature->version != kVersionTemperatureV1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (temperature->sensorType != 0) return NVML_ERROR_INVALID_ARGUMENT;
  temperature->temperature = device->temperature_c;
  return NVML_SUCCESS;
}

// ---- Who runs on the GPU ----------------------------------------------------

}  // extern "C" (templates cannot have C linkage)

namespace {

constexpr unsigned kNoInstance = 0xFFFFFFFFU;  // gpuInstanceId/computeInstanceId without MIG

// The count protocol of the list calls: SUCCESS and 0 for an empty list,
// INSUFFICIENT_SIZE with the count needed for a missing or small buffer.
template <class T>
int copy_entries(const std::vector<T>& list, unsigned* count, T* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned needed = static_cast<unsigned>(list.size());
  if (needed > 0 && (*count < needed || out == nullptr)) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(list.begin(), list.end(), out);
  *count = needed;
  return NVML_SUCCESS;
}

int compute_processes(nvmlDevice_t device, unsigned* count, nvmlProcessInfo_t* infos) {
  const bool mig = device->parent != nullptr;
  std::vector<nvmlProcessInfo_t> list;
  for (const ComputeProcess& p : device->processes) {
    list.push_back(
        {p.pid, p.used_bytes, mig ? device->gpu_instance_id : kNoInstance, mig ? 0U : kNoInstance});
  }
  for (const ScriptedProcess& p : device->scripted) {
    list.push_back({p.pid, 1ULL << 30U, kNoInstance, kNoInstance});  // 1 GiB each
  }
  return copy_entries(list, count, infos);
}

}  // namespace

extern "C" {

int nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* samples,
                                    unsigned* count, unsigned long long last_seen_us) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetProcessUtilization", device)
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->mig_mode == 1) return NVML_ERROR_NOT_SUPPORTED;  // as documented for MIG
  std::vector<nvmlProcessUtilizationSample_t> newer;
  for (const ProcessSample& x : device->samples) {
    if (x.timestamp_us > last_seen_us) newer.push_back({x.pid, x.timestamp_us, x.sm, x.mem, 0, 0});
  }
  if (newer.empty()) return NVML_ERROR_NOT_FOUND;
  return copy_entries(newer, count, samples);
}

int nvmlDeviceGetAccountingMode(nvmlDevice_t device, int* mode) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetAccountingMode", device)
  if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->accounting_mode < 0) return NVML_ERROR_NOT_SUPPORTED;
  *mode = device->accounting_mode;
  return NVML_SUCCESS;
}

int nvmlDeviceGetAccountingPids(nvmlDevice_t device, unsigned* count, unsigned* pids) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetAccountingPids", device)
  if (device->accounting_mode != 1) return NVML_ERROR_NOT_SUPPORTED;  // also while off
  std::vector<unsigned> list;
  for (const AccountingEntry& e : device->accounting) list.push_back(e.pid);
  return copy_entries(list, count, pids);
}

int nvmlDeviceGetAccountingStats(nvmlDevice_t device, unsigned pid, nvmlAccountingStats_t* stats) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetAccountingStats", device)
  if (stats == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->accounting_mode != 1) return NVML_ERROR_NOT_SUPPORTED;
  for (const AccountingEntry& e : device->accounting) {
    if (e.pid != pid || !e.has_stats) continue;
    *stats = nvmlAccountingStats_t{};
    stats->gpuUtilization = e.gpu;
    stats->memoryUtilization = e.mem;
    stats->maxMemoryUsage = e.max_memory;
    stats->time = e.time_ms;
    stats->startTime = e.start_us;
    stats->isRunning = e.running;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                            nvmlProcessInfo_t* infos) {
  FAKE_NVML_BEGIN_DEVICE_OR_MIG("nvmlDeviceGetComputeRunningProcesses_v3", device)
  return compute_processes(device, count, infos);
}

int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* count,
                                            nvmlProcessInfo_t* infos) {
  FAKE_NVML_BEGIN_DEVICE_OR_MIG("nvmlDeviceGetComputeRunningProcesses_v2", device)
  return compute_processes(device, count, infos);
}

int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetMaxMigDeviceCount", device)
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = device->mig_mode == 1 ? kMaxMigDevices : 0;  // "zero if MIG is not ... enabled"
  return NVML_SUCCESS;
}

int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index, nvmlDevice_t* mig) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetMigDeviceHandleByIndex", device)
  if (mig == nullptr || index >= kMaxMigDevices) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->mig_mode != 1) return NVML_ERROR_NOT_SUPPORTED;
  nvmlDevice_st& slot = s.mig[device->index][index];
  if (slot.parent == nullptr) return NVML_ERROR_NOT_FOUND;
  *mig = &slot;
  return NVML_SUCCESS;
}

int nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned* id) {
  FAKE_NVML_BEGIN_DEVICE_OR_MIG("nvmlDeviceGetGpuInstanceId", device)
  if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->parent == nullptr) return NVML_ERROR_NOT_SUPPORTED;  // not a MIG handle
  *id = device->gpu_instance_id;
  return NVML_SUCCESS;
}

int nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  FAKE_NVML_BEGIN_DEVICE_OR_MIG("nvmlDeviceGetAttributes_v2", device)
  if (attributes == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // Documented for MIG handles only; a parent answers only when scripted.
  if (device->sm_count == 0) return NVML_ERROR_NOT_SUPPORTED;
  *attributes = nvmlDeviceAttributes_t{};
  attributes->multiprocessorCount = device->sm_count;
  return NVML_SUCCESS;
}

// Exported like a current driver's (the backend only looks for them, to
// tell which entry size _v3 writes); their arguments are not modelled.
int nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device, void* /*info*/) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetConfComputeMemSizeInfo", device)
  return NVML_ERROR_NOT_SUPPORTED;
}

int nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, void* /*list*/) {
  FAKE_NVML_BEGIN_DEVICE("nvmlDeviceGetRunningProcessDetailList", device)
  return NVML_ERROR_NOT_SUPPORTED;
}
#endif

// ---- Control API (see fake_nvml_control.h) ----------------------------------

// Control prologue: lock, find device i, return `fallback` when i is out of range.
#define FAKE_NVML_CONTROL(i, fallback)       \
  State& s = state();                        \
  std::lock_guard<std::mutex> lock(s.mutex); \
  nvmlDevice_st* d = control_device(s, i);   \
  if (d == nullptr) return fallback

void fakeNvmlReset(void) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  reset_locked(s);
}

int fakeNvmlSetDeviceCount(unsigned count) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (count > kMaxDevices) return -1;
  s.count = count;
  return 0;
}

void fakeNvmlSetName(unsigned i, const char* name) {
  FAKE_NVML_CONTROL(i, );
  d->name = name;
}

void fakeNvmlSetUuid(unsigned i, const char* uuid) {
  FAKE_NVML_CONTROL(i, );
  d->uuid = uuid;
}

void fakeNvmlSetArchitecture(unsigned i, unsigned arch) {
  FAKE_NVML_CONTROL(i, );
  d->arch = arch;
}

void fakeNvmlSetEnergy(unsigned i, unsigned long long millijoules) {
  FAKE_NVML_CONTROL(i, );
  d->energy_mj = millijoules;
}

void fakeNvmlAdvanceEnergy(unsigned i, unsigned long long millijoules) {
  FAKE_NVML_CONTROL(i, );
  d->energy_mj += millijoules;
}

void fakeNvmlSetField(unsigned i, unsigned field, unsigned scope, int result, unsigned value) {
  FAKE_NVML_CONTROL(i, );
  d->fields[{field, scope}] = FieldSlot{result, value};
}

void fakeNvmlSetPower(unsigned i, unsigned instant_mw, unsigned average_mw, unsigned memory_mw) {
  FAKE_NVML_CONTROL(i, );
  d->fields[{NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_GPU}] = {NVML_SUCCESS, instant_mw};
  d->fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_GPU}] = {NVML_SUCCESS, average_mw};
  d->power_usage_mw = instant_mw;
  d->fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY}] = {NVML_SUCCESS, memory_mw};
}

void fakeNvmlSetModuleScopeOnly(unsigned i, unsigned instant_mw, unsigned average_mw) {
  FAKE_NVML_CONTROL(i, );
  d->fields[{NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_GPU}] = {NVML_ERROR_NOT_SUPPORTED, 0};
  d->fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_GPU}] = {NVML_ERROR_NOT_SUPPORTED, 0};
  d->fields[{NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MODULE}] = {NVML_SUCCESS, instant_mw};
  d->fields[{NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MODULE}] = {NVML_SUCCESS, average_mw};
}

// A driver older than R535: the power fields (185-192) do not exist.
void fakeNvmlSetNoPowerFields(unsigned i) {
  FAKE_NVML_CONTROL(i, );
  for (unsigned field : {NVML_FI_DEV_POWER_INSTANT, NVML_FI_DEV_POWER_AVERAGE}) {
    for (unsigned scope :
         {NVML_POWER_SCOPE_GPU, NVML_POWER_SCOPE_MODULE, NVML_POWER_SCOPE_MEMORY}) {
      d->fields[{field, scope}] = {NVML_ERROR_NOT_SUPPORTED, 0};
    }
  }
}

void fakeNvmlSetPowerLimits(unsigned i, unsigned min_mw, unsigned max_mw, unsigned default_mw,
                            unsigned current_mw) {
  FAKE_NVML_CONTROL(i, );
  d->limit_min_mw = min_mw;
  d->limit_max_mw = max_mw;
  d->limit_default_mw = default_mw;
  d->limit_mw = current_mw;
}

unsigned fakeNvmlGetPowerLimit(unsigned i) {
  FAKE_NVML_CONTROL(i, 0);
  return d->limit_mw;
}

void fakeNvmlSetPersistence(unsigned i, int enabled) {
  FAKE_NVML_CONTROL(i, );
  d->persistence = enabled != 0 ? 1 : 0;
}

int fakeNvmlGetPersistence(unsigned i) {
  FAKE_NVML_CONTROL(i, -1);
  return d->persistence;
}

void fakeNvmlClearSupportedClocks(unsigned i) {
  FAKE_NVML_CONTROL(i, );
  d->clocks.clear();
}

void fakeNvmlAddSupportedClocks(unsigned i, unsigned memory_mhz, const unsigned* graphics,
                                unsigned count) {
  FAKE_NVML_CONTROL(i, );
  d->clocks.emplace_back(memory_mhz, std::vector<unsigned>(graphics, graphics + count));
}

int fakeNvmlGetLockedClocks(unsigned i, int memory, unsigned* min_mhz, unsigned* max_mhz) {
  FAKE_NVML_CONTROL(i, -1);
  if (memory != 0) {
    *min_mhz = d->mem_locked_min;
    *max_mhz = d->mem_locked_max;
    return d->mem_locked ? 1 : 0;
  }
  *min_mhz = d->gpu_locked_min;
  *max_mhz = d->gpu_locked_max;
  return d->gpu_locked ? 1 : 0;
}

void fakeNvmlSetTemperature(unsigned i, int celsius) {
  FAKE_NVML_CONTROL(i, );
  d->temperature_c = celsius;
}

void fakeNvmlSetTelemetry(unsigned i, unsigned util_gpu, unsigned util_memory, unsigned sm_mhz,
                          unsigned mem_mhz, unsigned long long reasons,
                          unsigned long long memory_used, unsigned long long memory_total) {
  FAKE_NVML_CONTROL(i, );
  d->util_gpu = util_gpu;
  d->util_memory = util_memory;
  d->sm_clock_mhz = sm_mhz;
  d->mem_clock_mhz = mem_mhz;
  d->clocks_event_reasons = reasons;
  d->memory_used = memory_used;
  d->memory_total = memory_total;
}

void fakeNvmlSetMinorNumber(unsigned i, unsigned minor) {
  FAKE_NVML_CONTROL(i, );
  d->minor_number = minor;
}

void fakeNvmlSetMigMode(unsigned i, int mode) {
  FAKE_NVML_CONTROL(i, );
  d->mig_mode = mode;
}

void fakeNvmlAddProcessSample(unsigned i, unsigned pid, unsigned long long timestamp_us,
                              unsigned sm, unsigned mem) {
  FAKE_NVML_CONTROL(i, );
  d->samples.push_back({pid, timestamp_us, sm, mem});
  if (d->samples.size() > kMaxProcessSamples) d->samples.pop_front();
}

void fakeNvmlSetAccountingMode(unsigned i, int mode) {
  FAKE_NVML_CONTROL(i, );
  d->accounting_mode = mode;
}

void fakeNvmlAddAccountingStats(unsigned i, unsigned pid, unsigned gpu, unsigned mem,
                                unsigned long long max_memory, unsigned long long time_ms,
                                unsigned long long start_us, int running) {
  FAKE_NVML_CONTROL(i, );
  d->accounting.push_back(
      {pid, true, gpu, mem, max_memory, time_ms, start_us, running != 0 ? 1U : 0U});
}

void fakeNvmlAddAccountingPid(unsigned i, unsigned pid) {
  FAKE_NVML_CONTROL(i, );
  AccountingEntry entry;
  entry.pid = pid;
  entry.has_stats = false;
  d->accounting.push_back(entry);
}

void fakeNvmlAddComputeProcess(unsigned i, unsigned pid, unsigned long long used_bytes) {
  FAKE_NVML_CONTROL(i, );
  d->processes.push_back({pid, used_bytes});
}

void fakeNvmlSetSmCount(unsigned i, unsigned sms) {
  FAKE_NVML_CONTROL(i, );
  d->sm_count = sms;
}

int fakeNvmlAddMigDevice(unsigned i, unsigned slot, unsigned gpu_instance_id, const char* uuid,
                         unsigned sms) {
  FAKE_NVML_CONTROL(i, -1);
  if (slot >= kMaxMigDevices) return -1;
  nvmlDevice_st& mig = s.mig[i][slot];
  mig = nvmlDevice_st{};
  mig.index = i;
  mig.parent = d;
  mig.gpu_instance_id = gpu_instance_id;
  mig.uuid = uuid;
  mig.sm_count = sms;
  return 0;
}

int fakeNvmlAddMigProcess(unsigned i, unsigned slot, unsigned pid, unsigned long long used_bytes) {
  FAKE_NVML_CONTROL(i, -1);
  if (slot >= kMaxMigDevices || s.mig[i][slot].parent != d) return -1;
  s.mig[i][slot].processes.push_back({pid, used_bytes});
  return 0;
}

void fakeNvmlSetLost(unsigned i, int lost) {
  FAKE_NVML_CONTROL(i, );
  d->lost = lost != 0;
}

void fakeNvmlSetPermissionDenied(int denied) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.permission_denied = denied != 0;
}

void fakeNvmlFailNext(const char* function, int result) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.script.fail_next(function, result);
}

// Every call to `function` sleeps this long first (0: no delay), with the
// fake's lock held, like a driver call that takes time.
void fakeNvmlSetCallDelay(const char* function, unsigned microseconds) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.script.set_delay(function, std::chrono::microseconds(microseconds));
}

void fakeNvmlFailAlways(const char* function, int result) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.script.fail_always(function, result);
}

unsigned fakeNvmlCallCount(const char* function) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.script.count(function);
}

int fakeNvmlInitRefCount(void) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.init_refcount;
}

void fakeNvmlSetDriverVersion(const char* version) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.driver_version = version;
}

}  // extern "C"
