// Who runs on an NVIDIA GPU: per-process utilization samples, accounting
// statistics, the running compute processes, and the MIG layout
// (zeus/device/gpu_processes.h says what each is good for).
#include "device/nvml/nvml_processes.h"

#include <fmt/format.h>
#include <chrono>

#include <algorithm>
#include <cstring>

#include "device/nvml/nvml_gpu.h"
#include "zeus/util/error.h"

namespace zeus::nvml_internal {
namespace {

namespace abi = nvml_abi;

// Enough for any real list to settle (each retry at least doubles the
// buffer); a driver that asks for more every time is a bug, not a busy GPU.
constexpr int kMaxListAttempts = 8;

constexpr std::string_view kAccountingOffHint =
    "accounting mode is off on this GPU; turn it on with `nvidia-smi -am 1` (as root; it resets "
    "when the driver unloads, so keep persistence mode on: `nvidia-smi -pm 1`)";

// NVML's "size, then fill" protocol: `call(count, buffer)` with no buffer
// answers INSUFFICIENT_SIZE and the count it needs (SUCCESS when the list is
// empty); the fill gets a buffer with room to spare, since the list may grow
// between the calls, and grows it again on INSUFFICIENT_SIZE. Returns NVML's
// last answer (INSUFFICIENT_SIZE only when it kept asking for more); on
// SUCCESS, `out` holds the entries.
template <class T, class Call>
int read_list(Call call, std::vector<T>& out) {
  out.clear();
  unsigned count = 0;
  int rc = call(&count, static_cast<T*>(nullptr));
  for (int attempt = 0; attempt < kMaxListAttempts && rc == abi::kErrorInsufficientSize;
       ++attempt) {
    out.resize(std::max<std::size_t>(std::size_t{count} + count / 2 + 4, out.size() * 2));
    count = static_cast<unsigned>(out.size());
    rc = call(&count, out.data());
  }
  out.resize(rc == abi::kSuccess ? std::min<std::size_t>(count, out.size()) : 0);
  return rc;
}

[[noreturn]] void throw_kept_growing(std::string_view context, std::string_view function) {
  throw_error(ErrorCode::kInternal,
              fmt::format("{}: {} kept asking for a bigger buffer", context, function));
}

std::uint64_t known_or_zero(unsigned long long value) {
  return value == abi::kValueNotAvailableULL ? 0 : static_cast<std::uint64_t>(value);
}

unsigned percent_or_zero(unsigned value) {
  return value == abi::kValueNotAvailableUInt ? 0 : value;
}

device::GpuAccountingStat to_stat(unsigned pid, const abi::nvmlAccountingStats_t& s) {
  device::GpuAccountingStat stat;
  stat.pid = pid;
  // NOT_AVAILABLE where the GPU has no utilization counters: 0, as the
  // struct cannot say "unknown" (the samples are the better source there).
  stat.gpu_percent = percent_or_zero(s.gpuUtilization);
  stat.memory_percent = percent_or_zero(s.memoryUtilization);
  stat.time_ms = static_cast<std::uint64_t>(s.time);
  stat.start_time_us = static_cast<std::uint64_t>(s.startTime);
  stat.running = s.isRunning != 0;
  if (stat.running && stat.time_ms == 0 && stat.start_time_us > 0) {
    // NVML reports 0 until a process ends; how long it has run is then the
    // time since its start (a wall-clock timestamp in µs).
    const auto now_us =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    if (now_us > stat.start_time_us) stat.time_ms = (now_us - stat.start_time_us) / 1000;
  }
  return stat;
}

}  // namespace

ComputeProcessesEntry compute_processes_entry(const NvmlLibrary::Api& api) {
  ComputeProcessesEntry entry;
  if (api.device_get_compute_running_processes_v3 != nullptr) {
    entry.fn = api.device_get_compute_running_processes_v3;
    if (api.exports_conf_compute_mem_size_info && !api.exports_running_process_detail_list) {
      entry.entry_size = sizeof(abi::nvmlProcessInfoCc_t);
    }
    return entry;
  }
  entry.fn = api.device_get_compute_running_processes_v2;
  entry.symbol = "nvmlDeviceGetComputeRunningProcesses_v2";
  return entry;
}

std::vector<device::GpuProcess> decode_process_infos(std::span<const std::byte> bytes,
                                                     unsigned count, std::size_t entry_size) {
  std::vector<device::GpuProcess> out;
  const std::size_t fits = entry_size == 0 ? 0 : bytes.size() / entry_size;
  const std::size_t n = std::min<std::size_t>(count, fits);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Both layouts start with the v2 fields; copy, as entries of 32 bytes
    // are not v2 objects.
    abi::nvmlProcessInfo_v2_t info{};
    std::memcpy(&info, bytes.data() + i * entry_size, sizeof(info));
    out.push_back({info.pid, known_or_zero(info.usedGpuMemory)});
  }
  return out;
}

