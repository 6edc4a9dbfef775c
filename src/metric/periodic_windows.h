// Named windows, each served by a thread of its own that does a round of work
// every period until the window ends: the plumbing EnergyCumulativeCounter and
// PowerGauge share.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "zeus/util/units.h"

namespace zeus::metric_internal {

// What a window's thread sees of its window.
class PeriodicWindow {
 public:
  PeriodicWindow(std::string name, Seconds period) : name_(std::move(name)), period_(period) {}
  const std::string& name() const { return name_; }
  // Sleeps one period, or less when the window ends meanwhile; true when it
  // has ended (the thread then does its last round and returns).
  bool wait_period();

 private:
  friend class PeriodicWindows;
  void stop_and_join();

  std::string name_;
  Seconds period_;
  std::mutex mutex_;  // guards stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Thread-safe; the destructor ends every window.
class PeriodicWindows {
 public:
  // A window's thread: rounds of work between wait_period() calls, until
  // wait_period() says the window has ended.
  using Loop = std::function<void(PeriodicWindow&)>;

  // kInvalidArgument unless period > 0.
  explicit PeriodicWindows(Seconds period);
  ~PeriodicWindows();
  PeriodicWindows(const PeriodicWindows&) = delete;
  PeriodicWindows& operator=(const PeriodicWindows&) = delete;

  // Runs `loop` on a new thread for window `name`; false, and nothing runs,
  // when that window is running already.
  bool begin(const std::string& name, Loop loop);
  // Ends window `name` and waits for its thread; false when it is not running.
  bool end(const std::string& name);

 private:
  Seconds period_;
  std::mutex mutex_;  // guards windows_
  std::map<std::string, std::unique_ptr<PeriodicWindow>> windows_;
};

}  // namespace zeus::metric_internal
