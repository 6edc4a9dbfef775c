#include "device/rapl/rapl_keepalive.h"

#include <algorithm>
#include <atomic>
#include <exception>

#include "zeus/util/log.h"

namespace zeus::rapl_detail {
namespace {

std::atomic<int> g_threads_running{0};
std::atomic<std::uint64_t> g_sweeps{0};

}  // namespace

int keepalive_threads_running() { return g_threads_running.load(); }
std::uint64_t keepalive_sweeps() { return g_sweeps.load(); }

Seconds default_keepalive_period(std::uint64_t smallest_range_uj) {
  constexpr double kWorstCaseWatts = 1000.0;
  const double wrap_s = static_cast<double>(smallest_range_uj) / 1e6 / kWorstCaseWatts;
  return Seconds(std::clamp(wrap_s / 4.0, 0.1, 30.0));
}

RaplKeepAlive::RaplKeepAlive(std::vector<std::shared_ptr<RaplCounter>> counters, Seconds period,
                             Clock& clock)
    : counters_(std::move(counters)), period_(period), clock_(clock) {
  g_threads_running.fetch_add(1);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    g_threads_running.fetch_sub(1);
    throw;
  }
}

RaplKeepAlive::~RaplKeepAlive() {
  stop_.request_stop();
  thread_.join();
  g_threads_running.fetch_sub(1);
}

void RaplKeepAlive::run() {
  std::vector<bool> warned(counters_.size(), false);
  Seconds next = clock_.now();
  for (;;) {
    next = std::max(next + period_, clock_.now());  // fell behind: no burst to catch up
    if (!clock_.wait_until(next, stop_.get_token())) return;
    for (std::size_t i = 0; i < counters_.size(); ++i) {
      try {
        counters_[i]->read_uj();
      } catch (const std::exception& e) {
        // The user's next total_energy() throws with the same message.
        if (!warned[i]) log::debug("RAPL keep-alive: {}", e.what());
        warned[i] = true;
      }
    }
    g_sweeps.fetch_add(1);
  }
}

}  // namespace zeus::rapl_detail