std::vector<device::GpuProcessSample> NvmlGpu::process_utilization(std::uint64_t since_us) {
  constexpr std::string_view what = "reading per-process utilization";
  constexpr const char* function = "nvmlDeviceGetProcessUtilization";
  require(api_.device_get_process_utilization, function, what);
  std::vector<abi::nvmlProcessUtilizationSample_t> samples;
  const int rc = read_list(
      [&](unsigned* count, abi::nvmlProcessUtilizationSample_t* buffer) {
        return api_.device_get_process_utilization(device_, buffer, count, since_us);
      },
      samples);
  // NOT_FOUND: no sample newer than since_us (the GPU was idle, or the
  // caller is up to date).
  if (rc == abi::kErrorNotFound) return {};
  if (rc == abi::kErrorInsufficientSize) throw_kept_growing(context(what), function);
  check(rc, function, what);
  std::vector<device::GpuProcessSample> out;
  out.reserve(samples.size());
  for (const auto& s : samples) {
    // The driver filters by timestamp already; dropping what it should not
    // have sent keeps a caller's cursor from going backwards.
    if (s.timeStamp <= since_us) continue;
    out.push_back({s.pid, static_cast<std::uint64_t>(s.timeStamp), s.smUtil, s.memUtil});
  }
  return out;
}

std::vector<unsigned> NvmlGpu::read_accounting_pids() const {
  constexpr std::string_view what = "listing the processes accounting has recorded";
  constexpr const char* function = "nvmlDeviceGetAccountingPids";
  std::vector<unsigned> pids;
  const int rc = read_list(
      [&](unsigned* count, unsigned* buffer) {
        return api_.device_get_accounting_pids(device_, count, buffer);
      },
      pids);
  if (rc == abi::kErrorInsufficientSize) throw_kept_growing(context(what), function);
  // NOT_SUPPORTED here means accounting was turned off since we looked.
  if (rc != abi::kSuccess) {
    lib_->fail(rc, function, context(what),
               rc == abi::kErrorNotSupported ? kAccountingOffHint : std::string_view());
  }
  return pids;
}

std::vector<device::GpuAccountingStat> NvmlGpu::accounting_stats() {
  constexpr std::string_view what = "reading accounting statistics";
  require(api_.device_get_accounting_mode, "nvmlDeviceGetAccountingMode", what);
  require(api_.device_get_accounting_pids, "nvmlDeviceGetAccountingPids", what);
  require(api_.device_get_accounting_stats, "nvmlDeviceGetAccountingStats", what);
  int mode = abi::kFeatureDisabled;
  check(api_.device_get_accounting_mode(device_, &mode), "nvmlDeviceGetAccountingMode", what);
  if (mode != abi::kFeatureEnabled) {
    throw_error(ErrorCode::kNotSupported, context(fmt::format("{}: {}", what, kAccountingOffHint)));
  }
  std::vector<device::GpuAccountingStat> out;
  for (const unsigned pid : read_accounting_pids()) {
    abi::nvmlAccountingStats_t stats{};
    const int rc = api_.device_get_accounting_stats(device_, pid, &stats);
    // NOT_FOUND: the pid left the driver's circular buffer since the listing.
    if (rc == abi::kErrorNotFound) continue;
    if (rc != abi::kSuccess) {
      lib_->fail(rc, "nvmlDeviceGetAccountingStats",
                 context(fmt::format("{} of process {}", what, pid)),
                 rc == abi::kErrorNotSupported ? kAccountingOffHint : std::string_view());
    }
    out.push_back(to_stat(pid, stats));
  }
  return out;
}

std::vector<device::GpuProcess> NvmlGpu::read_compute_processes(abi::nvmlDevice_t device,
                                                                std::string_view what) const {
  const ComputeProcessesEntry entry = compute_processes_entry(api_);
  require(entry.fn, "nvmlDeviceGetComputeRunningProcesses_v3 (or _v2)", what);
  // Room for the larger entry size whichever the driver writes, so a wrong
  // guess of its layout can garble entries but never overrun the buffer.
  std::vector<abi::nvmlProcessInfoCc_t> buffer;
  const int rc = read_list(
      [&](unsigned* count, abi::nvmlProcessInfoCc_t* slots) {
        return entry.fn(device, count, reinterpret_cast<abi::nvmlProcessInfo_v2_t*>(slots));
      },
      buffer);
  if (rc == abi::kErrorInsufficientSize) throw_kept_growing(context(what), entry.symbol);
  check(rc, entry.symbol, what);
  return decode_process_infos(std::as_bytes(std::span(buffer)),
                              static_cast<unsigned>(buffer.size()), entry.entry_size);
}

