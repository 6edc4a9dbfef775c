// A fake libamd_smi.so.<ABI> for tests. It exports the subset of the AMD SMI
// C ABI that zeus's AMD backend uses, in the layout of one ABI major
// (FAKE_AMDSMI_ABI = 24, 25 or 26: version struct, power-info struct, clock
// level unit, enumeration info from 25 on), with the contracts of the real
// library: NOT_INIT before amdsmi_init, reference-counted init, count-then-
// fill handle lists, "N/A" (UINT32_MAX) power readings, NO_PERM for setters
// without privileges, INVAL for a clock minimum above the maximum. Plus
// fakeAmdsmi* control functions that script its state, inject failures, and
// measure how many calls ran at once (to check serialization). Declared here
// independently of the backend's ABI header, as a vendor library would be.
//
// The process list (amdsmi_get_gpu_process_list) is scripted per GPU with the
// real size protocol (count with *max_processes = 0, OUT_OF_RESOURCES and the
// number running when the buffer is short). Its amdsmi_proc_info_t follows
// ABI 24's layout in the 24 build and ABI 26's in the 25 and 26 builds; ABI
// 25's real layout is not declared anywhere in zeus, and the backend refuses
// to call it there. FAKE_AMDSMI_NO_PROCESS_LIST builds a library without the
// entry point (an older or stripped AMD SMI).
//
// Thread-safe: one mutex guards all state. The optional call delay is spent
// outside the mutex, so concurrent callers really overlap.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../common/call_script.h"

#ifndef FAKE_AMDSMI_ABI
#error "define FAKE_AMDSMI_ABI (24, 25 or 26)"
#endif

namespace {

constexpr std::uint32_t AMDSMI_STATUS_SUCCESS = 0;
constexpr std::uint32_t AMDSMI_STATUS_INVAL = 1;
constexpr std::uint32_t AMDSMI_STATUS_NOT_SUPPORTED = 2;
constexpr std::uint32_t AMDSMI_STATUS_NO_PERM = 10;
// Unused in the build without the process list (FAKE_AMDSMI_NO_PROCESS_LIST).
[[maybe_unused]] constexpr std::uint32_t AMDSMI_STATUS_OUT_OF_RESOURCES = 15;
constexpr std::uint32_t AMDSMI_STATUS_NOT_INIT = 32;
constexpr std::uint32_t AMDSMI_STATUS_INSUFFICIENT_SIZE = 41;
constexpr std::uint32_t kNa = 0xFFFFFFFFU;
constexpr std::uint32_t kClkGfx = 0;
constexpr std::uint32_t kClkMem = 4;
constexpr unsigned kMaxDevices = 16;

struct Process {
  std::uint32_t pid = 0;
  std::uint64_t mem = 0;  // bytes
  std::uint64_t gfx_ns = 0;
};

struct Device {
  std::string name = "AMD Instinct MI300X";
  std::string uuid;
  std::string hip_uuid;
  std::uint32_t hip_id = 0;
  std::uint32_t kfd_node = 0;
  std::uint64_t bdf = 0;
  std::uint64_t energy_counts = 0;
  float resolution = 15.3F;
  std::uint32_t current_w = 300;
  std::uint32_t average_w = kNa;  // MI300: only current power
  std::uint64_t cap_uw = 750000000;
  std::uint64_t default_cap_uw = 750000000;
  std::uint64_t min_cap_uw = 200000000;
  std::uint64_t max_cap_uw = 750000000;
  std::vector<std::uint64_t> gfx_levels_mhz{500, 1300, 2100};
  std::vector<std::uint64_t> mem_levels_mhz{900, 1300};
  std::uint32_t gfx_min = 500, gfx_max = 2100;
  std::uint32_t mem_min = 900, mem_max = 1300;
  std::uint32_t perf_level = 0;  // AUTO
  std::int64_t hotspot_millic = 55000;
  std::uint32_t energy_status = AMDSMI_STATUS_SUCCESS;
  std::vector<Process> processes;
  // Processes that start right after the next count query (max_processes
  // 0), so the fill that follows finds more than it was sized for.
  unsigned grow_after_count = 0;
};

struct State {
  std::mutex mutex;
  int init_refcount = 0;
  unsigned count = 2;
  Device devices[kMaxDevices];
  std::uint32_t year = 0, major = 0, minor = 0, release = 0;
  zeus::testing::CallScript<std::uint32_t> script;  // counts, scripted failures
  bool permission_denied = false;
  std::vector<std::string> journal;  // setter calls, in order
  zeus::testing::InFlightGauge in_flight;
  std::atomic<int> delay_us{0};  // every entry point's, spent outside the mutex
};

State& state() {
  static State s;
  return s;
}

void reset_device(Device& d, unsigned i) {
  d = Device{};
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%08x-0000-1000-8000-%012x", 0x1002U, i);
  d.uuid = buf;
  std::snprintf(buf, sizeof(buf), "GPU-%016llx", 0xabc0000000000000ULL + i);
  d.hip_uuid = buf;
  d.hip_id = i;
  d.kfd_node = i + 1;  // node 0 is the CPU
  d.bdf = (0x0001ULL << 16) | (static_cast<std::uint64_t>(0xc1 + i) << 8);
  d.energy_counts = 1000000ULL * (i + 1);
}

void reset_locked(State& s) {
  s.init_refcount = 0;
  s.count = 2;
  for (unsigned i = 0; i < kMaxDevices; ++i) reset_device(s.devices[i], i);
#if FAKE_AMDSMI_ABI == 24
  s.year = 24, s.major = 7, s.minor = 1, s.release = 0;
#elif FAKE_AMDSMI_ABI == 25
  s.year = 25, s.major = 25, s.minor = 3, s.release = 0;
#else
  s.year = 0, s.major = 26, s.minor = 3, s.release = 0;
#endif
  s.script.clear();
  s.permission_denied = false;
  s.journal.clear();
  s.in_flight.reset();
  s.delay_us = 0;
}

struct Initializer {
  Initializer() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    reset_locked(s);
  }
};
const Initializer initializer;

