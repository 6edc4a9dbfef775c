// The GPU seam: one narrow interface every GPU backend implements (NVML, the
// simulated GPU; any other vendor or a remote daemon implements the same).
// Values come back in the project's unit types, converted once inside the
// backend.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "zeus/device/gpu_processes.h"
#include "zeus/device/gpu_telemetry.h"
#include "zeus/util/units.h"

namespace zeus::device {

// Which power reading to take.
enum class PowerDomain {
  kDeviceInstant,  // the board's current power draw
  kDeviceAverage,  // the driver's trailing (about 1 s) average of board power
  kMemoryAverage,  // average power of the GPU memory (HBM GPUs only)
};
const char* power_domain_name(PowerDomain domain);  // "instant", "average", "memory"

// GPU generations as NVML numbers them; kUnknown is a chip the driver does not
// name (treated as new: it is most likely newer than this code).
enum class GpuArchitecture {
  kKepler = 2,
  kMaxwell = 3,
  kPascal = 4,
  kVolta = 5,
  kTuring = 6,
  kAmpere = 7,
  kAda = 8,
  kHopper = 9,
  kBlackwell = 10,
  kRubin = 13,
  kUnknown = -1,
};
const char* architecture_name(GpuArchitecture arch);

struct PowerLimitConstraints {
  Milliwatts min;
  Milliwatts max;
};

// One GPU. Every method may throw zeus::Error: kNotSupported when the device or
// backend cannot do it (an explicit outcome, never a made-up zero),
// kNoPermission for setters without privileges, kGpuLost when the device
// disappears. All methods are thread-safe: the energy monitor and the power
// sampler call them from different threads.
class Gpu {
 public:
  virtual ~Gpu() = default;

  virtual std::string name() = 0;
  virtual std::string uuid() = 0;
  virtual GpuArchitecture architecture() = 0;

  // Whether total_energy() works (NVIDIA: Volta and newer).
  virtual bool supports_energy_counter() = 0;
  // Energy since an arbitrary origin (NVML: driver load); only differences mean
  // anything. Monotonic.
  virtual Joules total_energy() = 0;
  virtual Watts power(PowerDomain domain) = 0;
  // Reads several domains in one go where the backend can (NVML: one
  // nvmlDeviceGetFieldValues call for all of them): out[i] = power(domains[i]).
  // false when it cannot do all of them at once, or any of them failed: the
  // caller then reads them one by one with power(), which reports what failed
  // as power() always does. The default does nothing and returns false.
  virtual bool read_powers(std::span<const PowerDomain> domains, std::span<Watts> out) {
    (void)domains;
    (void)out;
    return false;
  }

  virtual PowerLimitConstraints power_limit_constraints() = 0;
  virtual Milliwatts power_limit() = 0;
  virtual Milliwatts default_power_limit() = 0;
  virtual void set_power_limit(Milliwatts limit) = 0;
  void reset_power_limit() { set_power_limit(default_power_limit()); }

  virtual bool persistence_mode() = 0;
  virtual void set_persistence_mode(bool enabled) = 0;

  virtual std::vector<Megahertz> supported_memory_clocks() = 0;
  virtual std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) = 0;
  virtual void set_gpu_locked_clocks(Megahertz min, Megahertz max) = 0;
  virtual void reset_gpu_locked_clocks() = 0;
  virtual void set_memory_locked_clocks(Megahertz min, Megahertz max) = 0;
  virtual void reset_memory_locked_clocks() = 0;

  virtual Celsius temperature() = 0;

  // The GPU's PCI address, so an operator can map it to a slot: NVIDIA's as
  // NVML gives it ("00000000:3B:00.0", 8-digit domain), AMD's in the Linux
  // sysfs form ("0000:c1:00.0"). kNotSupported where the backend cannot say
  // (simulated GPUs, a driver without the call), which is the default.
  virtual std::string pci_bus_id();

  // Operator telemetry (utilization, clocks, clock event reasons, memory,
  // temperature) in one read. What the backend or GPU cannot give is left
  // empty (kNotSupported never escapes from here); other failures (a lost
  // GPU) throw. The default gives only temperature(); backends that can
  // say more override it. Reads only: safe next to a running measurement.
  virtual GpuTelemetry telemetry();

  // The minor number of the GPU's device file (/dev/nvidia<minor>), which
  // DCGM's exporter reports as device="nvidia<minor>"; it can differ from the
  // index. kNotSupported where the backend has no such number (the default).
  virtual int minor_number();

  // Who is running on the GPU (zeus/device/gpu_processes.h), for the
  // attribution ledger. Each throws kNotSupported where the backend or GPU
  // cannot say (the defaults), never an empty list that means "unknown".
  //
  // Utilization samples newer than `since_us` (0: everything buffered), in
  // any order; an empty list when nothing is newer.
  virtual std::vector<GpuProcessSample> process_utilization(std::uint64_t since_us);
  // Accounting statistics of the processes the driver has recorded
  // (kNotSupported also while accounting mode is off).
  virtual std::vector<GpuAccountingStat> accounting_stats();
  // The processes holding a compute context now.
  virtual std::vector<GpuProcess> compute_processes();
  // The MIG layout (enabled = false on a GPU with MIG off).
  virtual GpuMigLayout mig_layout();
};

}  // namespace zeus::device
