#include "zeus/device/gpu.h"

#include <fmt/format.h>

#include "zeus/util/error.h"

namespace zeus {

std::string Gpu::pci_bus_id() {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("{}: this GPU backend has no PCI address", name()));
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

}  // namespace zeus