std::vector<device::GpuProcess> NvmlGpu::compute_processes() {
  return read_compute_processes(device_, "listing the running compute processes");
}

unsigned NvmlGpu::read_sm_count(abi::nvmlDevice_t device, std::string_view what) const {
  abi::nvmlDeviceAttributes_t attributes{};
  const int rc = api_.device_get_attributes_v2(device, &attributes);
  if (rc == abi::kErrorNotSupported) return 0;
  check(rc, "nvmlDeviceGetAttributes_v2", what);
  return attributes.multiprocessorCount;
}

device::GpuMigInstance NvmlGpu::read_mig_instance(abi::nvmlDevice_t mig, unsigned index) const {
  const std::string what = fmt::format("reading MIG device {}", index);
  device::GpuMigInstance instance;
  check(api_.device_get_gpu_instance_id(mig, &instance.gpu_instance_id),
        "nvmlDeviceGetGpuInstanceId", what);
  char uuid[abi::kStringBufferSize] = {};
  check(api_.device_get_uuid(mig, uuid, sizeof(uuid)), "nvmlDeviceGetUUID", what);
  uuid[sizeof(uuid) - 1] = '\0';
  instance.uuid = uuid;
  instance.sm_count = read_sm_count(mig, what);
  instance.processes = read_compute_processes(mig, what);
  return instance;
}

void NvmlGpu::require_mig_entry_points(std::string_view what) const {
  require(api_.device_get_max_mig_device_count, "nvmlDeviceGetMaxMigDeviceCount", what);
  require(api_.device_get_mig_device_handle_by_index, "nvmlDeviceGetMigDeviceHandleByIndex", what);
  require(api_.device_get_gpu_instance_id, "nvmlDeviceGetGpuInstanceId", what);
  require(api_.device_get_attributes_v2, "nvmlDeviceGetAttributes_v2", what);
  require(compute_processes_entry(api_).fn, "nvmlDeviceGetComputeRunningProcesses_v3 (or _v2)",
          what);
}

device::GpuMigLayout NvmlGpu::mig_layout() {
  constexpr std::string_view what = "reading the MIG layout";
  require(api_.device_get_mig_mode, "nvmlDeviceGetMigMode", what);
  device::GpuMigLayout layout;
  unsigned current = 0;
  unsigned pending = 0;
  const int rc = api_.device_get_mig_mode(device_, &current, &pending);
  // NOT_SUPPORTED: a GPU that cannot do MIG, which is a GPU with MIG off.
  if (rc == abi::kErrorNotSupported) return layout;
  check(rc, "nvmlDeviceGetMigMode", what);
  layout.enabled = current == abi::kDeviceMigEnable;
  if (!layout.enabled) return layout;

  require_mig_entry_points(what);
  unsigned slots = 0;
  check(api_.device_get_max_mig_device_count(device_, &slots), "nvmlDeviceGetMaxMigDeviceCount",
        what);
  unsigned instance_sms = 0;
  for (unsigned i = 0; i < slots; ++i) {
    abi::nvmlDevice_t mig = nullptr;
    const int found = api_.device_get_mig_device_handle_by_index(device_, i, &mig);
    if (found == abi::kErrorNotFound) continue;  // an empty slot
    check(found, "nvmlDeviceGetMigDeviceHandleByIndex", fmt::format("{} (MIG device {})", what, i));
    layout.instances.push_back(read_mig_instance(mig, i));
    instance_sms += layout.instances.back().sm_count;
  }
  // NVML documents nvmlDeviceGetAttributes for MIG devices only, and drivers
  // answer NOT_SUPPORTED for the parent. Then the instances' SMs stand in for
  // the GPU's: each fraction is then of the SMs in use, so SMs outside any
  // instance get no share (the whole GPU's count is not in NVML).
  layout.gpu_sm_count = read_sm_count(device_, what);
  if (layout.gpu_sm_count == 0) layout.gpu_sm_count = instance_sms;
  return layout;
}

}  // namespace zeus::nvml_internal
