// The GlobalPowerLimitOptimizer of the Zeus paper (NSDI'23): a just-in-time
// profiler that, during the first steps of training, runs a few steps at each
// candidate GPU power limit, measures time and energy, and then keeps the
// limit a PowerLimitSelector picks. See docs/power-limit.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/gpu_settings_guard.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/callback/callback.h"
#include "zeus/optimizer/power_limit/reducer.h"
#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/util/units.h"

namespace zeus::power_limit {

struct GlobalPowerLimitOptimizerOptions {
  // Chooses the limit from the measurements. nullptr: zeus-cost with eta 0.5
  // and world_size = the number of GPUs measured over all ranks.
  std::shared_ptr<const PowerLimitSelector> selector;
  int wait_steps = 1;      // steps at the original settings before profiling (>= 0)
  int warmup_steps = 10;   // unmeasured steps after each limit change (>= 0)
  int profile_steps = 40;  // measured steps per candidate limit (> 0)
  Watts pl_step{25.0};     // distance between candidate limits (> 0)
  // JSON profile (power_limit_profile_json.h). Empty: none. If the file exists
  // the optimizer applies its optimum at once; otherwise its folder is checked
  // for writing at construction and it is written (atomically) when profiling
  // ends.
  std::string profile_path;
  // Never call a GPU setter: profiling measures every candidate at whatever
  // limit the GPUs have, and the result is the limit that would be chosen.
  bool dry_run = false;
  // Paper §5 observer mode: profile as usual, then run at the maximum limit and
  // only report the limit that would have been chosen.
  bool observer_mode = false;
  // Combines measurements across ranks (energy summed, time the maximum).
  // nullptr: single process. Must outlive the optimizer.
  Reducer* reducer = nullptr;
};

// What the optimizer would gain, from its own measurements: the chosen limit
// against the maximum limit (both measured over the same number of steps).
struct PowerLimitSaving {
  Milliwatts chosen;
  Milliwatts maximum;
  Joules energy_at_chosen, energy_at_maximum;
  Seconds time_at_chosen, time_at_maximum;
  // (E_max - E_chosen) / E_max; nullopt when E_max is 0 (a counter that never
  // moved), so no NaN or infinity is ever reported as a saving.
  std::optional<double> energy_saving_fraction() const;
  // (T_chosen - T_max) / T_max, > 0 is slower; nullopt when T_max is 0.
  std::optional<double> time_change_fraction() const;
};

// A training Callback; the loop calls on_step_begin() before every step and
// on_epoch_end() after every epoch (other hooks are ignored). Construction
// turns persistence mode on and sets the maximum limit (unless dry_run); the
// original settings come back when the optimizer is destroyed, at exit(), and
// on SIGINT/SIGTERM (GpuSettingsGuard). Not thread-safe: call it from the
// training thread. The monitor must outlive the optimizer.
class GlobalPowerLimitOptimizer final : public callback::Callback {
 public:
  enum class Phase { kReady, kWarmup, kProfiling, kDone };
  static constexpr std::size_t kMaxCandidateLimits = 1000;
  struct State {
    Phase phase;
    // Ready: the limit to profile next. Warmup/Profiling: the limit being
    // profiled. Done: the chosen (optimal) limit.
    Milliwatts power_limit;
    int steps;  // steps left in this phase (0 in Done)
  };

  // Errors: kInvalidArgument for bad parameters (and for more than
  // kMaxCandidateLimits candidates: raise pl_step); kHeterogeneous when the
  // monitored GPUs differ in name or power-limit constraints; kNoPermission
  // (saying what to do) when persistence mode or the limit cannot be set;
  // kParse / kInvalidArgument naming the file for a bad profile file.
  GlobalPowerLimitOptimizer(monitor::WindowMonitor& monitor,
                            GlobalPowerLimitOptimizerOptions options = {});
  // The reference's positional signature (Python Zeus), for convenience.
  GlobalPowerLimitOptimizer(monitor::WindowMonitor& monitor,
                            std::shared_ptr<const PowerLimitSelector> selector, int wait_steps = 1,
                            int warmup_steps = 10, int profile_steps = 40,
                            Watts pl_step = Watts(25.0), std::string profile_path = {});
  ~GlobalPowerLimitOptimizer() override;
  GlobalPowerLimitOptimizer(const GlobalPowerLimitOptimizer&) = delete;
  GlobalPowerLimitOptimizer& operator=(const GlobalPowerLimitOptimizer&) = delete;

