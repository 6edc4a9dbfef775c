#include "device/amd/amdsmi_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::amdsmi_internal {
namespace {

namespace abi = amdsmi_abi;

// DPM levels come in Hz from ABI 24 and in MHz from ABI 26. No GPU clock is
// below 1 MHz or above 1 THz, so the magnitude tells the unit.
Megahertz to_megahertz(std::uint64_t value) {
  constexpr std::uint64_t kHzPerMhz = 1000000;
  if (value >= kHzPerMhz) return Megahertz(static_cast<std::int64_t>(value / kHzPerMhz));
  return Megahertz(static_cast<std::int64_t>(value));
}

const char* clock_name(std::uint32_t clock_type) {
  return clock_type == abi::kClkTypeMem ? "memory" : "graphics";
}

}  // namespace

AmdSmiGpu::AmdSmiGpu(std::shared_ptr<const AmdSmiLibrary> library,
                     abi::amdsmi_processor_handle handle, AmdSmiGpuInfo info)
    : lib_(std::move(library)), api_(lib_->api()), handle_(handle), info_(std::move(info)) {}

std::string AmdSmiGpu::context(std::string_view what) const {
  return fmt::format("GPU {} ({}, HIP index {}): {}", info_.index, info_.name, info_.hip_index,
                     what);
}

void AmdSmiGpu::check(abi::amdsmi_status_t status, std::string_view function,
                      std::string_view what) const {
  if (status != abi::kSuccess) lib_->fail(status, function, context(what));
}

void AmdSmiGpu::refuse_second_die(std::string_view what) const {
  if (!info_.second_die) return;
  throw_error(
      ErrorCode::kNotSupported,
      context(fmt::format(
          "{}: this is the second die of a dual-die MI250/MI250X, whose power AMD's driver "
          "reports only as part of GPU {} (both dies combined); measure GPU {} instead",
          what, info_.index == 0 ? 0 : info_.index - 1, info_.index == 0 ? 0 : info_.index - 1)));
}

AmdSmiGpu::PowerReadings AmdSmiGpu::read_power_info() const {
  constexpr std::string_view what = "reading power";
  require(api_.get_power_info, "amdsmi_get_power_info", what);
  // One buffer that fits every ABI's struct, read through the loaded ABI's layout.
  union {
    abi::PowerInfo24 v24;
    abi::PowerInfo25 v25;
    abi::PowerInfo26 v26;
    unsigned char bytes[512];
  } info{};
  {
    auto lock = lib_->lock();
    check(api_.get_power_info(handle_, &info), "amdsmi_get_power_info", what);
  }
  switch (lib_->version().abi) {
    case 24:
      return {info.v24.current_socket_power, info.v24.average_socket_power};
    case 25:
      return {info.v25.current_socket_power, info.v25.average_socket_power};
    default:
      return {info.v26.current_socket_power, info.v26.average_socket_power};
  }
}

bool AmdSmiGpu::supports_energy_counter() {
  if (info_.second_die) return false;
  const int known = has_counter_.load(std::memory_order_acquire);
  if (known != kUnknown) return known == 1;
  bool supported = false;
  if (api_.get_energy_count != nullptr) {
    std::uint64_t count = 0;
    float resolution = 0;
    std::uint64_t timestamp = 0;
    abi::amdsmi_status_t status = 0;
    {
      auto lock = lib_->lock();
      status = api_.get_energy_count(handle_, &count, &resolution, &timestamp);
    }
    if (status == abi::kSuccess) {
      supported = resolution > 0;
    } else if (status != abi::kNotSupported && status != abi::kNotYetImplemented) {
      lib_->fail(status, "amdsmi_get_energy_count", context("probing the energy counter"));
    }
  }
  has_counter_.store(supported ? 1 : 0, std::memory_order_release);
  return supported;
}

