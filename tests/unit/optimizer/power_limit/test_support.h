// Test rig for the power-limit optimizer: simulated GPUs behind a recording
// decorator, a ManualClock, and an EnergyMonitor over them.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zeus/device/forwarding_gpu.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/util/error.h"

namespace zeus::testing {

// One recorded setter call.
struct SetterCall {
  enum Kind { kPowerLimit, kPersistence } kind;
  std::int64_t value;  // mW, or 0/1
};

// Forwards to a SimGpu (ForwardingGpu passes the reads through) and records
// every setter call (in memory, and as text lines "L <mW>" / "P <0|1>" to
// record_fd when >= 0, so a forked child can report what it did even when it
// is killed). deny_setters: setters throw kNoPermission like NVML without
// CAP_SYS_ADMIN.
class ObservedGpu final : public device::ForwardingGpu {
 public:
  explicit ObservedGpu(std::shared_ptr<device::SimGpu> sim, std::string name_override = {})
      : device::ForwardingGpu(sim),
        sim_(std::move(sim)),
        name_override_(std::move(name_override)) {}

  std::string name() override { return name_override_.empty() ? sim_->name() : name_override_; }
  void set_power_limit(Milliwatts limit) override {
    check_allowed();
    record({SetterCall::kPowerLimit, limit.value()});
    sim_->set_power_limit(limit);
  }
  void set_persistence_mode(bool enabled) override {
    check_allowed();
    record({SetterCall::kPersistence, enabled ? 1 : 0});
    sim_->set_persistence_mode(enabled);
  }
  void set_gpu_locked_clocks(Megahertz a, Megahertz b) override {
    record_clock(fmt::format("G {}-{}", a.value(), b.value()));
    sim_->set_gpu_locked_clocks(a, b);
  }
  void reset_gpu_locked_clocks() override {
    record_clock("reset G");
    sim_->reset_gpu_locked_clocks();
  }
  void set_memory_locked_clocks(Megahertz a, Megahertz b) override {
    record_clock(fmt::format("M {}-{}", a.value(), b.value()));
    sim_->set_memory_locked_clocks(a, b);
  }
  void reset_memory_locked_clocks() override {
    record_clock("reset M");
    sim_->reset_memory_locked_clocks();
  }
  // Locked-clock calls in order: "G min-max", "M min-max", "reset G", "reset M".
  std::vector<std::string> clock_calls() const {
    std::lock_guard lock(mutex_);
    return clock_calls_;
  }

  std::vector<SetterCall> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::vector<std::int64_t> limit_calls() const {
    std::vector<std::int64_t> out;
    for (const auto& c : calls()) {
      if (c.kind == SetterCall::kPowerLimit) out.push_back(c.value);
    }
    return out;
  }
  void set_deny_setters(bool deny) { deny_ = deny; }
  void set_record_fd(int fd) { record_fd_ = fd; }

 private:
  void check_allowed() const {
    if (deny_) {
      throw_error(ErrorCode::kNoPermission, "NVML: insufficient permissions (simulated)");
    }
  }
  void record_clock(std::string call) {
    check_allowed();
    std::lock_guard lock(mutex_);
    clock_calls_.push_back(std::move(call));
  }
  void record(SetterCall call) {
    std::lock_guard lock(mutex_);
    calls_.push_back(call);
    if (record_fd_ >= 0) {
      const std::string line =
          (call.kind == SetterCall::kPowerLimit ? "L " : "P ") + std::to_string(call.value) + "\n";
      [[maybe_unused]] const ssize_t n = ::write(record_fd_, line.data(), line.size());
    }
  }

  std::shared_ptr<device::SimGpu> sim_;
  std::string name_override_;
  mutable std::mutex mutex_;
  std::vector<SetterCall> calls_;
  std::vector<std::string> clock_calls_;
  bool deny_ = false;
  int record_fd_ = -1;
};

// A model whose energy optimum is inside the limit range (the default model's
// lies at its minimum limit).
inline device::SimGpuModel test_model() {
  device::SimGpuModel m;
  m.power_limit_min = Watts(50.0);
  m.power_limit_max = Watts(300.0);
  m.power_limit_default = Watts(300.0);
  m.counter_update_period = Seconds(0.0);  // exact energy
  return m;
}

// n simulated GPUs (all at load 1: they are busy whenever time advances), a
// ManualClock and a monitor over all of them.
struct SimRig {
  explicit SimRig(int n = 1, device::SimGpuModel model = test_model()) : model_(model) {
    for (int i = 0; i < n; ++i) {
      sims.push_back(std::make_shared<device::SimGpu>(model, clock, i));
      gpus.push_back(std::make_shared<ObservedGpu>(sims.back()));
      inventory.gpus.push_back(gpus.back());
      inventory.gpu_physical_indices.push_back(static_cast<unsigned>(i));
    }
    inventory.gpu_backend = "sim";
    make_monitor();
  }
  void make_monitor() {
    monitor::EnergyMonitorOptions o;
    o.clock = &clock;
    o.cpu_indices = std::vector<int>{};
    monitor = std::make_unique<monitor::EnergyMonitor>(inventory, o);
  }
  // One training step of `work` units on every GPU at once (data parallel):
  // the GPUs run concurrently, so the clock moves by the slowest one's time.
  void step(double work) {
    double rate = sims[0]->throughput();
    for (const auto& s : sims) rate = std::min(rate, s->throughput());
    clock.advance(Seconds(work / rate));
  }
  const device::SimGpuModel& model() const { return model_; }

  device::SimGpuModel model_;
  ManualClock clock;
  std::vector<std::shared_ptr<device::SimGpu>> sims;
  std::vector<std::shared_ptr<ObservedGpu>> gpus;
  device::DeviceInventory inventory;
  std::unique_ptr<monitor::EnergyMonitor> monitor;
};

}  // namespace zeus::testing
