// Server-Sent Events power streams (GET /gpu/stream_power, /cpu/stream_power).
// One poller thread per device type samples the devices that subscribers
// asked for at the configured rate, and sleeps while nobody listens
// (demand-driven, as upstream). A device's event is sent only when its value
// changed, except that a new subscriber first gets the latest value of each
// of its devices. Each poll's events for one subscriber go out as one write.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/exchange.h"
#include "zeus/util/units.h"

namespace zeus::zeusd {

// One reading of one device: its event's JSON and a key that changes when
// the reading does (the power in mW).
struct PowerSample {
  std::string json;
  std::uint64_t key = 0;
};

// Takes one reading of `device`. `restart` is true on the first call after
// the poller woke up (a CPU sampler then only records its energy baseline).
// nullopt: no sample this time (no baseline yet, or a device error, logged).
using PowerSampler = std::function<std::optional<PowerSample>(int device, bool restart)>;

// subscribe() may be called from any thread; the poller thread calls the
// sampler. The mutex guards the subscriber list and the latest frames.
class PowerStreamer {
 public:
  PowerStreamer(std::string name, int device_count, Seconds period, PowerSampler sampler);
  ~PowerStreamer();  // stop()
  PowerStreamer(const PowerStreamer&) = delete;
  PowerStreamer& operator=(const PowerStreamer&) = delete;

  // Streams `devices` (valid indices) to `stream` until it closes.
  void subscribe(std::vector<int> devices, http::EventStream stream);
  void stop();

  std::size_t subscribers() const;
  // How many times the sampler ran for `device` (tests: lazy polling).
  std::uint64_t polls(int device) const;

 private:
  struct Subscriber {
    std::vector<int> devices;
    http::EventStream stream;
    bool fresh = true;  // has not had its first batch
  };
  void run();

  const std::string name_;
  const Seconds period_;
  const PowerSampler sampler_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Subscriber>> subscribers_;
  std::vector<std::string> latest_;  // per device, its last frame ("" none)
  std::vector<std::atomic<std::uint64_t>> polls_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus::zeusd
