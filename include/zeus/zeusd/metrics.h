// The Prometheus text exposition of a node's GPUs and CPUs (GET /metrics on
// zeusd's metrics listener). Names follow Prometheus conventions (base units,
// `_total` for counters) and the DCGM exporter's label for the GPU index:
//
//   zeus_gpu_energy_joules_total{gpu,uuid,model_name}   counter (Volta and newer)
//   zeus_gpu_power_watts{gpu,uuid,model_name}           gauge, instant board power
//   zeus_gpu_power_average_watts{...}                   gauge, the driver's ~1 s average
//   zeus_gpu_power_limit_watts{...}                     gauge
//   zeus_gpu_temperature_celsius{...}                   gauge
//   zeus_cpu_package_energy_joules_total{package,zone}  counter (wraparound-corrected)
//   zeus_cpu_dram_energy_joules_total{package,zone}     counter
//   zeus_metrics_read_errors_total{device}              counter of failed reads
//
// and, for the same GPUs, the DCGM exporter's names, units and labels
// ({gpu,UUID,pci_bus_id,device,modelName,hostname}) where we read the same
// thing, so its dashboards work unchanged (docs/zeusd.md has the table):
//   DCGM_FI_DEV_SM_CLOCK, DCGM_FI_DEV_MEM_CLOCK (MHz), DCGM_FI_DEV_GPU_TEMP (C),
//   DCGM_FI_DEV_POWER_USAGE (W), DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ),
//   DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_MEM_COPY_UTIL (%),
//   DCGM_FI_DEV_FB_FREE, DCGM_FI_DEV_FB_USED (MiB),
//   DCGM_FI_DEV_CLOCKS_EVENT_REASONS = DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (bitmask)
//
// A reading that fails is left out of that scrape (and counted), never
// reported as 0. Rendering reuses label text built once, so a scrape
// allocates nothing beyond the response text.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"

namespace zeus::zeusd {

// This machine's name (gethostname), or empty.
std::string host_name();

// The DCGM families' host label: dcgm-exporter renamed its `Hostname` to
// `hostname`; dashboards written before that still query the old name.
inline constexpr std::string_view kDcgmHostnameLabel = "hostname";

// render() may run on several threads at once (devices are thread-safe).
class MetricsRenderer {
 public:
  // `hostname` is the value of the DCGM families' host label (empty: left
  // out), `hostname_label` its name; a name Prometheus would not accept
  // throws kInvalidArgument.
  MetricsRenderer(std::vector<std::shared_ptr<device::Gpu>> gpus,
                  std::vector<std::shared_ptr<device::Cpu>> cpus,
                  std::string hostname = host_name(),
                  std::string_view hostname_label = kDcgmHostnameLabel);

  // Appends the exposition to `out`; with enough capacity in `out`, no
  // allocation happens.
  void render(std::string& out);
  // Extra lines the daemon adds (leases, the attribution families); optional.
  std::function<void(std::string&)> extra;
  // Where the energy counters come from instead of a live read (optional):
  // with attribution on, zeusd renders them from the ledger's last poll so a
  // scrape's split families add up to its counters exactly. False: read live.
  std::function<bool(std::size_t gpu, double& joules)> gpu_energy;
  std::function<bool(std::size_t cpu, device::CpuEnergy& energy)> cpu_energy;

 private:
  struct GpuEntry {
    std::shared_ptr<device::Gpu> gpu;
    std::size_t index = 0;
    std::string labels;       // gpu="0",uuid="...",model_name="..."
    std::string dcgm_labels;  // gpu="0",UUID="...",pci_bus_id=...,hostname="..."
    bool energy = false;
  };
  struct CpuEntry {
    std::shared_ptr<device::Cpu> cpu;
    std::string labels;  // package="0",zone="package-0"
  };
  void render_dcgm(std::string& out);

  std::vector<GpuEntry> gpus_;
  std::vector<CpuEntry> cpus_;
  std::atomic<std::uint64_t> gpu_errors_{0};
  std::atomic<std::uint64_t> cpu_errors_{0};
};

// `text` escaped as a Prometheus label value (backslash, quote, newline).
std::string escape_label_value(std::string_view text);
// The same, appended to `out` in place (no temporary: scrapes stay allocation-free).
void append_label_value(std::string& out, std::string_view text);

}  // namespace zeus::zeusd
