// ProfiledGpu: a simulated GPU of one pipeline stage for closed-loop
// emulation. Each forward or backward computation takes exactly the time and
// energy the stage's Perseus profile lists at the SM frequency locked at that
// moment (the highest profiled frequency not above the locked maximum; the
// fastest when unlocked). Between computations it draws the blocking power
// P_b. Time is an injected ManualClock that only run() and the caller's
// waits move, so an emulation gives the same numbers on any machine under
// any load. Everything else is an ordinary Gpu: the frequency controller and
// the energy counter reach it through the seam, like a real GPU.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/optimizer/pipeline_frequency/planner/profile.h"
#include "zeus/util/clock.h"

namespace zeus::pipeline_frequency {

// Thread-safe: mutex_ guards the settings and the energy account (the
// controller's thread locks clocks while the stage's thread runs work).
class ProfiledGpu final : public device::Gpu {
 public:
  // kInvalidArgument when the profile has no rows for `stage`.
  ProfiledGpu(const pipeline_frequency::StageProfile& profile, int stage, Watts p_blocking,
              ManualClock& clock);

  std::string name() override;
  std::string uuid() override;
  device::GpuArchitecture architecture() override { return device::GpuArchitecture::kAmpere; }
  bool supports_energy_counter() override { return true; }
  Joules total_energy() override;
  Watts power(device::PowerDomain domain) override;
  device::PowerLimitConstraints power_limit_constraints() override;
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
  Celsius temperature() override { return Celsius(50.0); }

  // Runs one computation now: the clock advances by its profiled time at the
  // frequency it runs at, which is returned.
  Megahertz run(pipeline_frequency::Instruction instruction);
  // The frequency a computation would run at now.
  Megahertz frequency(pipeline_frequency::Instruction instruction);
  // Whether graphics clocks are locked (false after a reset: the GPU is free).
  bool clocks_locked();
  int stage() const { return stage_; }

  static constexpr Megahertz kMemoryClock{1593};  // A100 SXM HBM2e

 private:
  struct Cost {
    Seconds time{0};
    Joules energy{0};
  };
  using Menu = std::map<Megahertz, Cost>;  // ascending frequency
  const Menu& menu(pipeline_frequency::Instruction instruction) const;
  Megahertz frequency_locked(const Menu& menu) const;  // requires mutex_
  void settle_idle_locked();                           // requires mutex_

  const int stage_;
  const Watts p_blocking_;
  ManualClock& clock_;
  Menu forward_, backward_;
  std::mutex mutex_;
  std::optional<Megahertz> locked_max_;
  bool memory_locked_ = false;
  Milliwatts limit_;
  bool persistence_ = false;
  Joules energy_{0};    // up to idle_since_
  Seconds idle_since_;  // the clock at the end of the last computation or idle settlement
};

}  // namespace zeus::pipeline_frequency