// Counts the call as in flight (measuring overlap) for the entry point's
// lifetime, and spends the call delay before the mutex is taken, so
// concurrent callers really overlap.
struct InFlight {
  zeus::testing::InFlightGauge::Scope scope;
  explicit InFlight(State& s) : scope(s.in_flight) {
    if (const int us = s.delay_us.load(); us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
  }
};

std::uint32_t begin(State& s, const char* function, bool needs_init = true) {
  if (const std::uint32_t rc = s.script.enter(function); rc != AMDSMI_STATUS_SUCCESS) return rc;
  if (needs_init && s.init_refcount == 0) return AMDSMI_STATUS_NOT_INIT;
  return AMDSMI_STATUS_SUCCESS;
}

Device* device_of(State& s, void* handle) {
  auto* d = static_cast<Device*>(handle);
  if (d < s.devices || d >= s.devices + s.count) return nullptr;
  return d;
}

#define FAKE_BEGIN(name)                     \
  State& s = state();                        \
  InFlight in_flight_(s);                    \
  std::lock_guard<std::mutex> lock(s.mutex); \
  if (std::uint32_t rc_ = begin(s, name); rc_ != 0) return rc_
#define FAKE_BEGIN_DEVICE(name, handle) \
  FAKE_BEGIN(name);                     \
  Device* d = device_of(s, handle);     \
  if (d == nullptr) return AMDSMI_STATUS_INVAL

// Socket handles point at these; one socket per GPU, as on Instinct nodes.
char g_sockets[kMaxDevices];

std::uint64_t level_value(std::uint64_t mhz) {
#if FAKE_AMDSMI_ABI == 26
  return mhz;  // MHz from ABI 26 on
#else
  return mhz * 1000000ULL;  // Hz before
#endif
}

}  // namespace