Joules AmdSmiGpu::total_energy() {
  constexpr std::string_view what = "reading the energy counter";
  refuse_second_die(what);
  require(api_.get_energy_count, "amdsmi_get_energy_count", what);
  std::uint64_t count = 0;
  float resolution = 0;
  std::uint64_t timestamp = 0;
  {
    auto lock = lib_->lock();
    check(api_.get_energy_count(handle_, &count, &resolution, &timestamp),
          "amdsmi_get_energy_count", what);
  }
  if (!(resolution > 0)) {
    throw_error(ErrorCode::kNotSupported,
                context(fmt::format("{}: the counter reports a resolution of {} uJ per count, so "
                                    "it cannot be used; integrate power instead",
                                    what, resolution)));
  }
  // counts x resolution (microjoules per count); 64-bit counter, no wrap in practice.
  return from_microjoules(static_cast<double>(count) * static_cast<double>(resolution));
}

Watts AmdSmiGpu::power(device::PowerDomain domain) {
  const char* what = domain == device::PowerDomain::kDeviceInstant   ? "reading instant power"
                     : domain == device::PowerDomain::kDeviceAverage ? "reading average power"
                                                                     : "reading memory power";
  if (domain == device::PowerDomain::kMemoryAverage) {
    throw_error(ErrorCode::kNotSupported,
                context(fmt::format("{}: AMD SMI does not report GPU memory power", what)));
  }
  refuse_second_die(what);
  const PowerReadings r = read_power_info();
  const bool instant = domain == device::PowerDomain::kDeviceInstant;
  const std::uint32_t watts = instant ? r.current_w : r.average_w;
  if (watts == abi::kPowerNotAvailable) {
    throw_error(ErrorCode::kNotSupported,
                context(fmt::format(
                    "{}: the driver reports N/A for {} on this GPU (AMD reports current power on "
                    "MI300 and newer, average power on Navi and MI200 and older); use the {} "
                    "domain",
                    what, instant ? "current socket power" : "average socket power",
                    instant ? "average" : "instant")));
  }
  return Watts(static_cast<double>(watts));
}

abi::PowerCapInfo AmdSmiGpu::power_cap_info() const {
  constexpr std::string_view what = "reading the power cap";
  require(api_.get_power_cap_info, "amdsmi_get_power_cap_info", what);
  abi::PowerCapInfo info{};
  auto lock = lib_->lock();
  check(api_.get_power_cap_info(handle_, 0, &info), "amdsmi_get_power_cap_info", what);
  return info;
}

device::PowerLimitConstraints AmdSmiGpu::power_limit_constraints() {
  const abi::PowerCapInfo info = power_cap_info();
  // Microwatts to milliwatts, rounding inwards so the range stays settable.
  return {Milliwatts(static_cast<std::int64_t>((info.min_power_cap + 999) / 1000)),
          Milliwatts(static_cast<std::int64_t>(info.max_power_cap / 1000))};
}

Milliwatts AmdSmiGpu::power_limit() {
  return Milliwatts(static_cast<std::int64_t>(power_cap_info().power_cap / 1000));
}

Milliwatts AmdSmiGpu::default_power_limit() {
  return Milliwatts(static_cast<std::int64_t>(power_cap_info().default_power_cap / 1000));
}

void AmdSmiGpu::set_power_limit(Milliwatts limit) {
  const std::string what = fmt::format("setting the power cap to {} W", to_watts(limit).value());
  require(api_.set_power_cap, "amdsmi_set_power_cap", what);
  const device::PowerLimitConstraints range = power_limit_constraints();
  if (limit < range.min || limit > range.max) {
    throw_error(ErrorCode::kInvalidArgument,
                context(fmt::format("power cap {} W is outside the GPU's range [{}, {}] W",
                                    to_watts(limit).value(), to_watts(range.min).value(),
                                    to_watts(range.max).value())));
  }
  if (power_limit() == limit) return;  // setting needs root and is slow
  auto lock = lib_->lock();
  check(api_.set_power_cap(handle_, 0, static_cast<std::uint64_t>(limit.value()) * 1000U),
        "amdsmi_set_power_cap", what);
}

