// The background thread that keeps RAPL wraparound tracking correct between
// user reads (internal to the RAPL backend).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "device/rapl/rapl_counter.h"
#include "zeus/util/units.h"

namespace zeus::rapl_detail {

// One thread for a whole set of counters: every `period` it reads each counter
// once (which records any wrap), and ignores read errors (the user's next read
// reports them). The destructor wakes the thread through a condition variable
// and joins it, so destruction returns promptly whatever the period.
//
// Thread-safety: constructed and destroyed by one thread; the worker only
// touches the counters (themselves thread-safe) and `mu_`-guarded `stop_`.
class RaplKeepAlive {
 public:
  RaplKeepAlive(std::vector<std::shared_ptr<RaplCounter>> counters, Seconds period);
  ~RaplKeepAlive();
  RaplKeepAlive(const RaplKeepAlive&) = delete;
  RaplKeepAlive& operator=(const RaplKeepAlive&) = delete;

  Seconds period() const { return period_; }

 private:
  void run();

  const std::vector<std::shared_ptr<RaplCounter>> counters_;
  const Seconds period_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

// The default period for counters with this smallest range: a quarter of the
// time to wrap at 1000 W, clamped to [0.1 s, 30 s].
Seconds default_keepalive_period(std::uint64_t smallest_range_uj);

// Test hooks (process-wide): keep-alive threads running now, and the number of
// completed sweeps over all threads since the process started.
int keepalive_threads_running();
std::uint64_t keepalive_sweeps();

}  // namespace zeus::rapl_detail
