// Builders shared by the monitor tests: simulated GPUs on a manual clock and a
// scriptable CPU package.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"

namespace zeus::testing {

// A CPU package whose energy the test sets.
class ScriptedCpu final : public Cpu {
 public:
  std::string name() override { return "package-0"; }
  bool has_dram() override { return true; }
  CpuEnergy total_energy() override {
    std::lock_guard lock(mutex_);
    return {package_, dram_};
  }
  void add(Joules package, Joules dram) {
    std::lock_guard lock(mutex_);
    package_ += package;
    dram_ += dram;
  }

 private:
  std::mutex mutex_;
  Joules package_{1000.0};
  Joules dram_{50.0};
};

// A GPU whose power reading changes every `update_period` of a ManualClock
// and each read of which takes `read_time` (the clock moves by it), like a
// driver that refreshes its sensor periodically. Everything else is a SimGpu.
class SteppedPowerGpu final : public Gpu {
 public:
  SteppedPowerGpu(ManualClock& clock, Seconds update_period, Seconds read_time)
      : clock_(clock), sim_(SimGpuModel{}, clock), period_(update_period), read_(read_time) {}
  Watts power(PowerDomain) override {
    clock_.advance(read_);
    return Watts(100.0 + static_cast<double>(
                             static_cast<long long>(clock_.now().count() / period_.count()) % 7));
  }
  std::string name() override { return sim_.name(); }
  std::string uuid() override { return sim_.uuid(); }
  GpuArchitecture architecture() override { return sim_.architecture(); }
  bool supports_energy_counter() override { return false; }
  Joules total_energy() override { return sim_.total_energy(); }
  PowerLimitConstraints power_limit_constraints() override {
    return sim_.power_limit_constraints();
  }
  Milliwatts power_limit() override { return sim_.power_limit(); }
  Milliwatts default_power_limit() override { return sim_.default_power_limit(); }
  void set_power_limit(Milliwatts l) override { sim_.set_power_limit(l); }
  bool persistence_mode() override { return sim_.persistence_mode(); }
  void set_persistence_mode(bool e) override { sim_.set_persistence_mode(e); }
  std::vector<Megahertz> supported_memory_clocks() override {
    return sim_.supported_memory_clocks();
  }
  std::vector<Megahertz> supported_graphics_clocks(Megahertz m) override {
    return sim_.supported_graphics_clocks(m);
  }
  void set_gpu_locked_clocks(Megahertz a, Megahertz b) override {
    sim_.set_gpu_locked_clocks(a, b);
  }
  void reset_gpu_locked_clocks() override { sim_.reset_gpu_locked_clocks(); }
  void set_memory_locked_clocks(Megahertz a, Megahertz b) override {
    sim_.set_memory_locked_clocks(a, b);
  }
  void reset_memory_locked_clocks() override { sim_.reset_memory_locked_clocks(); }
  Celsius temperature() override { return sim_.temperature(); }

 private:
  ManualClock& clock_;
  SimGpu sim_;
  Seconds period_, read_;
};

struct SimRig {
  std::vector<std::shared_ptr<SimGpu>> sims;
  std::vector<std::shared_ptr<ScriptedCpu>> cpus;
  DeviceInventory inventory;
};

inline SimRig make_rig(Clock& clock, int gpus, const SimGpuModel& model = {}, int cpus = 0) {
  SimRig rig;
  for (int i = 0; i < gpus; ++i) {
    auto gpu = std::make_shared<SimGpu>(model, clock, i);
    rig.sims.push_back(gpu);
    rig.inventory.gpus.push_back(gpu);
  }
  for (int i = 0; i < cpus; ++i) {
    auto cpu = std::make_shared<ScriptedCpu>();
    rig.cpus.push_back(cpu);
    rig.inventory.cpus.push_back(cpu);
  }
  rig.inventory.gpu_backend = "sim";
  return rig;
}

}  // namespace zeus::testing