bool AmdSmiGpu::persistence_mode() {
  throw_error(ErrorCode::kNotSupported,
              context("persistence mode: AMD GPUs have no persistence mode (the amdgpu driver "
                      "keeps the GPU initialized)"));
}

void AmdSmiGpu::set_persistence_mode(bool) { (void)persistence_mode(); }

std::vector<Megahertz> AmdSmiGpu::clock_levels(std::uint32_t clock_type, const char* what) const {
  require(api_.get_clk_freq, "amdsmi_get_clk_freq", what);
  abi::FrequenciesBuffer f{};
  {
    auto lock = lib_->lock();
    check(api_.get_clk_freq(handle_, clock_type, &f), "amdsmi_get_clk_freq", what);
  }
  const std::size_t n = std::min<std::size_t>(f.header.num_supported, abi::kMaxFrequencies);
  std::vector<Megahertz> out;
  for (std::size_t i = 0; i < n; ++i) {
    const Megahertz mhz = to_megahertz(f.frequency[i]);
    if (mhz.value() > 0 && std::find(out.begin(), out.end(), mhz) == out.end()) out.push_back(mhz);
  }
  std::sort(out.begin(), out.end(), std::greater<>());  // highest first, as NVML lists them
  if (out.empty()) {
    throw_error(ErrorCode::kNotSupported,
                context(fmt::format("{}: the driver lists no clock levels", what)));
  }
  return out;
}

std::vector<Megahertz> AmdSmiGpu::supported_memory_clocks() {
  return clock_levels(abi::kClkTypeMem, "listing supported memory clocks");
}

std::vector<Megahertz> AmdSmiGpu::supported_graphics_clocks(Megahertz memory_clock) {
  const auto memory = supported_memory_clocks();
  if (std::find(memory.begin(), memory.end(), memory_clock) == memory.end()) {
    throw_error(ErrorCode::kInvalidArgument,
                context(fmt::format("memory clock {} MHz is not one of the GPU's memory clock "
                                    "levels (see supported_memory_clocks())",
                                    memory_clock.value())));
  }
  // AMD's graphics DPM levels do not depend on the memory clock.
  return clock_levels(abi::kClkTypeGfx, "listing supported graphics clocks");
}

void AmdSmiGpu::lock_clocks(std::uint32_t clock_type, Megahertz min, Megahertz max,
                            const char* what_kind) {
  const std::string what =
      fmt::format("locking the {} clock to [{}, {}] MHz", what_kind, min.value(), max.value());
  require(api_.set_gpu_clk_limit, "amdsmi_set_gpu_clk_limit", what);
  if (min.value() < 0 || max.value() > std::numeric_limits<std::uint32_t>::max()) {
    throw_error(ErrorCode::kInvalidArgument, context(what) + ": clock out of range");
  }
  if (min > max) {
    throw_error(ErrorCode::kInvalidArgument,
                context(what) + ": the minimum clock is above the maximum clock");
  }
  // The driver rejects a minimum above the current maximum, so when the new
  // range lies wholly above the current one the maximum goes first.
  bool max_first = false;
  if (api_.get_clock_info != nullptr) {
    abi::ClkInfo info{};
    auto lock = lib_->lock();
    if (api_.get_clock_info(handle_, clock_type, &info) == abi::kSuccess) {
      max_first = static_cast<std::uint64_t>(min.value()) > info.max_clk;
    }
  }
  const std::pair<std::uint32_t, Megahertz> order[2] = {
      max_first ? std::pair{abi::kClkLimitMax, max} : std::pair{abi::kClkLimitMin, min},
      max_first ? std::pair{abi::kClkLimitMin, min} : std::pair{abi::kClkLimitMax, max}};
  for (const auto& [limit_type, mhz] : order) {
    auto lock = lib_->lock();
    check(api_.set_gpu_clk_limit(handle_, clock_type, limit_type,
                                 static_cast<std::uint64_t>(mhz.value())),
          "amdsmi_set_gpu_clk_limit", what);
  }
}