extern "C" {

struct fake_version24 {
  std::uint32_t year, major, minor, release;
  const char* build;
};
struct fake_version26 {
  std::uint32_t major, minor, release;
  const char* build;
};
struct fake_power24 {
  std::uint32_t current_socket_power, average_socket_power, gfx_voltage, soc_voltage, mem_voltage,
      power_limit, reserved[11];
};
struct fake_power25 {
  std::uint64_t socket_power;
  std::uint32_t current_socket_power, average_socket_power, gfx_voltage, soc_voltage, mem_voltage,
      power_limit, reserved[2];
};
struct fake_power26 {
  std::uint64_t socket_power;
  std::uint32_t current_socket_power, average_socket_power;
  std::uint64_t gfx_voltage, soc_voltage, mem_voltage;
  std::uint32_t power_limit;
  std::uint64_t reserved[18];
};
struct fake_engine_usage {
  std::uint64_t gfx, enc;
  std::uint32_t reserved[12];
};
struct fake_memory_usage {
  std::uint64_t gtt_mem, cpu_mem, vram_mem;
  std::uint32_t reserved[10];
};
#if FAKE_AMDSMI_ABI == 24
struct fake_proc_info {
  char name[32];  // AMDSMI_NORMAL_STRING_LENGTH
  std::uint32_t pid;
  std::uint64_t mem;
  fake_engine_usage engine_usage;
  fake_memory_usage memory_usage;
  char container_name[32];
  std::uint32_t reserved[4];
};
static_assert(sizeof(fake_proc_info) == 224, "ABI 24 amdsmi_proc_info_t");
#else
struct fake_proc_info {
  char name[256];  // AMDSMI_MAX_STRING_LENGTH
  std::uint32_t pid;
  std::uint64_t mem;
  fake_engine_usage engine_usage;
  fake_memory_usage memory_usage;
  char container_name[256];
  std::uint32_t cu_occupancy, evicted_time;
  std::uint32_t reserved[10];
};
static_assert(sizeof(fake_proc_info) == 704, "ABI 26 amdsmi_proc_info_t");
#endif
struct fake_power_cap {
  std::uint64_t power_cap, default_power_cap, dpm_cap, min_power_cap, max_power_cap, reserved[3];
};
struct fake_clk_info {
  std::uint32_t clk, min_clk, max_clk;
  std::uint8_t clk_locked, clk_deep_sleep;
  std::uint32_t reserved[4];
};
struct fake_frequencies {
  bool has_deep_sleep;
  std::uint32_t num_supported;
  std::uint32_t current;
  std::uint64_t frequency[33];
};
struct fake_kfd_info {
  std::uint64_t kfd_id;
  std::uint32_t node_id, current_partition_id, reserved[12];
};
struct fake_enumeration_info {
  std::uint32_t drm_render, drm_card, hsa_id, hip_id;
  char hip_uuid[256];
};
struct fake_asic_info {
  char market_name[256];
  std::uint32_t vendor_id;
  char rest[600];
};
static_assert(sizeof(fake_version24) == 24 && sizeof(fake_version26) == 24, "amdsmi ABI");
static_assert(sizeof(fake_power24) == 68 && sizeof(fake_power25) == 40 &&
                  sizeof(fake_power26) == 192,
              "amdsmi ABI");
static_assert(sizeof(fake_power_cap) == 64 && sizeof(fake_clk_info) == 32, "amdsmi ABI");

std::uint32_t amdsmi_init(std::uint64_t flags) {
  State& s = state();
  InFlight in_flight_(s);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (std::uint32_t rc = begin(s, "amdsmi_init", false); rc != 0) return rc;
  if ((flags & 2U) == 0) return AMDSMI_STATUS_INVAL;  // we only have GPUs
  s.init_refcount++;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_shut_down(void) {
  FAKE_BEGIN("amdsmi_shut_down");
  s.init_refcount--;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_status_code_to_string(std::uint32_t status, const char** text) {
  if (text == nullptr) return AMDSMI_STATUS_INVAL;
  switch (status) {
    case 0:
      *text = "AMDSMI_STATUS_SUCCESS: Call succeeded";
      break;
    case 1:
      *text = "AMDSMI_STATUS_INVAL: Invalid parameters";
      break;
    case 2:
      *text = "AMDSMI_STATUS_NOT_SUPPORTED: Command not supported";
      break;
    case 10:
      *text = "AMDSMI_STATUS_NO_PERM: Permission Denied";
      break;
    case 31:
      *text = "AMDSMI_STATUS_NOT_FOUND: Device Not found";
      break;
    case 32:
      *text = "AMDSMI_STATUS_NOT_INIT: Device not initialized";
      break;
    case 34:
      *text = "AMDSMI_STATUS_DRIVER_NOT_LOADED: Processor driver not loaded";
      break;
    default:
      *text = "AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred";
  }
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_lib_version(void* version) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (std::uint32_t rc = begin(s, "amdsmi_get_lib_version", false); rc != 0) return rc;
  if (version == nullptr) return AMDSMI_STATUS_INVAL;
#if FAKE_AMDSMI_ABI == 26
  fake_version26 v{s.major, s.minor, s.release, "fake"};
#else
  fake_version24 v{s.year, s.major, s.minor, s.release, "fake"};
#endif
  std::memcpy(version, &v, sizeof(v));
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_socket_handles(std::uint32_t* count, void** sockets) {
  FAKE_BEGIN("amdsmi_get_socket_handles");
  if (count == nullptr) return AMDSMI_STATUS_INVAL;
  if (sockets == nullptr) {
    *count = s.count;
    return AMDSMI_STATUS_SUCCESS;
  }
  if (*count < s.count) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
  for (unsigned i = 0; i < s.count; ++i) sockets[i] = &g_sockets[i];
  *count = s.count;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_processor_handles(void* socket, std::uint32_t* count, void** handles) {
  FAKE_BEGIN("amdsmi_get_processor_handles");
  auto* sock = static_cast<char*>(socket);
  if (count == nullptr || sock < g_sockets || sock >= g_sockets + s.count) {
    return AMDSMI_STATUS_INVAL;
  }
  if (handles == nullptr) {
    *count = 1;
    return AMDSMI_STATUS_SUCCESS;
  }
  if (*count < 1) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
  // Sockets are listed in BDF order, which need not be HIP order.
  handles[0] = &s.devices[sock - g_sockets];
  *count = 1;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_processor_type(void* handle, std::uint32_t* type) {
  FAKE_BEGIN_DEVICE("amdsmi_get_processor_type", handle);
  if (type == nullptr) return AMDSMI_STATUS_INVAL;
  *type = 1;  // AMDSMI_PROCESSOR_TYPE_AMD_GPU
  (void)d;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_gpu_asic_info(void* handle, fake_asic_info* info) {
  FAKE_BEGIN_DEVICE("amdsmi_get_gpu_asic_info", handle);
  if (info == nullptr) return AMDSMI_STATUS_INVAL;
  std::memset(info, 0, sizeof(*info));
  std::snprintf(info->market_name, sizeof(info->market_name), "%s", d->name.c_str());
  info->vendor_id = 0x1002;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_gpu_kfd_info(void* handle, fake_kfd_info* info) {
  FAKE_BEGIN_DEVICE("amdsmi_get_gpu_kfd_info", handle);
  if (info == nullptr) return AMDSMI_STATUS_INVAL;
  std::memset(info, 0, sizeof(*info));
  info->kfd_id = 40000 + d->kfd_node;
  info->node_id = d->kfd_node;
  return AMDSMI_STATUS_SUCCESS;
}

#if FAKE_AMDSMI_ABI >= 25
std::uint32_t amdsmi_get_gpu_enumeration_info(void* handle, fake_enumeration_info* info) {
  FAKE_BEGIN_DEVICE("amdsmi_get_gpu_enumeration_info", handle);
  if (info == nullptr) return AMDSMI_STATUS_INVAL;
  std::memset(info, 0, sizeof(*info));
  info->drm_render = 128 + d->hip_id;
  info->drm_card = d->hip_id;
  info->hsa_id = d->kfd_node;
  info->hip_id = d->hip_id;
  std::snprintf(info->hip_uuid, sizeof(info->hip_uuid), "%s", d->hip_uuid.c_str());
  return AMDSMI_STATUS_SUCCESS;
}
#endif

std::uint32_t amdsmi_get_gpu_device_uuid(void* handle, unsigned* length, char* uuid) {
  FAKE_BEGIN_DEVICE("amdsmi_get_gpu_device_uuid", handle);
  if (length == nullptr || uuid == nullptr) return AMDSMI_STATUS_INVAL;
  if (*length < 38) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
  std::snprintf(uuid, *length, "%s", d->uuid.c_str());
  *length = static_cast<unsigned>(d->uuid.size());
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_gpu_bdf_id(void* handle, std::uint64_t* bdf) {
  FAKE_BEGIN_DEVICE("amdsmi_get_gpu_bdf_id", handle);
  if (bdf == nullptr) return AMDSMI_STATUS_INVAL;
  *bdf = d->bdf;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_energy_count(void* handle, std::uint64_t* counts, float* resolution,
                                      std::uint64_t* timestamp) {
  FAKE_BEGIN_DEVICE("amdsmi_get_energy_count", handle);
  if (counts == nullptr || resolution == nullptr || timestamp == nullptr) {
    return AMDSMI_STATUS_INVAL;
  }
  if (d->energy_status != AMDSMI_STATUS_SUCCESS) return d->energy_status;
  *counts = d->energy_counts;
  *resolution = d->resolution;
  *timestamp = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_power_info(void* handle, void* info) {
  FAKE_BEGIN_DEVICE("amdsmi_get_power_info", handle);
  if (info == nullptr) return AMDSMI_STATUS_INVAL;
#if FAKE_AMDSMI_ABI == 24
  fake_power24 p{};
#elif FAKE_AMDSMI_ABI == 25
  fake_power25 p{};
  p.socket_power = d->current_w != kNa ? d->current_w : d->average_w;
#else
  fake_power26 p{};
  p.socket_power = d->current_w != kNa ? d->current_w : d->average_w;
#endif
  p.current_socket_power = d->current_w;
  p.average_socket_power = d->average_w;
  p.power_limit = static_cast<std::uint32_t>(d->cap_uw / 1000000);
  std::memcpy(info, &p, sizeof(p));
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_power_cap_info(void* handle, std::uint32_t sensor, fake_power_cap* info) {
  FAKE_BEGIN_DEVICE("amdsmi_get_power_cap_info", handle);
  if (info == nullptr || sensor != 0) return AMDSMI_STATUS_INVAL;
  *info = fake_power_cap{d->cap_uw, d->default_cap_uw, 2100, d->min_cap_uw, d->max_cap_uw, {}};
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_set_power_cap(void* handle, std::uint32_t sensor, std::uint64_t cap_uw) {
  FAKE_BEGIN_DEVICE("amdsmi_set_power_cap", handle);
  if (s.permission_denied) return AMDSMI_STATUS_NO_PERM;
  if (sensor != 0 || cap_uw < d->min_cap_uw || cap_uw > d->max_cap_uw) return AMDSMI_STATUS_INVAL;
  d->cap_uw = cap_uw;
  s.journal.push_back("set_power_cap " + std::to_string(d - s.devices) + " " +
                      std::to_string(cap_uw));
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_clock_info(void* handle, std::uint32_t type, fake_clk_info* info) {
  FAKE_BEGIN_DEVICE("amdsmi_get_clock_info", handle);
  if (info == nullptr || (type != kClkGfx && type != kClkMem)) return AMDSMI_STATUS_INVAL;
  *info = fake_clk_info{};
  info->min_clk = type == kClkGfx ? d->gfx_min : d->mem_min;
  info->max_clk = type == kClkGfx ? d->gfx_max : d->mem_max;
  info->clk = info->max_clk;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_clk_freq(void* handle, std::uint32_t type, fake_frequencies* f) {
  FAKE_BEGIN_DEVICE("amdsmi_get_clk_freq", handle);
  if (f == nullptr || (type != kClkGfx && type != kClkMem)) return AMDSMI_STATUS_INVAL;
  const auto& levels = type == kClkGfx ? d->gfx_levels_mhz : d->mem_levels_mhz;
  if (levels.empty()) return AMDSMI_STATUS_NOT_SUPPORTED;
  std::memset(f, 0, sizeof(*f));
  f->num_supported = static_cast<std::uint32_t>(std::min<std::size_t>(levels.size(), 33));
  for (std::uint32_t i = 0; i < f->num_supported; ++i) f->frequency[i] = level_value(levels[i]);
  f->current = f->num_supported - 1;
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_set_gpu_clk_limit(void* handle, std::uint32_t type, std::uint32_t limit,
                                       std::uint64_t mhz) {
  FAKE_BEGIN_DEVICE("amdsmi_set_gpu_clk_limit", handle);
  if (s.permission_denied) return AMDSMI_STATUS_NO_PERM;
  if (type != kClkGfx && type != kClkMem) return AMDSMI_STATUS_INVAL;
  std::uint32_t& lo = type == kClkGfx ? d->gfx_min : d->mem_min;
  std::uint32_t& hi = type == kClkGfx ? d->gfx_max : d->mem_max;
  const auto value = static_cast<std::uint32_t>(mhz);
  // Like the driver: a minimum above the current maximum (or the reverse) is refused.
  if (limit == 0) {
    if (value > hi) return AMDSMI_STATUS_INVAL;
    lo = value;
  } else if (limit == 1) {
    if (value < lo) return AMDSMI_STATUS_INVAL;
    hi = value;
  } else {
    return AMDSMI_STATUS_INVAL;
  }
  d->perf_level = 3;  // MANUAL
  s.journal.push_back(std::string("set_clk_limit ") + std::to_string(d - s.devices) +
                      (type == kClkGfx ? " gfx " : " mem ") + (limit == 0 ? "min " : "max ") +
                      std::to_string(value));
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_set_gpu_perf_level(void* handle, std::uint32_t level) {
  FAKE_BEGIN_DEVICE("amdsmi_set_gpu_perf_level", handle);
  if (s.permission_denied) return AMDSMI_STATUS_NO_PERM;
  d->perf_level = level;
  if (level == 0) {  // AUTO restores the full ranges
    const auto [gmin, gmax] =
        std::minmax_element(d->gfx_levels_mhz.begin(), d->gfx_levels_mhz.end());
    const auto [mmin, mmax] =
        std::minmax_element(d->mem_levels_mhz.begin(), d->mem_levels_mhz.end());
    if (gmin != d->gfx_levels_mhz.end()) {
      d->gfx_min = static_cast<std::uint32_t>(*gmin);
      d->gfx_max = static_cast<std::uint32_t>(*gmax);
    }
    if (mmin != d->mem_levels_mhz.end()) {
      d->mem_min = static_cast<std::uint32_t>(*mmin);
      d->mem_max = static_cast<std::uint32_t>(*mmax);
    }
  }
  s.journal.push_back("set_perf_level " + std::to_string(d - s.devices) + " " +
                      std::to_string(level));
  return AMDSMI_STATUS_SUCCESS;
}

std::uint32_t amdsmi_get_temp_metric(void* handle, std::uint32_t sensor, std::uint32_t metric,
                                     std::int64_t* value) {
  FAKE_BEGIN_DEVICE("amdsmi_get_temp_metric", handle);
  if (value == nullptr) return AMDSMI_STATUS_INVAL;
  if (sensor != 1 || metric != 0) return AMDSMI_STATUS_NOT_SUPPORTED;  // we model the hotspot only
  *value = d->hotspot_millic;
  return AMDSMI_STATUS_SUCCESS;
}

#ifndef FAKE_AMDSMI_NO_PROCESS_LIST
std::uint32_t amdsmi_get_gpu_process_list(void* handle, std::uint32_t* max_processes,
                                          fake_proc_info* list) {
  FAKE_BEGIN_DEVICE("amdsmi_get_gpu_process_list", handle);
  if (max_processes == nullptr) return AMDSMI_STATUS_INVAL;
  const auto running = static_cast<std::uint32_t>(d->processes.size());
  if (*max_processes == 0 || running == 0) {
    *max_processes = running;
    for (; d->grow_after_count > 0; --d->grow_after_count) {
      const auto pid = static_cast<std::uint32_t>(90000 + d->processes.size());
      d->processes.push_back(Process{pid, 1ULL << 20, 0});
    }
    return AMDSMI_STATUS_SUCCESS;
  }
  if (list == nullptr) return AMDSMI_STATUS_INVAL;
  const std::uint32_t room = *max_processes;
  for (std::uint32_t i = 0; i < running && i < room; ++i) {
    fake_proc_info& p = list[i];
    std::memset(&p, 0, sizeof(p));
    std::snprintf(p.name, sizeof(p.name), "proc%u", d->processes[i].pid);
    p.pid = d->processes[i].pid;
    p.mem = d->processes[i].mem;
    p.engine_usage.gfx = d->processes[i].gfx_ns;
    p.memory_usage.vram_mem = d->processes[i].mem;
  }
  *max_processes = running;
  return room >= running ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_OUT_OF_RESOURCES;
}
#endif

// ---- Control API (see fake_amdsmi_control.h) --------------------------------

#define FAKE_CONTROL(i)                      \
  State& s = state();                        \
  std::lock_guard<std::mutex> lock(s.mutex); \
  if ((i) >= kMaxDevices) return;            \
  Device* d = &s.devices[i]

void fakeAmdsmiReset(void) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  reset_locked(s);
}

int fakeAmdsmiSetDeviceCount(unsigned count) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (count > kMaxDevices) return -1;
  s.count = count;
  return 0;
}

void fakeAmdsmiSetLibVersion(unsigned year, unsigned major, unsigned minor, unsigned release) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.year = year, s.major = major, s.minor = minor, s.release = release;
}

void fakeAmdsmiSetName(unsigned i, const char* name) {
  FAKE_CONTROL(i);
  d->name = name;
}

// HIP order: hip_id (ABI 25+) and KFD node (ABI 24) follow `hip_index`.
void fakeAmdsmiSetHipIndex(unsigned i, unsigned hip_index) {
  FAKE_CONTROL(i);
  d->hip_id = hip_index;
  d->kfd_node = hip_index + 1;
}

void fakeAmdsmiSetEnergy(unsigned i, unsigned long long counts, float resolution_uj) {
  FAKE_CONTROL(i);
  d->energy_counts = counts;
  d->resolution = resolution_uj;
}

void fakeAmdsmiAdvanceEnergy(unsigned i, unsigned long long counts) {
  FAKE_CONTROL(i);
  d->energy_counts += counts;
}

void fakeAmdsmiSetEnergyStatus(unsigned i, unsigned status) {
  FAKE_CONTROL(i);
  d->energy_status = status;
}

void fakeAmdsmiSetPower(unsigned i, unsigned current_w, unsigned average_w) {
  FAKE_CONTROL(i);
  d->current_w = current_w;
  d->average_w = average_w;
}

void fakeAmdsmiSetPowerCaps(unsigned i, unsigned long long min_uw, unsigned long long max_uw,
                            unsigned long long default_uw, unsigned long long cap_uw) {
  FAKE_CONTROL(i);
  d->min_cap_uw = min_uw;
  d->max_cap_uw = max_uw;
  d->default_cap_uw = default_uw;
  d->cap_uw = cap_uw;
}

unsigned long long fakeAmdsmiGetPowerCap(unsigned i) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return i < kMaxDevices ? s.devices[i].cap_uw : 0;
}

void fakeAmdsmiSetClockLevels(unsigned i, int memory, const unsigned long long* mhz,
                              unsigned count) {
  FAKE_CONTROL(i);
  auto& levels = memory != 0 ? d->mem_levels_mhz : d->gfx_levels_mhz;
  levels.assign(mhz, mhz + count);
}

// Fills the current clock limits and returns the performance level.
int fakeAmdsmiGetClockLimits(unsigned i, unsigned* gfx_min, unsigned* gfx_max, unsigned* mem_min,
                             unsigned* mem_max) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (i >= kMaxDevices) return -1;
  const Device& d = s.devices[i];
  *gfx_min = d.gfx_min, *gfx_max = d.gfx_max, *mem_min = d.mem_min, *mem_max = d.mem_max;
  return static_cast<int>(d.perf_level);
}

void fakeAmdsmiSetTemperature(unsigned i, long long millidegrees) {
  FAKE_CONTROL(i);
  d->hotspot_millic = millidegrees;
}

// GPU i's processes: pids[k] using mem_bytes[k].
void fakeAmdsmiSetProcesses(unsigned i, const unsigned* pids, const unsigned long long* mem_bytes,
                            unsigned count) {
  FAKE_CONTROL(i);
  d->processes.clear();
  for (unsigned k = 0; k < count; ++k) d->processes.push_back(Process{pids[k], mem_bytes[k], 0});
}

// `extra` processes (pids 90000 + position, 1 MiB each) start on GPU i right
// after its next count query.
void fakeAmdsmiGrowProcessesAfterCount(unsigned i, unsigned extra) {
  FAKE_CONTROL(i);
  d->grow_after_count = extra;
}

void fakeAmdsmiSetPermissionDenied(int denied) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.permission_denied = denied != 0;
}

void fakeAmdsmiFailNext(const char* function, unsigned status) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.script.fail_next(function, status);
}

void fakeAmdsmiFailAlways(const char* function, unsigned status) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.script.fail_always(function, status);
}

unsigned fakeAmdsmiCallCount(const char* function) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.script.count(function);
}

int fakeAmdsmiInitRefCount(void) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.init_refcount;
}

// Every later entry point spends `us` microseconds outside the lock.
void fakeAmdsmiSetCallDelay(int us) { state().delay_us = us; }

// The most entry points that ran at once since the last reset.
int fakeAmdsmiMaxInFlight(void) { return state().in_flight.most(); }

// Setter journal, newline-separated, copied into `out` (truncated to `size`).
unsigned fakeAmdsmiJournal(char* out, unsigned size) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string all;
  for (const auto& line : s.journal) all += line + "\n";
  if (out != nullptr && size > 0) std::snprintf(out, size, "%s", all.c_str());
  return static_cast<unsigned>(all.size());
}

}  // extern "C"
