#include "late_gpus.h"

#include <chrono>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::zeusd_app {

LateGpuWatch::LateGpuWatch(device::DiscoveryOptions discovery, Seconds interval,
                           std::function<void(std::size_t)> found) {
  discovery.cpus = false;
  discovery.soc = false;
  thread_ = std::thread(
      [this, discovery, interval, found = std::move(found)] { run(discovery, interval, found); });
}

LateGpuWatch::~LateGpuWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LateGpuWatch::run(device::DiscoveryOptions discovery, Seconds interval,
                       const std::function<void(std::size_t)>& found) {
  const auto period = std::chrono::duration<double>(interval.count());
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    lock.unlock();
    std::size_t gpus = 0;
    try {
      gpus = device::discover_devices(discovery).gpus.size();
    } catch (const Error& e) {
      log::debug("zeusd: looking for GPUs again: {}", e.what());
    }
    if (gpus > 0) {
      found(gpus);
      return;
    }
    lock.lock();
  }
}

}  // namespace zeus::zeusd_app
