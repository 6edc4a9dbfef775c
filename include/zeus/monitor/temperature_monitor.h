// Background GPU temperature sampling into per-GPU timelines: the
// TemperatureMonitor of the Python Zeus (NVIDIA: the GPU core sensor; AMD: the
// hotspot sensor).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/clock.h"
#include "zeus/util/periodic_thread.h"

namespace zeus::monitor {

struct TemperatureSample {
  Seconds time;  // on the monitor's clock
  Celsius temperature;
};

struct TemperatureMonitorOptions {
  Seconds interval{1.0};  // sampling period (upstream default 1 s)
  // Bound on memory: samples kept per GPU (oldest dropped).
  std::size_t max_samples = 1 << 16;
  // Start the background thread. Off in tests that call sample_now() by hand.
  bool start_thread = true;
  Clock* clock = nullptr;  // nullptr: the process's steady clock
};

// Thread-safe. One background thread calls sample_now() every interval of the
// injected clock (waiting with Clock::wait_until, so stop() wakes it and a
// ManualClock steps it); any thread may query or call sample_now() itself. A mutex guards the
// timelines; device reads happen outside it. Samples are deduplicated: a run of equal readings is
// kept as its first and last sample, so the timeline shows when the temperature changed without
// storing every repeat, and a nearest-sample query inside a run still finds that run's value. A GPU
// that does not report temperature (kNotSupported) is skipped with one warning; the others go on.
class TemperatureMonitor {
 public:
  // `gpus[k]` is reported as GPU index gpu_indices[k]. kInvalidArgument for an
  // empty list or a non-positive interval.
  TemperatureMonitor(std::vector<std::shared_ptr<device::Gpu>> gpus, std::vector<int> gpu_indices,
                     TemperatureMonitorOptions options = {});
  ~TemperatureMonitor();
  TemperatureMonitor(const TemperatureMonitor&) = delete;
  TemperatureMonitor& operator=(const TemperatureMonitor&) = delete;

  // Stops the thread (idempotent). Timelines stay queryable.
  void stop();
  // Reads every GPU once and records the samples.
  void sample_now();

  Seconds interval() const { return interval_; }
  const std::vector<int>& gpu_indices() const { return gpu_indices_; }

  // Samples in [start, end] (inclusive; open ends when nullopt), time-ordered.
  std::vector<TemperatureSample> timeline(int gpu_index,
                                          std::optional<Seconds> start = std::nullopt,
                                          std::optional<Seconds> end = std::nullopt) const;
  // The sample nearest to t (a tie goes to the earlier one); with no t, the
  // latest. nullopt when the GPU has no sample.
  std::optional<Celsius> temperature(int gpu_index, std::optional<Seconds> t = std::nullopt) const;
  // Every GPU's temperature as above; nullopt when any GPU has no sample
  // (upstream get_temperature()).
  std::optional<std::map<int, Celsius>> temperatures(std::optional<Seconds> t = std::nullopt) const;

 private:
  using Timeline = std::deque<TemperatureSample>;

  std::vector<std::shared_ptr<device::Gpu>> gpus_;
  std::vector<int> gpu_indices_;
  Clock& clock_;
  Seconds interval_;
  std::size_t max_samples_;

  mutable std::mutex mutex_;  // guards timelines_ and unsupported_
  std::map<int, Timeline> timelines_;
  std::vector<bool> unsupported_;  // parallel to gpus_: warned once, no longer read

  PeriodicThread sampler_;  // calls sample_now() every interval
};

}  // namespace zeus::monitor
