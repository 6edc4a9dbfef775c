// Who is running on a GPU: the per-process facts the attribution ledger splits
// a GPU's energy by (src/monitor/attribution). Read-only, like telemetry.
//
// Three sources, best first, as NVML offers them:
//   - per-process utilization samples (nvmlDeviceGetProcessUtilization): the
//     driver samples each process's SM and memory activity about every 1/6 s
//     and keeps a short buffer; a reader passes the newest timestamp it has
//     seen (`since`) and gets only newer samples, processes that already
//     exited included. Unsupported on MIG-enabled GPUs and some boards.
//   - accounting (nvmlDeviceGetAccountingStats): per PID, the average
//     utilization over its life and its running time; needs accounting mode
//     on, and has no energy.
//   - the running compute processes (nvmlDeviceGetComputeRunningProcesses):
//     who holds a context now, nothing about how much each works.
// MIG: energy exists only for the parent GPU; mig_instances() lists the GPU
// instances with their SM counts and the processes in each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zeus::device {

// One utilization sample of one process (NVML's nvmlProcessUtilizationSample_t).
struct GpuProcessSample {
  std::uint32_t pid = 0;
  std::uint64_t timestamp_us = 0;  // CPU timestamp in microseconds (the driver's clock)
  unsigned sm_percent = 0;         // SM (compute) utilization over the sample's period
  unsigned memory_percent = 0;     // frame-buffer memory bandwidth utilization
};

// A process holding a compute context on the GPU (or on a MIG instance).
struct GpuProcess {
  std::uint32_t pid = 0;
  std::uint64_t used_memory_bytes = 0;  // 0 where the driver cannot say (Windows WDDM, some MIG)
};

// Accounting statistics of one process (nvmlAccountingStats_t).
struct GpuAccountingStat {
  std::uint32_t pid = 0;
  unsigned gpu_percent = 0;     // average SM utilization over the process's life
  unsigned memory_percent = 0;  // average memory utilization
  std::uint64_t time_ms = 0;    // how long the process has run (or ran) on the GPU
  std::uint64_t start_time_us = 0;
  bool running = false;
};

// One MIG GPU instance of a MIG-enabled GPU.
struct GpuMigInstance {
  unsigned gpu_instance_id = 0;
  std::string uuid;  // "MIG-..." as the driver reports it
  unsigned sm_count = 0;
  std::vector<GpuProcess> processes;
};

struct GpuMigLayout {
  bool enabled = false;       // MIG mode currently on
  unsigned gpu_sm_count = 0;  // the whole GPU's SMs (the denominator of each SM fraction)
  std::vector<GpuMigInstance> instances;
};

}  // namespace zeus::device