void AmdSmiGpu::reset_clocks(std::uint32_t clock_type, const char* what_kind) {
  const std::string what = fmt::format("resetting the locked {} clock", what_kind);
  std::atomic<bool>& mine = clock_type == abi::kClkTypeMem ? mem_locked_ : gfx_locked_;
  const std::atomic<bool>& other = clock_type == abi::kClkTypeMem ? gfx_locked_ : mem_locked_;
  if (!other.load()) {
    // Nothing else stays locked: hand every clock back to the driver.
    require(api_.set_gpu_perf_level, "amdsmi_set_gpu_perf_level", what);
    auto lock = lib_->lock();
    check(api_.set_gpu_perf_level(handle_, abi::kPerfLevelAuto), "amdsmi_set_gpu_perf_level", what);
  } else {
    // Keep the other domain's lock: restore only this domain's full range.
    const auto levels = clock_levels(clock_type, what.c_str());
    lock_clocks(clock_type, levels.back(), levels.front(), what_kind);
  }
  mine.store(false);
}

void AmdSmiGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  lock_clocks(abi::kClkTypeGfx, min, max, clock_name(abi::kClkTypeGfx));
  gfx_locked_.store(true);
}

void AmdSmiGpu::reset_gpu_locked_clocks() {
  reset_clocks(abi::kClkTypeGfx, clock_name(abi::kClkTypeGfx));
}

void AmdSmiGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  lock_clocks(abi::kClkTypeMem, min, max, clock_name(abi::kClkTypeMem));
  mem_locked_.store(true);
}

void AmdSmiGpu::reset_memory_locked_clocks() {
  reset_clocks(abi::kClkTypeMem, clock_name(abi::kClkTypeMem));
}

Celsius AmdSmiGpu::temperature() {
  constexpr std::string_view what = "reading the hotspot temperature";
  require(api_.get_temp_metric, "amdsmi_get_temp_metric", what);
  std::int64_t millidegrees = 0;
  {
    auto lock = lib_->lock();
    check(api_.get_temp_metric(handle_, abi::kTemperatureTypeHotspot,
                               abi::kTemperatureMetricCurrent, &millidegrees),
          "amdsmi_get_temp_metric", what);
  }
  return Celsius(static_cast<double>(millidegrees) / 1000.0);
}

std::string AmdSmiGpu::pci_bus_id() {
  constexpr std::string_view what = "reading the PCI address";
  require(api_.get_gpu_bdf_id, "amdsmi_get_gpu_bdf_id", what);
  std::uint64_t bdf = 0;
  {
    auto lock = lib_->lock();
    check(api_.get_gpu_bdf_id(handle_, &bdf), "amdsmi_get_gpu_bdf_id", what);
  }
  return format_bdf_id(bdf);
}

device::GpuTelemetry AmdSmiGpu::telemetry() {
  device::GpuTelemetry t = device::Gpu::telemetry();  // the hotspot temperature
  if (api_.get_clock_info == nullptr) return t;
  for (const std::uint32_t type : {abi::kClkTypeGfx, abi::kClkTypeMem}) {
    abi::ClkInfo info{};
    abi::amdsmi_status_t status = abi::kSuccess;
    {
      auto lock = lib_->lock();
      status = api_.get_clock_info(handle_, type, &info);
    }
    if (status == abi::kNotSupported || status == abi::kNotYetImplemented) continue;
    check(status, "amdsmi_get_clock_info",
          type == abi::kClkTypeGfx ? "reading the graphics clock" : "reading the memory clock");
    (type == abi::kClkTypeGfx ? t.sm_clock : t.memory_clock) = Megahertz(info.clk);
  }
  return t;
}

