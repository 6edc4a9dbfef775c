#include "zeusd/device_worker.h"

#include "zeus/util/log.h"

namespace zeus::zeusd {

DeviceWorker::DeviceWorker(std::string name) : name_(std::move(name)) {
  thread_ = std::thread([this] { run(); });
}

DeviceWorker::~DeviceWorker() { stop(); }

bool DeviceWorker::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

bool DeviceWorker::run_here_or_post(std::function<void()> task) {
  {
    std::unique_lock lock(mutex_);
    if (stopping_) return false;
    if (busy_ || !queue_.empty()) {
      queue_.push_back(std::move(task));
      lock.unlock();
      cv_.notify_one();
      return true;
    }
    busy_ = true;
  }
  execute(task);
  {
    std::lock_guard lock(mutex_);
    busy_ = false;
  }
  cv_.notify_one();  // tasks queued meanwhile, or stop() waiting to drain
  return true;
}

void DeviceWorker::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void DeviceWorker::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return !busy_ && (stopping_ || !queue_.empty()); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    execute(task);
    std::lock_guard lock(mutex_);
    busy_ = false;
  }
}

void DeviceWorker::execute(const std::function<void()>& task) const {
  try {
    task();
  } catch (const std::exception& e) {
    log::error("zeusd: a command on {} failed outside its handler: {}", name_, e.what());
  }
}

}  // namespace zeus::zeusd
