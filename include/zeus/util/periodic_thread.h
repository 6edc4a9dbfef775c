// The background thread of the samplers and keep-alives: it calls a function
// every period of a Clock. It waits with Clock::wait_until, so stop() wakes it
// at once and a ManualClock steps it. After falling behind it calls once more
// at once and goes on a period from then, rather than catching up with a
// burst of calls.
#pragma once

#include <functional>
#include <stop_token>
#include <thread>

#include "zeus/util/clock.h"

namespace zeus {

// Started at most once; start() and stop() from one thread.
class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Calls `tick` one period after now, then every period, until stop().
  void start(Clock& clock, Seconds period, std::function<void()> tick);
  // Wakes the thread and waits for it (idempotent; nothing to do when not started).
  void stop();

 private:
  std::stop_source stop_;
  std::thread thread_;
};

}  // namespace zeus
