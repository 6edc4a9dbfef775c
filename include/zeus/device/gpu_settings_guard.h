// Restoring GPU settings on every exit path. A GpuSettingsGuard records the
// power limit and persistence mode of a set of GPUs when it is created, and
// puts back whatever was changed through it (power limit, persistence mode,
// locked graphics and memory clocks): in its destructor (normal return,
// exception), from std::atexit (plain exit()), and on SIGINT/SIGTERM through
// the project's one signal mechanism (zeus/util/signals.h: a kCleanup
// subscription, so the settings come back before the signal ends the
// process). Not covered: SIGKILL, _exit(), quick_exit() and crashes; zeusd's
// client tracking covers those.
//
// Locked clocks are restored by resetting them: NVML can set and reset a
// locked range but not read one, so a GPU whose clocks were locked before the
// guard existed comes back unlocked if its clocks are changed through it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/signals.h"
#include "zeus/util/units.h"

namespace zeus::device {

// Owns the "what to put back" record of a set of GPUs. Settings changed
// directly on the Gpu objects are not tracked. Setters take the whole set
// (the power-limit optimizer) or one GPU by its position in the set (a
// frequency controller, a zeusd lease). Thread-safe: a mutex guards the
// record, so the signal dispatch thread may restore while another thread
// calls a setter; after restore() every setter is a no-op returning false (a
// dying process must not undo the restore).
class GpuSettingsGuard {
 public:
  // Reads each GPU's current power limit and persistence mode (throws what the
  // GPU throws; a GPU without persistence mode, as AMD's, is fine: setting it
  // throws the GPU's kNotSupported) and registers for signal/atexit restore.
  explicit GpuSettingsGuard(std::vector<std::shared_ptr<Gpu>> gpus);
  ~GpuSettingsGuard();  // restore()
  GpuSettingsGuard(const GpuSettingsGuard&) = delete;
  GpuSettingsGuard& operator=(const GpuSettingsGuard&) = delete;

  // Sets the limit on every GPU, skipping GPUs already at `limit` through this
  // guard. Throws the GPU's error (e.g. kNoPermission); GPUs set before the
  // failure stay recorded and are restored. False if already restored.
  bool set_power_limit(Milliwatts limit);
  bool set_persistence_mode(bool enabled);
  bool set_gpu_locked_clocks(Megahertz min, Megahertz max);
  bool set_memory_locked_clocks(Megahertz min, Megahertz max);

  // The same for the GPU at position `gpu` of the set (kInvalidArgument when
  // out of range).
  bool set_power_limit(std::size_t gpu, Milliwatts limit);
  bool set_persistence_mode(std::size_t gpu, bool enabled);
  bool set_gpu_locked_clocks(std::size_t gpu, Megahertz min, Megahertz max);
  bool set_memory_locked_clocks(std::size_t gpu, Megahertz min, Megahertz max);

  // Puts back what was changed on one GPU (a lease ends) and starts its
  // record afresh; the guard stays usable. Failures are logged, never thrown.
  void restore_gpu(std::size_t gpu) noexcept;
  // Puts back every setting changed through this guard, GPU by GPU; failures
  // are logged, never thrown. Final and idempotent.
  void restore() noexcept;
  bool restored() const;

  std::size_t size() const { return gpus_.size(); }
  std::vector<Milliwatts> original_power_limits() const;
  std::vector<bool> original_persistence_modes() const;

  // Restores every live guard of the process, as the atexit path does.
  // Exposed for frameworks with their own shutdown hooks.
  static void restore_all() noexcept;
  // How many guards are alive (tests).
  static std::size_t live_count();

 private:
  // What was changed on one GPU through the guard.
  struct Record {
    Milliwatts original_limit{0};
    std::optional<bool> original_persistence;  // nullopt: the GPU has none (AMD)
    Milliwatts current_limit{0};               // last limit set through this guard
    bool limit_changed = false;
    bool persistence_changed = false;
    bool gpu_clocks_locked = false;
    bool memory_clocks_locked = false;
  };
  void check_index(std::size_t gpu) const;
  void restore_locked(std::size_t gpu) noexcept;  // requires mutex_

  const std::vector<std::shared_ptr<Gpu>> gpus_;
  mutable std::mutex mutex_;  // guards records_ and restored_
  std::vector<Record> records_;
  bool restored_ = false;
  // Last member: destroyed first, so its callback never sees a dying guard.
  std::optional<SignalSubscription> on_signal_;
};

}  // namespace zeus::device
