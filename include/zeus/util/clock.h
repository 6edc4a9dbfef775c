// Injected time. Monitors, samplers and optimizers take a Clock so tests can
// advance time by hand instead of sleeping.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "zeus/util/units.h"

namespace zeus {

// Monotonic time in seconds since an arbitrary, fixed origin.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Seconds now() const = 0;
  // Blocks until now() >= deadline (returns at once if it already is).
  virtual void sleep_until(Seconds deadline) = 0;
  void sleep_for(Seconds d) { sleep_until(now() + d); }
};

// std::chrono::steady_clock. Thread-safe.
class SteadyClock final : public Clock {
 public:
  Seconds now() const override;
  void sleep_until(Seconds deadline) override;
  // The process-wide instance.
  static SteadyClock& instance();
};

// Time that moves only when told. sleep_until() moves time forward to the
// deadline, so a single-threaded loop under test never blocks. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Seconds start = Seconds(1000.0)) : now_(start.count()) {}
  Seconds now() const override { return Seconds(now_.load()); }
  void sleep_until(Seconds deadline) override;
  void advance(Seconds d);
  void set(Seconds t) { now_.store(t.count()); }

 private:
  std::atomic<double> now_;
};

// Seconds since the Unix epoch, for human-facing timestamps (logs, CSV).
double wall_time_seconds();

}  // namespace zeus
