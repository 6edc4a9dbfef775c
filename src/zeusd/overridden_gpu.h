// A GPU whose control operations run the operator's command overrides where
// the override file has them, and the device's own calls otherwise. Everything
// above (the endpoints, leases restoring settings) goes through this one
// object, so a restore uses the same mechanism as the change it undoes.
#pragma once

#include <memory>

#include "zeus/device/gpu.h"
#include "zeusd/command_override.h"

namespace zeus::zeusd {

// Thread-safe as the wrapped Gpu is; `overrides` must outlive it.
class OverriddenGpu final : public Gpu {
 public:
  OverriddenGpu(std::shared_ptr<Gpu> gpu, const CommandOverrides& overrides, int gpu_id)
      : gpu_(std::move(gpu)), overrides_(overrides), gpu_id_(gpu_id) {}

  std::string name() override { return gpu_->name(); }
  std::string uuid() override { return gpu_->uuid(); }
  GpuArchitecture architecture() override { return gpu_->architecture(); }
  bool supports_energy_counter() override { return gpu_->supports_energy_counter(); }
  Joules total_energy() override { return gpu_->total_energy(); }
  Watts power(PowerDomain domain) override { return gpu_->power(domain); }
  PowerLimitConstraints power_limit_constraints() override {
    return gpu_->power_limit_constraints();
  }
  Milliwatts power_limit() override { return gpu_->power_limit(); }
  Milliwatts default_power_limit() override { return gpu_->default_power_limit(); }
  bool persistence_mode() override { return gpu_->persistence_mode(); }
  std::vector<Megahertz> supported_memory_clocks() override {
    return gpu_->supported_memory_clocks();
  }
  std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) override {
    return gpu_->supported_graphics_clocks(memory_clock);
  }
  Celsius temperature() override { return gpu_->temperature(); }
  std::string pci_bus_id() override { return gpu_->pci_bus_id(); }
  GpuTelemetry telemetry() override { return gpu_->telemetry(); }
  int minor_number() override { return gpu_->minor_number(); }

  void set_power_limit(Milliwatts limit) override;
  void set_persistence_mode(bool enabled) override;
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_gpu_locked_clocks() override;
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_memory_locked_clocks() override;
  // Both domains: the reset_locked_clocks override if there is one, else
  // each domain's own reset.
  void reset_locked_clocks();

  const std::shared_ptr<Gpu>& device() const { return gpu_; }

 private:
  bool run_override(GpuOp op, const GpuCommandArgs& args);

  const std::shared_ptr<Gpu> gpu_;
  const CommandOverrides& overrides_;
  const int gpu_id_;
};

}  // namespace zeus::zeusd
