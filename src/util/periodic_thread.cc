#include "zeus/util/periodic_thread.h"

#include <algorithm>

namespace zeus {

void PeriodicThread::start(Clock& clock, Seconds period, std::function<void()> tick) {
  thread_ = std::thread([&clock, period, tick = std::move(tick), stop = stop_.get_token()] {
    Seconds next = clock.now();
    for (;;) {
      next = std::max(next + period, clock.now());  // fell behind: no burst to catch up
      if (!clock.wait_until(next, stop)) return;
      tick();
    }
  });
}

void PeriodicThread::stop() {
  stop_.request_stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace zeus
