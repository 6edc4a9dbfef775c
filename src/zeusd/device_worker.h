// One thread per device that runs that device's control commands one at a
// time, in arrival order (upstream: one task per GPU owning the device), so
// two clients' commands never interleave on a GPU and a lease's restore runs
// after every command queued before it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace zeus::zeusd {

// post() may be called from any thread; tasks run on the worker's thread (or,
// through run_here_or_post, on the caller's while the worker is idle). The
// mutex guards the queue, the busy flag and the stopping flag.
class DeviceWorker {
 public:
  explicit DeviceWorker(std::string name);
  ~DeviceWorker();  // stop()
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  // Queues a task; false once stop() has begun. A task that throws is
  // logged; it must report its own errors (the worker has nobody to tell).
  bool post(std::function<void()> task);
  // Runs the task on the calling thread when the worker is idle (nothing
  // queued or running), holding the worker busy meanwhile so later tasks
  // still run after it; otherwise queues it like post(). A blocking command
  // saves two thread wake-ups this way (tens of microseconds on a VM).
  bool run_here_or_post(std::function<void()> task);
  // Runs every task already queued, then ends the thread. Idempotent.
  void stop();
  const std::string& name() const { return name_; }

 private:
  void run();
  void execute(const std::function<void()>& task) const;

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false;  // a task is running, here or on a caller's thread
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus::zeusd
