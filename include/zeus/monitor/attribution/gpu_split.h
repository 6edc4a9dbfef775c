// How much each process used a GPU in one poll interval: the weights the
// ledger splits the GPU's active energy by, from the best source the GPU
// offers (zeus/device/gpu_processes.h), and the method that gave them.
//
//   1. Per-process utilization samples: a process's weight is the sum of its
//      SM utilization over the samples of the interval (the driver samples
//      at a fixed period, so the sum is its time-integrated utilization).
//      Processes that exited mid-interval still have their samples. When no
//      sample shows SM activity, memory utilization weighs instead.
//   2. Accounting: the growth of utilization × running time per process.
//   3. An equal split over the processes holding a compute context.
//   MIG (utilization and accounting are unsupported there): each GPU
//   instance with processes weighs its SM fraction, shared equally by its
//   processes — an estimate, reported as one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/monitor/attribution/ledger.h"

namespace zeus::attribution {

struct ProcessWeight {
  std::uint32_t pid = 0;
  double weight = 0;
};

struct GpuSplit {
  Method method = Method::kNone;
  std::vector<ProcessWeight> weights;  // one entry per pid, weights ≥ 0
  // Whether any process held the GPU (for idle learning): false only when
  // the source can tell that nobody did.
  bool busy = true;
};

// The pure steps, one per source.
// Samples newer than the cursor; `running` are the processes holding a
// context now (a sample-less interval of a running process weighs 0).
GpuSplit split_from_samples(std::span<const device::GpuProcessSample> samples);
// Accounting now against the previous poll's (pid -> gpu_percent × time_ms).
GpuSplit split_from_accounting(std::span<const device::GpuAccountingStat> now,
                               const std::unordered_map<std::uint32_t, double>& before);
GpuSplit split_equally(std::span<const device::GpuProcess> running);
GpuSplit split_mig(const device::GpuMigLayout& layout);

// The per-GPU state of the sources: the samples' cursor and the accounting
// history. next() asks the GPU, falling back source by source; a source that
// answers kNotSupported is not asked again. Other device errors propagate.
class GpuSplitter {
 public:
  GpuSplit next(device::Gpu& gpu);

 private:
  GpuSplit from_samples(device::Gpu& gpu);
  std::optional<GpuSplit> from_accounting(device::Gpu& gpu);

  bool samples_supported_ = true;
  bool accounting_supported_ = true;
  bool mig_supported_ = true;
  bool primed_ = false;  // the first samples call only sets the cursor
  std::uint64_t cursor_us_ = 0;
  std::unordered_map<std::uint32_t, double> accounting_before_;
};

// Learns a GPU's idle power: the lowest average power over a stretch of
// `quiet_polls` consecutive intervals with no process on the GPU.
class IdleLearner {
 public:
  explicit IdleLearner(unsigned quiet_polls = 10) : quiet_polls_(quiet_polls) {}
  // One interval: its energy, its length and whether anyone used the GPU.
  void observe(Millijoules energy, double seconds, bool busy);
  std::optional<Watts> learned() const { return learned_; }
  void set_learned(Watts w) { learned_ = w; }

 private:
  unsigned quiet_polls_;
  unsigned quiet_ = 0;
  double quiet_mj_ = 0;
  double quiet_s_ = 0;
  std::optional<Watts> learned_;
};

}  // namespace zeus::attribution
