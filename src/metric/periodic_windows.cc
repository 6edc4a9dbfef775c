#include "metric/periodic_windows.h"

#include <vector>

#include "zeus/util/error.h"

namespace zeus::metric_internal {

bool PeriodicWindow::wait_period() {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, period_, [&] { return stop_; });
}

void PeriodicWindow::stop_and_join() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

PeriodicWindows::PeriodicWindows(Seconds period) : period_(period) {
  if (!(period_.count() > 0)) {
    throw_error(ErrorCode::kInvalidArgument, "update_period must be positive");
  }
}

PeriodicWindows::~PeriodicWindows() {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, window] : windows_) names.push_back(name);
  }
  for (const auto& name : names) end(name);
}

bool PeriodicWindows::begin(const std::string& name, Loop loop) {
  std::lock_guard lock(mutex_);
  if (windows_.count(name) != 0) return false;
  auto window = std::make_unique<PeriodicWindow>(name, period_);
  PeriodicWindow* raw = window.get();
  windows_[name] = std::move(window);
  raw->thread_ = std::thread([raw, loop = std::move(loop)] { loop(*raw); });
  return true;
}

bool PeriodicWindows::end(const std::string& name) {
  std::unique_ptr<PeriodicWindow> window;
  {
    std::lock_guard lock(mutex_);
    const auto it = windows_.find(name);
    if (it == windows_.end()) return false;
    window = std::move(it->second);
    windows_.erase(it);
  }
  window->stop_and_join();
  return true;
}

}  // namespace zeus::metric_internal
