// A simulated GPU: a first-class backend that demos, examples, tests and dry
// runs use without hardware. Its power and speed follow a small physical
// model (below); its energy counter integrates that power over the injected
// clock, so with a ManualClock a whole training run takes no real time.
//
// Model. Let x be the graphics clock as a fraction of the maximum, and
// load in [0, 1] the utilization. Then
//   power(x)      = idle + load * (busy - idle) * x^3          (dynamic power ~ f V^2 ~ f^3)
//   throughput(x) = load * peak / ((1 - c) + c / x)            (c = compute-bound fraction)
// Under a power limit L the GPU runs at the largest x <= the locked maximum
// with power(x) <= L (never below the minimum clock). Energy per unit of work
// power/throughput therefore has an interior optimum, like real GPUs.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/clock.h"

namespace zeus::device {

// Parameters of the model, in unit types. Every field has a default; a JSON
// model file may set any subset, with the unit in the field name
// ({"busy_power_w": 350, "max_graphics_clock_mhz": 1980, "average_window_s": 1};
// see docs/measuring.md and sim_gpu_model_json.h). validate() keeps every
// value finite and physically sensible, so nothing computed from a model
// overflows.
struct SimGpuModel {
  std::string name = "Zeus Simulated GPU";
  GpuArchitecture architecture = GpuArchitecture::kAmpere;
  bool energy_counter = true;  // false models pre-Volta GPUs
  bool memory_power = true;    // whether the memory power domain exists
  Watts idle_power{90.0};
  Watts busy_power{300.0};  // at full load, maximum clock, no cap
  double memory_power_fraction = 0.15;
  Watts power_limit_min{100.0};
  Watts power_limit_max{300.0};
  Watts power_limit_default{300.0};
  Watts power_limit_step{1.0};  // set_power_limit rounds down to this grid
  Megahertz max_graphics_clock{1410};
  Megahertz min_graphics_clock{210};
  Megahertz graphics_clock_step{15};
  std::vector<Megahertz> memory_clocks = {Megahertz(1215)};
  double peak_throughput = 100.0;  // work units per second at load 1, max clock
  double compute_bound_fraction = 0.9;
  double load = 1.0;                   // utilization when nothing else is said
  Seconds counter_update_period{0.0};  // >0: energy counter steps like NVML's
  Seconds average_window{1.0};         // window of the kDeviceAverage domain
  Celsius idle_temperature{35.0};
  Celsius busy_temperature{75.0};
  // Device memory, for telemetry(): in use is 2 % (driver and context) plus
  // load x 88 % of it, so the reading moves with the load.
  Bytes memory_total{std::int64_t{40960} * 1048576};  // 40 GiB, as the A100 this models

  // kInvalidArgument saying which value is out of its sensible range.
  void validate() const;

  // The model's steady state at full load under power limit `limit` (no clock
  // lock): the clock fraction, power drawn, and work rate. Optimizer tests
  // compute true optima from these.
  double clock_fraction_at(Milliwatts limit) const;
  Watts power_at(Milliwatts limit) const;
  double throughput_at(Milliwatts limit) const;
};

// Thread-safe: a mutex guards the settings and the energy integral.
class SimGpu final : public Gpu {
 public:
  SimGpu(SimGpuModel model, Clock& clock, int index = 0);

  std::string name() override;
  std::string uuid() override;
  GpuArchitecture architecture() override;
  bool supports_energy_counter() override;
  Joules total_energy() override;
  Watts power(PowerDomain domain) override;
  PowerLimitConstraints power_limit_constraints() override;
  Milliwatts power_limit() override;
  Milliwatts default_power_limit() override;
  void set_power_limit(Milliwatts limit) override;
  bool persistence_mode() override;
  void set_persistence_mode(bool enabled) override;
  std::vector<Megahertz> supported_memory_clocks() override;
  std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) override;
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_gpu_locked_clocks() override;
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_memory_locked_clocks() override;
  Celsius temperature() override;
  // Derived from the model's state: utilization = load; SM clock = the clock
  // the power cap and lock allow (the minimum when idle); memory clock = the
  // highest supported; memory utilization = load x (1 - compute-bound
  // fraction); clock event reasons = gpu_idle at load 0, sw_power_cap when the
  // power limit holds the clock down, applications_clocks_setting when a
  // locked maximum does; memory as SimGpuModel::memory_total says.
  GpuTelemetry telemetry() override;

  // Simulation controls.
  void set_load(double load);  // utilization in [0, 1]
  double load();
  // Runs `work_units` of work at full load: the clock advances (ManualClock)
  // or sleeps (SteadyClock) for work / throughput, then the load returns to
  // what it was. Returns the time it took.
  Seconds execute(double work_units);
  double throughput();  // current work rate, units per second
  // Energy the model says was used since construction, ignoring any counter
  // quantization: the ground truth accuracy tests compare against.
  Joules true_energy();
  // Makes every following call throw kGpuLost, like a GPU falling off the bus.
  void fail_as_lost();
  const SimGpuModel& model() const { return model_; }

 private:
  struct Segment {  // constant power from `start` on
    double start;
    double energy_at_start;
    double power;
  };
  double clock_fraction_locked() const;  // requires mutex_
  double current_power_locked() const;   // requires mutex_
  Celsius temperature_locked() const;    // requires mutex_
  double energy_at_locked(double t);     // requires mutex_
  void change_state_locked();            // requires mutex_; starts a new segment
  void check_alive_locked() const;

  const SimGpuModel model_;
  Clock& clock_;
  const int index_;
  std::mutex mutex_;
  Milliwatts limit_;
  bool persistence_ = false;
  double load_;
  // Only the locked maximum matters: under load the clock sits at the highest
  // allowed value, and the power cap wins over a locked minimum.
  double locked_max_mhz_;
  bool lost_ = false;
  std::vector<Segment> segments_;  // recent history; older ones are pruned
};

// One data-parallel training step on simulated GPUs that share `clock`: each
// runs `work_units` at once, so time moves by the slowest GPU's time, which
// is returned. kInvalidArgument for no GPUs or work that is not positive.
Seconds run_data_parallel_step(std::span<SimGpu* const> gpus, ManualClock& clock,
                               double work_units);

// N simulated GPUs sharing one clock and one model.
std::vector<std::unique_ptr<SimGpu>> make_sim_gpus(int count, const SimGpuModel& model,
                                                   Clock& clock);

}  // namespace zeus::device
