// One AMD GPU behind the Gpu interface, talking to AMD SMI through the shared
// AmdSmiLibrary session (which it keeps alive). Thread-safe: every AMD SMI
// call holds the library's lock() (a real mutex before ROCm 7.2), and the few
// mutable facts are atomics.
//
// Differences from NVML that callers see: persistence mode and memory power
// are kNotSupported; instant or average power is kNotSupported where the
// driver reports "N/A" for it; supported graphics clocks do not depend on the
// memory clock; resetting one clock domain restores that domain's full DPM
// range, and once no domain stays locked hands clocks back to the driver
// (performance level "auto").
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "device/amd/amdsmi_library.h"
#include "zeus/device/gpu.h"

namespace zeus::amdsmi_internal {

struct AmdSmiGpuInfo {
  unsigned index = 0;      // this process's GPU index (after visibility variables)
  unsigned hip_index = 0;  // index among all the node's AMD GPUs
  std::string name;
  std::string uuid;
  // MI250/MI250X: the second die of a package, whose power the first die
  // reports; power and energy are kNotSupported here.
  bool second_die = false;
};

// "0000:c1:00.0" from amdsmi_get_gpu_bdf_id's packed id.
std::string format_bdf_id(std::uint64_t bdf);

class AmdSmiGpu final : public device::Gpu {
 public:
  AmdSmiGpu(std::shared_ptr<const AmdSmiLibrary> library,
            amdsmi_abi::amdsmi_processor_handle handle, AmdSmiGpuInfo info);

  std::string name() override { return info_.name; }
  std::string uuid() override { return info_.uuid; }
  device::GpuArchitecture architecture() override { return device::GpuArchitecture::kUnknown; }

  bool supports_energy_counter() override;
  Joules total_energy() override;
  Watts power(device::PowerDomain domain) override;

  device::PowerLimitConstraints power_limit_constraints() override;
  Milliwatts power_limit() override;
  Milliwatts default_power_limit() override;
  void set_power_limit(Milliwatts limit) override;

  bool persistence_mode() override;
  void set_persistence_mode(bool enabled) override;

  std::vector<Megahertz> supported_memory_clocks() override;
  std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) override;
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_gpu_locked_clocks() override;
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_memory_locked_clocks() override;

  Celsius temperature() override;
  std::string pci_bus_id() override;
  // Current graphics and memory clocks (amdsmi_get_clock_info) and the
  // hotspot temperature; utilization, clock event reasons and memory use are
  // not read from AMD SMI yet, so they stay empty.
  device::GpuTelemetry telemetry() override;

  // Who runs on the GPU, for the attribution ledger (gpu_processes.h).
  // compute_processes: amdsmi_get_gpu_process_list (pid and `mem`, bytes);
  // kNotSupported where the library lacks it, and on AMD SMI ABI 25 (ROCm
  // 6.4), whose amdsmi_proc_info_t layout is not declared here.
  // process_utilization and accounting_stats stay kNotSupported: AMD SMI
  // gives each process a cumulative GFX engine time (engine_usage.gfx, ns),
  // not the driver-sampled, timestamped utilization the seam promises, and
  // no accounting; so the ledger splits AMD GPUs equally over these
  // processes. mig_layout: AMD GPUs have no MIG (a partitioned MI300 shows
  // each partition as its own GPU), so it is always {enabled = false}.
  std::vector<device::GpuProcess> compute_processes() override;
  device::GpuMigLayout mig_layout() override { return device::GpuMigLayout{}; }

  // Raw power readings in watts (kPowerNotAvailable where "N/A"). For discovery.
  struct PowerReadings {
    std::uint32_t current_w;
    std::uint32_t average_w;
  };
  PowerReadings read_power_info() const;

 private:
  std::string context(std::string_view what) const;
  void check(amdsmi_abi::amdsmi_status_t status, std::string_view function,
             std::string_view what) const;
  template <class Fn>
  void require(Fn fn, std::string_view symbol, std::string_view what) const {
    if (fn == nullptr) throw_missing_symbol(symbol, context(what));
  }
  void refuse_second_die(std::string_view what) const;
  amdsmi_abi::PowerCapInfo power_cap_info() const;
  std::vector<Megahertz> clock_levels(std::uint32_t clock_type, const char* what) const;
  void lock_clocks(std::uint32_t clock_type, Megahertz min, Megahertz max, const char* what);
  void reset_clocks(std::uint32_t clock_type, const char* what);

  std::shared_ptr<const AmdSmiLibrary> lib_;
  const AmdSmiLibrary::Api& api_;
  amdsmi_abi::amdsmi_processor_handle handle_;
  AmdSmiGpuInfo info_;

  static constexpr int kUnknown = -1;
  std::atomic<int> has_counter_{kUnknown};  // 0/1 once probed
  // Clock domains this object locked and has not reset.
  std::atomic<bool> gfx_locked_{false};
  std::atomic<bool> mem_locked_{false};
};

}  // namespace zeus::amdsmi_internal
