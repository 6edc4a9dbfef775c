// A single thread that runs tasks at given times (the second energy read of
// /cpu/get_power), so no I/O thread sleeps. Thread-safe; the mutex guards the
// queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace zeus::zeusd {

class Scheduler {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  Scheduler() : thread_([this] { run(); }) {}
  ~Scheduler() { stop(); }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // False once stopping (the task is not run).
  bool at(TimePoint when, std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return false;
      tasks_.emplace(when, std::move(task));
    }
    cv_.notify_one();
    return true;
  }
  // Runs what is queued now (tasks due later run at once), then ends.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (tasks_.empty()) {
        if (stopping_) return;
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        continue;
      }
      const auto when = tasks_.begin()->first;
      if (!stopping_ && std::chrono::steady_clock::now() < when) {
        cv_.wait_until(lock, when);
        continue;
      }
      auto task = std::move(tasks_.begin()->second);
      tasks_.erase(tasks_.begin());
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::multimap<TimePoint, std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus::zeusd
