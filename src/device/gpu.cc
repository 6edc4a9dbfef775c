#include "zeus/device/gpu.h"

#include <fmt/format.h>

#include "zeus/util/error.h"

namespace zeus::device {

std::string Gpu::pci_bus_id() {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend has no PCI address", name()));
}

int Gpu::minor_number() {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend has no device minor number", name()));
}

std::vector<GpuProcessSample> Gpu::process_utilization(std::uint64_t /*since_us*/) {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend has no per-process utilization", name()));
}

std::vector<GpuAccountingStat> Gpu::accounting_stats() {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend has no process accounting", name()));
}

std::vector<GpuProcess> Gpu::compute_processes() {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend cannot list its processes", name()));
}

GpuMigLayout Gpu::mig_layout() {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend cannot say whether MIG is on", name()));
}

GpuTelemetry Gpu::telemetry() {
  GpuTelemetry t;
  try {
    t.temperature = temperature();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kNotSupported) throw;
  }
  return t;
}

std::string_view clock_event_reason_name(std::uint64_t bit) {
  switch (bit) {
    case clock_event::kGpuIdle:
      return "gpu_idle";
    case clock_event::kApplicationsClocksSetting:
      return "applications_clocks_setting";
    case clock_event::kSwPowerCap:
      return "sw_power_cap";
    case clock_event::kHwSlowdown:
      return "hw_slowdown";
    case clock_event::kSyncBoost:
      return "sync_boost";
    case clock_event::kSwThermalSlowdown:
      return "sw_thermal_slowdown";
    case clock_event::kHwThermalSlowdown:
      return "hw_thermal_slowdown";
    case clock_event::kHwPowerBrakeSlowdown:
      return "hw_power_brake_slowdown";
    case clock_event::kDisplayClockSetting:
      return "display_clock_setting";
    default:
      return {};
  }
}

const char* power_domain_name(PowerDomain domain) {
  switch (domain) {
    case PowerDomain::kDeviceInstant:
      return "instant";
    case PowerDomain::kDeviceAverage:
      return "average";
    case PowerDomain::kMemoryAverage:
      return "memory";
  }
  return "unknown";
}

const char* architecture_name(GpuArchitecture arch) {
  switch (arch) {
    case GpuArchitecture::kKepler:
      return "kepler";
    case GpuArchitecture::kMaxwell:
      return "maxwell";
    case GpuArchitecture::kPascal:
      return "pascal";
    case GpuArchitecture::kVolta:
      return "volta";
    case GpuArchitecture::kTuring:
      return "turing";
    case GpuArchitecture::kAmpere:
      return "ampere";
    case GpuArchitecture::kAda:
      return "ada";
    case GpuArchitecture::kHopper:
      return "hopper";
    case GpuArchitecture::kBlackwell:
      return "blackwell";
    case GpuArchitecture::kRubin:
      return "rubin";
    case GpuArchitecture::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace zeus::device
