#include "device/rapl/rapl_keepalive.h"

#include <algorithm>
#include <atomic>
#include <exception>

#include "zeus/util/log.h"

namespace zeus::rapl_internal {
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
    : counters_(std::move(counters)),
      period_(period),
      clock_(clock),
      warned_(counters_.size(), false) {
  g_threads_running.fetch_add(1);
  try {
    thread_.start(clock_, period_, [this] { sweep(); });
  } catch (...) {
    g_threads_running.fetch_sub(1);
    throw;
  }
}

RaplKeepAlive::~RaplKeepAlive() {
  thread_.stop();
  g_threads_running.fetch_sub(1);
}

void RaplKeepAlive::sweep() {
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    try {
      counters_[i]->read_uj();
    } catch (const std::exception& e) {
      // The user's next total_energy() throws with the same message.
      if (!warned_[i]) log::debug("RAPL keep-alive: {}", e.what());
      warned_[i] = true;
    }
  }
  g_sweeps.fetch_add(1);
}

}  // namespace zeus::rapl_internal
