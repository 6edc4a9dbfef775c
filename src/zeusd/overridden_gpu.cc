#include "zeusd/overridden_gpu.h"

namespace zeus::zeusd {

bool OverriddenGpu::run_override(GpuOp op, const GpuCommandArgs& args) {
  if (!overrides_.has(op)) return false;
  overrides_.run(op, args);
  return true;
}

void OverriddenGpu::set_power_limit(Milliwatts limit) {
  GpuCommandArgs a{.gpu_id = gpu_id_, .power_limit_mw = limit.value()};
  if (!run_override(GpuOp::kSetPowerLimit, a)) gpu_->set_power_limit(limit);
}

void OverriddenGpu::set_persistence_mode(bool enabled) {
  GpuCommandArgs a{.gpu_id = gpu_id_, .enabled = enabled};
  if (!run_override(GpuOp::kSetPersistenceMode, a)) gpu_->set_persistence_mode(enabled);
}

void OverriddenGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  GpuCommandArgs a{.gpu_id = gpu_id_, .min_clock_mhz = min.value(), .max_clock_mhz = max.value()};
  if (!run_override(GpuOp::kSetGpuLockedClocks, a)) gpu_->set_gpu_locked_clocks(min, max);
}

void OverriddenGpu::reset_gpu_locked_clocks() {
  if (!run_override(GpuOp::kResetGpuLockedClocks, {.gpu_id = gpu_id_})) {
    gpu_->reset_gpu_locked_clocks();
  }
}

void OverriddenGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  GpuCommandArgs a{.gpu_id = gpu_id_, .min_clock_mhz = min.value(), .max_clock_mhz = max.value()};
  if (!run_override(GpuOp::kSetMemLockedClocks, a)) gpu_->set_memory_locked_clocks(min, max);
}

void OverriddenGpu::reset_memory_locked_clocks() {
  if (!run_override(GpuOp::kResetMemLockedClocks, {.gpu_id = gpu_id_})) {
    gpu_->reset_memory_locked_clocks();
  }
}

void OverriddenGpu::reset_locked_clocks() {
  if (run_override(GpuOp::kResetLockedClocks, {.gpu_id = gpu_id_})) return;
  reset_gpu_locked_clocks();
  reset_memory_locked_clocks();
}

}  // namespace zeus::zeusd
