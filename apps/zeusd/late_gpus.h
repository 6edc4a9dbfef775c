// A node whose GPU driver loads after zeusd starts (a boot race, a driver
// installed or upgraded while the daemon runs). zeusd builds its API, leases,
// workers and metrics around the GPUs it found at start, so it does not graft
// new GPUs onto a running daemon: started with none, it keeps looking, and
// when GPUs appear it stops with kExitGpusAppeared so that its service
// manager (the systemd unit's Restart=on-failure) starts it afresh with them.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "zeus/device/devices.h"
#include "zeus/util/units.h"

namespace zeus::zeusd_app {

// EX_TEMPFAIL: not a failure of the daemon, a reason to start it again.
inline constexpr int kExitGpusAppeared = 75;

class LateGpuWatch {
 public:
  // Runs GPU discovery (`discovery`, CPUs off) every `interval` on its own
  // thread; the first time it finds a GPU it calls `found` (once) with how
  // many, and stops looking.
  LateGpuWatch(device::DiscoveryOptions discovery, Seconds interval,
               std::function<void(std::size_t)> found);
  ~LateGpuWatch();  // stops the thread
  LateGpuWatch(const LateGpuWatch&) = delete;
  LateGpuWatch& operator=(const LateGpuWatch&) = delete;

 private:
  void run(device::DiscoveryOptions discovery, Seconds interval,
           const std::function<void(std::size_t)>& found);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus::zeusd_app
