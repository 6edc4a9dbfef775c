#include "zeusd/power_streamer.h"

#include <chrono>

namespace zeus::zeusd {

PowerStreamer::PowerStreamer(std::string name, int device_count, Seconds period,
                             PowerSampler sampler)
    : name_(std::move(name)),
      period_(period),
      sampler_(std::move(sampler)),
      latest_(static_cast<std::size_t>(device_count)),
      polls_(static_cast<std::size_t>(device_count)) {
  thread_ = std::thread([this] { run(); });
}

PowerStreamer::~PowerStreamer() { stop(); }

void PowerStreamer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<std::shared_ptr<Subscriber>> subs;
  {
    std::lock_guard lock(mutex_);
    subs.swap(subscribers_);
  }
  for (auto& s : subs) s->stream.close();
}

void PowerStreamer::subscribe(std::vector<int> devices, http::EventStream stream) {
  auto sub = std::make_shared<Subscriber>();
  sub->devices = std::move(devices);
  sub->stream = std::move(stream);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      sub->stream.close();
      return;
    }
    subscribers_.push_back(sub);
  }
  // Wake the poller at once, and again when the client leaves.
  cv_.notify_all();
  sub->stream.on_close([this] { cv_.notify_all(); });
}

std::size_t PowerStreamer::subscribers() const {
  std::lock_guard lock(mutex_);
  return subscribers_.size();
}

std::uint64_t PowerStreamer::polls(int device) const {
  return polls_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
}

void PowerStreamer::run() {
  const std::size_t n = latest_.size();
  std::vector<char> wanted(n);
  std::vector<std::string> fresh(n);       // frames of this poll ("" none)
  std::vector<std::uint64_t> last_key(n);  // value last sent
  std::vector<char> have_key(n);
  std::vector<std::shared_ptr<Subscriber>> subs;
  std::string batch;
  bool restart = true;
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      std::erase_if(subscribers_, [](const auto& s) { return !s->stream.is_open(); });
      if (subscribers_.empty()) {
        // Asleep until someone subscribes: no device is touched meanwhile.
        cv_.wait(lock, [&] {
          std::erase_if(subscribers_, [](const auto& s) { return !s->stream.is_open(); });
          return stopping_ || !subscribers_.empty();
        });
        restart = true;
        std::fill(have_key.begin(), have_key.end(), 0);
        for (auto& f : latest_) f.clear();  // no stale value for the next subscriber
        next = std::chrono::steady_clock::now();
      }
      if (stopping_) return;
      subs = subscribers_;
    }
    std::fill(wanted.begin(), wanted.end(), 0);
    for (const auto& s : subs) {
      for (int d : s->devices) wanted[static_cast<std::size_t>(d)] = 1;
    }
    for (std::size_t d = 0; d < n; ++d) {
      fresh[d].clear();
      if (!wanted[d]) continue;
      polls_[d].fetch_add(1, std::memory_order_relaxed);
      auto sample = sampler_(static_cast<int>(d), restart);
      if (!sample) continue;
      if (have_key[d] && last_key[d] == sample->key) continue;
      have_key[d] = 1;
      last_key[d] = sample->key;
      fresh[d].reserve(sample->json.size() + 8);
      fresh[d].append("data: ").append(sample->json).append("\n\n");
    }
    restart = false;
    {
      std::lock_guard lock(mutex_);
      for (std::size_t d = 0; d < n; ++d) {
        if (!fresh[d].empty()) latest_[d] = fresh[d];
      }
      for (const auto& s : subs) {
        batch.clear();
        for (int d : s->devices) {
          const auto& f =
              s->fresh ? latest_[static_cast<std::size_t>(d)] : fresh[static_cast<std::size_t>(d)];
          batch += f;
        }
        if (s->fresh && batch.empty()) continue;  // nothing known yet: stays fresh
        s->fresh = false;
        if (!batch.empty()) s->stream.send_frames(batch);
      }
    }
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period_);
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // fell behind (slow device): do not burst
    std::unique_lock lock(mutex_);
    cv_.wait_until(lock, next, [&] { return stopping_; });
    if (stopping_) return;
  }
}

}  // namespace zeus::zeusd