std::vector<device::GpuProcess> AmdSmiGpu::compute_processes() {
  constexpr std::string_view what = "listing the processes using the GPU";
  constexpr const char* function = "amdsmi_get_gpu_process_list";
  require(api_.get_gpu_process_list, function, what);
  // Where pid and mem sit in each ABI's amdsmi_proc_info_t (amdsmi_api.h).
  std::size_t entry_size = 0;
  std::size_t pid_offset = 0;
  std::size_t mem_offset = 0;
  switch (lib_->version().abi) {
    case 24:
      entry_size = sizeof(abi::ProcInfo24);
      pid_offset = offsetof(abi::ProcInfo24, pid);
      mem_offset = offsetof(abi::ProcInfo24, mem);
      break;
    case 26:
      entry_size = sizeof(abi::ProcInfo26);
      pid_offset = offsetof(abi::ProcInfo26, pid);
      mem_offset = offsetof(abi::ProcInfo26, mem);
      break;
    default:
      // A wrong stride would read names as pids: refuse rather than guess.
      throw_error(ErrorCode::kNotSupported,
                  context(fmt::format(
                      "{}: zeus does not know the amdsmi_proc_info_t layout of AMD SMI {} (ABI "
                      "{}; it knows ABI 24, ROCm 6.3, and 26, ROCm 7.x), so it does not list "
                      "processes here and the attribution ledger leaves this GPU's active "
                      "energy unattributed; ROCm 7 or 6.3 lists them",
                      what, lib_->version().text, lib_->version().abi)));
  }

  // AMD SMI's size protocol: *max_processes = 0 asks for the count (SUCCESS);
  // a fill reports the number running in *max_processes and answers
  // OUT_OF_RESOURCES when that is more than the buffer held (processes
  // started between the calls), so the buffer grows and the fill repeats.
  constexpr int kMaxAttempts = 8;  // each retry grows the buffer by half again
  std::uint32_t count = 0;
  abi::amdsmi_status_t status = abi::kSuccess;
  {
    auto lock = lib_->lock();
    status = api_.get_gpu_process_list(handle_, &count, nullptr);
  }
  check(status, function, what);
  std::vector<std::uint64_t> buffer;  // 8-byte aligned, as the structs are
  std::uint32_t filled = 0;
  for (int attempt = 0;; ++attempt) {
    if (count == 0) return {};
    if (attempt == kMaxAttempts) {
      throw_error(ErrorCode::kInternal,
                  context(fmt::format("{}: {} kept asking for a bigger buffer (last: {} entries)",
                                      what, function, count)));
    }
    // Room to spare for processes that start before the fill.
    const std::uint32_t capacity = count + count / 2 + 4;
    buffer.assign((std::size_t{capacity} * entry_size + 7) / 8, 0);
    std::uint32_t n = capacity;
    {
      auto lock = lib_->lock();
      status = api_.get_gpu_process_list(handle_, &n, buffer.data());
    }
    if (status == abi::kOutOfResources && n > capacity) {
      count = n;
      continue;
    }
    check(status, function, what);
    filled = std::min(n, capacity);
    break;
  }

  std::vector<device::GpuProcess> out;
  out.reserve(filled);
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer.data());
  for (std::uint32_t i = 0; i < filled; ++i) {
    const unsigned char* entry = bytes + std::size_t{i} * entry_size;
    device::GpuProcess p;
    std::memcpy(&p.pid, entry + pid_offset, sizeof(p.pid));
    std::memcpy(&p.used_memory_bytes, entry + mem_offset, sizeof(p.used_memory_bytes));
    if (p.pid == 0) {
      // No process has pid 0: the library writes another layout than its
      // ABI major says. Naming nobody is honest; naming garbage is not.
      throw_error(ErrorCode::kNotSupported,
                  context(fmt::format("{}: {} of AMD SMI {} returned an entry with pid 0, so its "
                                      "amdsmi_proc_info_t is not the ABI {} layout zeus declares",
                                      what, function, lib_->version().text, lib_->version().abi)));
    }
    out.push_back(p);
  }
  return out;
}

std::string format_bdf_id(std::uint64_t bdf) {
  // AMD SMI's BDF id: domain in bits 63-32, a partition id in 31-28 (not part
  // of the address), bus in 15-8, device in 7-3, function in 2-0.
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", (bdf >> 32U) & 0xffffffffU, (bdf >> 8U) & 0xffU,
                     (bdf >> 3U) & 0x1fU, bdf & 0x7U);
}

}  // namespace zeus::amdsmi_internal
