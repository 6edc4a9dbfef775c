// A GPU whose control operations run the operator's command overrides where
// the override file has them, and the device's own calls otherwise. Everything
// above (the endpoints, leases restoring settings) goes through this one
// object, so a restore uses the same mechanism as the change it undoes.
#pragma once

#include <memory>

#include "zeus/device/forwarding_gpu.h"
#include "zeusd/command_override.h"

namespace zeus::zeusd {

// Thread-safe as the wrapped Gpu is; `overrides` must outlive it.
class OverriddenGpu final : public device::ForwardingGpu {
 public:
  OverriddenGpu(std::shared_ptr<device::Gpu> gpu, const CommandOverrides& overrides, int gpu_id)
      : device::ForwardingGpu(gpu), gpu_(std::move(gpu)), overrides_(overrides), gpu_id_(gpu_id) {}

  // The setters: an override where the file has one, else the device's own.
  void set_power_limit(Milliwatts limit) override;
  void set_persistence_mode(bool enabled) override;
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_gpu_locked_clocks() override;
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_memory_locked_clocks() override;
  // Both domains: the reset_locked_clocks override if there is one, else
  // each domain's own reset.
  void reset_locked_clocks();

  const std::shared_ptr<device::Gpu>& device() const { return gpu_; }

 private:
  bool run_override(GpuOp op, const GpuCommandArgs& args);

  const std::shared_ptr<device::Gpu> gpu_;
  const CommandOverrides& overrides_;
  const int gpu_id_;
};

}  // namespace zeus::zeusd
