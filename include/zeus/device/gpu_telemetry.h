// Operator telemetry of one GPU: utilization, clocks, why the clocks are held
// down, memory in use, temperature. A read-only snapshot (Gpu::telemetry())
// that `zeus monitor power --telemetry` and zeusd's Prometheus metrics report.
//
// Every field is optional: a backend or a GPU that cannot give a value leaves
// it empty (NVML's NOT_SUPPORTED, a driver without the call, a MIG-enabled GPU
// for utilization), so a missing value is never passed off as a measured 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "zeus/util/units.h"

namespace zeus::device {

struct PercentTag {};
struct BytesTag {};
using Percent = Quantity<PercentTag>;            // 0-100
using Bytes = Quantity<BytesTag, std::int64_t>;  // exact: memory sizes are integers
constexpr double to_mebibytes(Bytes b) { return static_cast<double>(b.value()) / 1048576.0; }

// Why the clocks are below their maximum, as NVML's bitmask
// (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*; the bits did not
// change with the rename). 0 means nothing holds the clocks down.
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
}  // namespace clock_event

// Calls `visit(name)` for each bit set in `mask`, in bit order, with a stable
// snake_case name ("gpu_idle", "sw_power_cap", ...); bits this code does not
// know come out as "unknown_0x<bit>" through `unknown(bit)` instead.
template <class Visit, class Unknown>
void for_each_clock_event_reason(std::uint64_t mask, Visit visit, Unknown unknown);
// The name of one known bit, or an empty view.
std::string_view clock_event_reason_name(std::uint64_t bit);

struct GpuTelemetry {
  // Percent of the last sample period (1/6 s to 1 s, per product) in which a
  // kernel ran (NVML utilization.gpu; DCGM_FI_DEV_GPU_UTIL).
  std::optional<Percent> gpu_utilization;
  // Percent of that period in which device memory was read or written (NVML
  // utilization.memory; DCGM_FI_DEV_MEM_COPY_UTIL).
  std::optional<Percent> memory_utilization;
  std::optional<Megahertz> sm_clock;                 // current SM clock
  std::optional<Megahertz> memory_clock;             // current memory clock
  std::optional<std::uint64_t> clock_event_reasons;  // clock_event:: bits
  std::optional<Bytes> memory_used;                  // device memory allocated (incl. reserved)
  std::optional<Bytes> memory_free;
  std::optional<Bytes> memory_total;
  std::optional<Celsius> temperature;  // GPU core (AMD: hotspot), as Gpu::temperature()
};

template <class Visit, class Unknown>
void for_each_clock_event_reason(std::uint64_t mask, Visit visit, Unknown unknown) {
  for (unsigned b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((mask & bit) == 0) continue;
    const std::string_view name = clock_event_reason_name(bit);
    if (name.empty()) {
      unknown(bit);
    } else {
      visit(name);
    }
  }
}

}  // namespace zeus::device
