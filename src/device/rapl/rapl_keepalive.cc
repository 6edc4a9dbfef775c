#include "device/rapl/rapl_keepalive.h"

#include <algorithm>
#include <atomic>
#include <chrono>
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

RaplKeepAlive::RaplKeepAlive(std::vector<std::shared_ptr<RaplCounter>> counters, Seconds period)
    : counters_(std::move(counters)), period_(period) {
  g_threads_running.fetch_add(1);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    g_threads_running.fetch_sub(1);
    throw;
  }
}

RaplKeepAlive::~RaplKeepAlive() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  g_threads_running.fetch_sub(1);
}

void RaplKeepAlive::run() {
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(period_);
  std::vector<bool> warned(counters_.size(), false);
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    lock.unlock();
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
    lock.lock();
  }
}

}  // namespace zeus::rapl_detail
