// Lasting GPU settings for operators (`zeus gpu`): what `nvidia-smi -pl`,
// `-pm` and `-lgc` do, on any backend (NVML, AMD SMI, zeusd, simulated).
// Unlike the leased changes jobs make (GpuSettingsGuard, zeusd leases),
// nothing here is undone when the process ends.
//
// A change to several GPUs is checked against every GPU before any is
// touched, so a bad value or a GPU that cannot take it changes nothing. What
// cannot be checked (a clock table the device or zeusd does not report) and
// is refused midway is rolled back: the steps applied before are undone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/units.h"

namespace zeus::device {

// What one GPU's settings are now. A read the device cannot answer is empty.
struct GpuSettingsReport {
  int index = 0;
  std::string name;
  std::optional<Milliwatts> power_limit;
  std::optional<Milliwatts> default_power_limit;
  std::optional<PowerLimitConstraints> constraints;
  std::optional<bool> persistence_mode;
};

GpuSettingsReport read_gpu_settings(Gpu& gpu, int index);

struct ClockRange {
  Megahertz min{0};
  Megahertz max{0};
};

// Each field left empty (or false) leaves that setting alone.
struct GpuSettingsChange {
  std::optional<Milliwatts> power_limit;
  bool reset_power_limit = false;  // back to the default limit
  std::optional<bool> persistence_mode;
  std::optional<ClockRange> gpu_clocks;
  bool reset_gpu_clocks = false;
  std::optional<ClockRange> memory_clocks;
  bool reset_memory_clocks = false;

  bool empty() const;
};

// One line per setting changed, e.g. "GPU 0: power limit 700 W -> 300 W".
struct AppliedSettings {
  std::vector<std::string> changes;
};

// Checks `change` against every GPU (kInvalidArgument naming the GPU and the
// allowed range of power limits, graphics and memory clocks; contradictory or
// empty changes too), then applies it GPU by GPU. When a device refuses
// midway, every step applied before is undone, latest first (a power limit
// and persistence mode are set back, a clock lock is unlocked; an unlock
// cannot be undone), and the Error's message lists what was undone and what
// was not. `gpus[k]` has index `indices[k]` in messages.
AppliedSettings apply_gpu_settings(const std::vector<std::shared_ptr<Gpu>>& gpus,
                                   const std::vector<int>& indices,
                                   const GpuSettingsChange& change);

}  // namespace zeus::device
