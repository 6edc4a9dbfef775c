#include "zeus/util/clock.h"

#include <chrono>
#include <thread>

namespace zeus {

Seconds SteadyClock::now() const {
  return std::chrono::duration_cast<Seconds>(std::chrono::steady_clock::now().time_since_epoch());
}

void SteadyClock::sleep_until(Seconds deadline) {
  const auto target = std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline));
  std::this_thread::sleep_until(target);
}

SteadyClock& SteadyClock::instance() {
  static SteadyClock clock;
  return clock;
}

void ManualClock::sleep_until(Seconds deadline) {
  double current = now_.load();
  while (current < deadline.count() && !now_.compare_exchange_weak(current, deadline.count())) {
  }
}

void ManualClock::advance(Seconds d) {
  double current = now_.load();
  while (!now_.compare_exchange_weak(current, current + d.count())) {
  }
}

double wall_time_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace zeus
