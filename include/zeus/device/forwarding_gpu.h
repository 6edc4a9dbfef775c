// A GPU that forwards every call to another: the base of decorators that
// change a few calls and pass the rest through (zeusd's command overrides,
// test doubles that script one source), so a method added to Gpu is
// forwarded in one place rather than in every decorator. A decorator that
// changes power() changes read_powers() too (returning false reads every
// domain through power()), or the batched read would pass it by.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zeus/device/gpu.h"

namespace zeus::device {

class ForwardingGpu : public Gpu {
 public:
  explicit ForwardingGpu(std::shared_ptr<Gpu> inner) : inner_(std::move(inner)) {}

  std::string name() override { return inner_->name(); }
  std::string uuid() override { return inner_->uuid(); }
  GpuArchitecture architecture() override { return inner_->architecture(); }
  bool supports_energy_counter() override { return inner_->supports_energy_counter(); }
  Joules total_energy() override { return inner_->total_energy(); }
  Watts power(PowerDomain domain) override { return inner_->power(domain); }
  bool read_powers(std::span<const PowerDomain> domains, std::span<Watts> out) override {
    return inner_->read_powers(domains, out);
  }
  PowerLimitConstraints power_limit_constraints() override {
    return inner_->power_limit_constraints();
  }
  Milliwatts power_limit() override { return inner_->power_limit(); }
  Milliwatts default_power_limit() override { return inner_->default_power_limit(); }
  void set_power_limit(Milliwatts limit) override { inner_->set_power_limit(limit); }
  bool persistence_mode() override { return inner_->persistence_mode(); }
  void set_persistence_mode(bool enabled) override { inner_->set_persistence_mode(enabled); }
  std::vector<Megahertz> supported_memory_clocks() override {
    return inner_->supported_memory_clocks();
  }
  std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) override {
    return inner_->supported_graphics_clocks(memory_clock);
  }
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override {
    inner_->set_gpu_locked_clocks(min, max);
  }
  void reset_gpu_locked_clocks() override { inner_->reset_gpu_locked_clocks(); }
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override {
    inner_->set_memory_locked_clocks(min, max);
  }
  void reset_memory_locked_clocks() override { inner_->reset_memory_locked_clocks(); }
  Celsius temperature() override { return inner_->temperature(); }
  std::string pci_bus_id() override { return inner_->pci_bus_id(); }
  GpuTelemetry telemetry() override { return inner_->telemetry(); }
  int minor_number() override { return inner_->minor_number(); }
  std::vector<GpuProcessSample> process_utilization(std::uint64_t since_us) override {
    return inner_->process_utilization(since_us);
  }
  std::vector<GpuAccountingStat> accounting_stats() override { return inner_->accounting_stats(); }
  std::vector<GpuProcess> compute_processes() override { return inner_->compute_processes(); }
  GpuMigLayout mig_layout() override { return inner_->mig_layout(); }

 protected:
  Gpu& inner() { return *inner_; }

 private:
  std::shared_ptr<Gpu> inner_;
};

}  // namespace zeus::device
