// Restoring GPU settings on every exit path. A GpuSettingsGuard records the
// power limit and persistence mode of a set of GPUs when it is created and
// puts back whatever it changed: in its destructor (normal return, exception),
// from std::atexit (plain exit()), and on SIGINT/SIGTERM.
//
// Signals. While at least one guard is alive, the library has a SIGINT and a
// SIGTERM handler (unless the signal was ignored when the first guard was
// made). The handler only write()s the signal number to a pipe, which is
// async-signal-safe. A dedicated thread reads the pipe, restores every live
// guard (ordinary code: mutexes and GPU driver calls are fine there), puts
// back the signal disposition that was in place before the first guard, and
// re-raises the signal, so the process ends (or the earlier handler runs) as
// if the library had not been there. After a fork, the first guard created in
// the child starts the child's own restore thread. Not covered: SIGKILL,
// _exit(), quick_exit(), and crashes (SIGSEGV...); zeusd's client tracking
// covers those.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/units.h"

namespace zeus {

// Owns the "what to put back" record of a set of GPUs; all setting changes
// made through it are undone by restore(). Settings changed directly on the
// Gpu objects are not tracked. Thread-safe: a mutex guards the record, so the
// restore thread may run restore() while another thread calls a setter; after
// restore() every setter is a no-op (a dying process must not undo the
// restore).
class GpuSettingsGuard {
 public:
  // Reads each GPU's current power limit and persistence mode (throws what the
  // GPU throws) and registers for signal/atexit restore.
  explicit GpuSettingsGuard(std::vector<std::shared_ptr<Gpu>> gpus);
  ~GpuSettingsGuard();  // restore(), then unregister
  GpuSettingsGuard(const GpuSettingsGuard&) = delete;
  GpuSettingsGuard& operator=(const GpuSettingsGuard&) = delete;

  // Sets the limit on every GPU, skipping GPUs already at `limit`. Throws the
  // GPU's error (e.g. kNoPermission); GPUs set before the failure stay
  // recorded and are restored. Returns false if the guard was already restored.
  bool set_power_limit(Milliwatts limit);
  // Same for persistence mode.
  bool set_persistence_mode(bool enabled);

  // Puts back every setting this guard changed, GPU by GPU; failures are
  // logged, never thrown. Idempotent.
  void restore() noexcept;
  bool restored() const;

  const std::vector<Milliwatts>& original_power_limits() const { return original_limits_; }
  const std::vector<bool>& original_persistence_modes() const { return original_persistence_; }

  // Restores every live guard of the process, as the signal and atexit paths
  // do. Exposed for frameworks with their own shutdown hooks.
  static void restore_all() noexcept;
  // How many guards are alive (tests).
  static std::size_t live_count();

 private:
  const std::vector<std::shared_ptr<Gpu>> gpus_;
  std::vector<Milliwatts> original_limits_;
  std::vector<bool> original_persistence_;
  mutable std::mutex mutex_;         // guards everything below
  std::vector<Milliwatts> current_;  // last limit set through this guard
  std::vector<bool> limit_changed_;  // per GPU
  std::vector<bool> persistence_changed_;
  bool restored_ = false;
};

}  // namespace zeus
