// Builders shared by the monitor tests: simulated GPUs on a manual clock and a
// scriptable CPU package.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/devices.h"
#include "zeus/device/forwarding_gpu.h"
#include "zeus/device/sim_gpu.h"

namespace zeus::testing {

// A CPU package whose energy the test sets.
class ScriptedCpu final : public device::Cpu {
 public:
  std::string name() override { return "package-0"; }
  bool has_dram() override { return true; }
  device::CpuEnergy total_energy() override {
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
class SteppedPowerGpu final : public device::ForwardingGpu {
 public:
  SteppedPowerGpu(ManualClock& clock, Seconds update_period, Seconds read_time)
      : device::ForwardingGpu(std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock)),
        clock_(clock),
        period_(update_period),
        read_(read_time) {}
  Watts power(device::PowerDomain) override {
    clock_.advance(read_);
    return Watts(100.0 + static_cast<double>(
                             static_cast<long long>(clock_.now().count() / period_.count()) % 7));
  }
  // Every read goes through power() above.
  bool read_powers(std::span<const device::PowerDomain>, std::span<Watts>) override {
    return false;
  }
  bool supports_energy_counter() override { return false; }

 private:
  ManualClock& clock_;
  Seconds period_, read_;
};

struct SimRig {
  std::vector<std::shared_ptr<device::SimGpu>> sims;
  std::vector<std::shared_ptr<ScriptedCpu>> cpus;
  device::DeviceInventory inventory;
};

inline SimRig make_rig(Clock& clock, int gpus, const device::SimGpuModel& model = {},
                       int cpus = 0) {
  SimRig rig;
  for (int i = 0; i < gpus; ++i) {
    auto gpu = std::make_shared<device::SimGpu>(model, clock, i);
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
