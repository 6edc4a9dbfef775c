// The background thread that keeps RAPL wraparound tracking correct between
// user reads (internal to the RAPL backend).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device/rapl/rapl_counter.h"
#include "zeus/util/clock.h"
#include "zeus/util/periodic_thread.h"
#include "zeus/util/units.h"

namespace zeus::rapl_internal {

// One thread for a whole set of counters: every `period` of `clock` it reads
// each counter once (which records any wrap), and ignores read errors (the
// user's next read reports them). The destructor requests the stop, which
// wakes the thread's Clock::wait_until, and joins it, so destruction returns
// promptly whatever the period.
//
// Thread-safety: constructed and destroyed by one thread; the worker only
// touches the counters (themselves thread-safe) and the stop token.
class RaplKeepAlive {
 public:
  RaplKeepAlive(std::vector<std::shared_ptr<RaplCounter>> counters, Seconds period, Clock& clock);
  ~RaplKeepAlive();
  RaplKeepAlive(const RaplKeepAlive&) = delete;
  RaplKeepAlive& operator=(const RaplKeepAlive&) = delete;

  Seconds period() const { return period_; }

 private:
  void sweep();  // reads every counter once

  const std::vector<std::shared_ptr<RaplCounter>> counters_;
  const Seconds period_;
  Clock& clock_;
  std::vector<bool> warned_;  // the worker's: counter i's read failure is logged
  PeriodicThread thread_;
};

// The default period for counters with this smallest range: a quarter of the
// time to wrap at 1000 W, clamped to [0.1 s, 30 s].
Seconds default_keepalive_period(std::uint64_t smallest_range_uj);

// Test hooks (process-wide): keep-alive threads running now, and the number of
// completed sweeps over all threads since the process started.
int keepalive_threads_running();
std::uint64_t keepalive_sweeps();

}  // namespace zeus::rapl_internal