  void on_step_begin() override;
  void on_epoch_end() override;

  State state() const { return state_; }
  bool done() const { return state_.phase == Phase::kDone; }
  // Candidate limits, highest first: max, max - pl_step, ... down to >= min.
  const std::vector<Milliwatts>& candidate_limits() const { return candidates_; }
  // Completed measurements in profiling order (or as loaded from the profile).
  const std::vector<PowerLimitMeasurement>& measurements() const { return measurements_; }
  // The selector's choice once done. In observer and dry-run modes this is the
  // limit that would have been set; the GPUs keep the maximum / their limit.
  std::optional<Milliwatts> optimal_power_limit() const;
  // The saving of the choice against the maximum limit, once done (nullopt if
  // the maximum limit was not measured, e.g. a partial profile file).
  std::optional<PowerLimitSaving> saving() const;
  // The limit this optimizer last set on the GPUs (in dry-run: would have set).
  Milliwatts applied_power_limit() const { return applied_; }
  const PowerLimitSelector& selector() const { return *selector_; }
  bool dry_run() const { return options_.dry_run; }
  bool observer_mode() const { return options_.observer_mode; }

  // Sets a limit chosen later from the stored profile (the carbon-aware
  // controller's period decisions: no re-profiling). Once done only, and only
  // a measured limit: kFailedPrecondition / kInvalidArgument otherwise. In
  // observer mode the GPUs keep the maximum (only logged); in dry run nothing
  // is set but applied_power_limit() says what would be.
  void apply_power_limit(Milliwatts limit);
  // The GPUs this process controls (the carbon-aware cost's default MaxPower
  // multiplier; give the job's total explicitly across ranks).
  std::size_t num_gpus() const { return gpus_.size(); }

  // The window name used for limit `limit`: "__GlobalPowerLimitOptimizer_<W>".
  static std::string window_name(Milliwatts limit);

  // Why the profile could not be saved when profiling ended (e.g. a full
  // disk); empty when it was saved or not asked for. Profiling and the choice
  // are not lost: the optimizer goes on with its choice.
  const std::string& profile_save_error() const { return profile_save_error_; }

 private:
  void set_limit(Milliwatts limit);
  void enter_warmup(Milliwatts limit);
  void enter_profiling(Milliwatts limit);
  void finish_profiling();
  void finish(bool from_file);
  std::optional<Milliwatts> next_candidate(Milliwatts after) const;

  monitor::WindowMonitor& monitor_;
  GlobalPowerLimitOptimizerOptions options_;
  std::shared_ptr<const PowerLimitSelector> selector_;
  LocalReducer local_reducer_;
  Reducer* reducer_;
  std::vector<std::shared_ptr<device::Gpu>> gpus_;
  std::vector<Milliwatts> candidates_;
  std::unique_ptr<device::GpuSettingsGuard> guard_;  // null in dry-run
  std::vector<PowerLimitMeasurement> measurements_;
  State state_{Phase::kReady, Milliwatts(0), 0};
  Milliwatts applied_{0};
  std::optional<Milliwatts> optimal_;
  bool dry_run_note_logged_ = false;
  long long epoch_steps_ = 0;        // on_step_begin calls since the last epoch end
  bool short_epoch_warned_ = false;  // epochs too short to ever finish profiling
  std::string profile_save_error_;
};

const char* phase_name(GlobalPowerLimitOptimizer::Phase phase);

}  // namespace zeus::power_limit
