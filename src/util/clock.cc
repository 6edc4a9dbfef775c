#include "zeus/util/clock.h"

#include <chrono>
#include <cmath>
#include <thread>

namespace zeus {
namespace {

// Deadlines beyond this (about 30 years) wait for the stop request only, so no
// conversion to a time_point can overflow.
constexpr double kForever = 1e9;

}  // namespace

Seconds SteadyClock::now() const {
  return std::chrono::duration_cast<Seconds>(std::chrono::steady_clock::now().time_since_epoch());
}

void SteadyClock::sleep_until(Seconds deadline) {
  if (!(deadline.count() < kForever)) deadline = Seconds(kForever);
  const auto target = std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline));
  std::this_thread::sleep_until(target);
}

bool SteadyClock::wait_until(Seconds deadline, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  const auto never = [] { return false; };
  if (!(deadline.count() < kForever)) {
    cv.wait(lock, stop, never);
    return false;
  }
  const auto target = std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline));
  cv.wait_until(lock, stop, target, never);
  return !stop.stop_requested();
}

SteadyClock& SteadyClock::instance() {
  static SteadyClock clock;
  return clock;
}

void ManualClock::sleep_until(Seconds deadline) {
  std::lock_guard lock(mutex_);
  if (now_.load() < deadline.count()) now_.store(deadline.count());
  time_moved_.notify_all();
  waiters_changed_.notify_all();
}

void ManualClock::advance(Seconds d) {
  std::lock_guard lock(mutex_);
  now_.store(now_.load() + d.count());
  time_moved_.notify_all();
  waiters_changed_.notify_all();
}

void ManualClock::set(Seconds t) {
  std::lock_guard lock(mutex_);
  now_.store(t.count());
  time_moved_.notify_all();
  waiters_changed_.notify_all();
}

bool ManualClock::wait_until(Seconds deadline, std::stop_token stop) {
  std::unique_lock lock(mutex_);
  const double d = deadline.count();
  const auto it = deadlines_.insert(d);
  waiters_changed_.notify_all();
  const bool reached = time_moved_.wait(lock, stop, [&] { return now_.load() >= d; });
  deadlines_.erase(it);
  waiters_changed_.notify_all();
  return reached;
}

std::size_t ManualClock::blocked_locked() const {
  // Waiters whose deadline has passed are runnable, not blocked.
  return static_cast<std::size_t>(
      std::distance(deadlines_.upper_bound(now_.load()), deadlines_.end()));
}

std::size_t ManualClock::blocked() const {
  std::lock_guard lock(mutex_);
  return blocked_locked();
}

bool ManualClock::await_blocked(std::size_t count, Seconds timeout) {
  std::unique_lock lock(mutex_);
  return waiters_changed_.wait_for(lock, std::chrono::duration<double>(timeout.count()),
                                   [&] { return blocked_locked() >= count; });
}

double wall_time_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace zeus
