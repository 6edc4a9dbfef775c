// Injected time. Monitors, samplers, background threads and optimizers take a
// Clock so tests step time by hand instead of sleeping.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>
#include <stop_token>

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
  // The interruptible wait of background threads: blocks until now() >=
  // deadline (true) or until `stop` is requested (false, at once when it
  // already is). An infinite deadline waits for `stop` only.
  virtual bool wait_until(Seconds deadline, std::stop_token stop) = 0;
};

// std::chrono::steady_clock. Thread-safe.
class SteadyClock final : public Clock {
 public:
  Seconds now() const override;
  void sleep_until(Seconds deadline) override;
  bool wait_until(Seconds deadline, std::stop_token stop) override;
  // The process-wide instance.
  static SteadyClock& instance();
};

// Time that moves only when told. sleep_until() moves time forward to the
// deadline, so a single-threaded loop under test never blocks. wait_until()
// really blocks until another thread moves time past the deadline (advance(),
// set(), sleep_until()) or requests the stop, so a test steps a background
// thread: advance(), then await_blocked() until it waits again.
// Thread-safe: mutex_ guards the waiter list; time itself is atomic.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Seconds start = Seconds(1000.0)) : now_(start.count()) {}
  Seconds now() const override { return Seconds(now_.load()); }
  void sleep_until(Seconds deadline) override;
  bool wait_until(Seconds deadline, std::stop_token stop) override;
  void advance(Seconds d);
  void set(Seconds t);

  // Blocks (in real time, at most `timeout`) until at least `count` threads
  // wait in wait_until() for a deadline still ahead. Returns whether they do.
  bool await_blocked(std::size_t count, Seconds timeout = Seconds(30.0));
  // Threads waiting now for a deadline still ahead.
  std::size_t blocked() const;

 private:
  std::size_t blocked_locked() const;  // requires mutex_

  std::atomic<double> now_;
  mutable std::mutex mutex_;                 // guards deadlines_
  std::condition_variable_any time_moved_;   // wakes wait_until()
  std::condition_variable waiters_changed_;  // wakes await_blocked()
  std::multiset<double> deadlines_;          // of the threads in wait_until()
};

// Seconds since the Unix epoch, for human-facing timestamps (logs, CSV).
double wall_time_seconds();

}  // namespace zeus
