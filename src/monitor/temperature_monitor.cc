#include "zeus/monitor/temperature_monitor.h"

#include <fmt/format.h>

#include <algorithm>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::monitor {

TemperatureMonitor::TemperatureMonitor(std::vector<std::shared_ptr<device::Gpu>> gpus,
                                       std::vector<int> gpu_indices,
                                       TemperatureMonitorOptions options)
    : gpus_(std::move(gpus)),
      gpu_indices_(std::move(gpu_indices)),
      clock_(options.clock != nullptr ? *options.clock : SteadyClock::instance()),
      interval_(options.interval),
      max_samples_(std::max<std::size_t>(options.max_samples, 4)),
      unsupported_(gpus_.size(), false) {
  if (gpus_.size() != gpu_indices_.size()) {
    throw_error(ErrorCode::kInternal, "TemperatureMonitor: GPU and index lists differ in length");
  }
  if (gpus_.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "temperature monitor: no GPU to monitor");
  }
  if (!(interval_.count() > 0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("temperature monitor: the interval must be positive, got {} s",
                            interval_.count()));
  }
  sample_now();
  // The first sample is taken; the thread takes the next one an interval on.
  if (options.start_thread) sampler_.start(clock_, interval_, [this] { sample_now(); });
}

TemperatureMonitor::~TemperatureMonitor() { stop(); }

void TemperatureMonitor::stop() { sampler_.stop(); }

void TemperatureMonitor::sample_now() {
  std::vector<bool> skip;
  {
    std::lock_guard lock(mutex_);
    skip = unsupported_;
  }
  std::vector<std::pair<std::size_t, Celsius>> readings;
  std::vector<std::size_t> newly_unsupported;
  const Seconds t = clock_.now();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (skip[i]) continue;
    try {
      readings.emplace_back(i, gpus_[i]->temperature());
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kNotSupported) {
        newly_unsupported.push_back(i);
        log::warn(
            "temperature monitor: GPU {} does not report its temperature; not monitoring "
            "it: {}",
            gpu_indices_[i], e.what());
      } else {
        log::warn("temperature monitor: GPU {}: {}", gpu_indices_[i], e.what());
      }
    }
  }
  std::lock_guard lock(mutex_);
  for (std::size_t i : newly_unsupported) unsupported_[i] = true;
  for (const auto& [i, celsius] : readings) {
    Timeline& tl = timelines_[gpu_indices_[i]];
    const std::size_t n = tl.size();
    if (n >= 2 && tl[n - 1].temperature == celsius && tl[n - 2].temperature == celsius) {
      tl[n - 1].time = t;  // extend the run of equal readings
      continue;
    }
    tl.push_back({t, celsius});
    if (tl.size() > max_samples_) tl.pop_front();
  }
}

std::vector<TemperatureSample> TemperatureMonitor::timeline(int gpu_index,
                                                            std::optional<Seconds> start,
                                                            std::optional<Seconds> end) const {
  std::lock_guard lock(mutex_);
  std::vector<TemperatureSample> out;
  const auto it = timelines_.find(gpu_index);
  if (it == timelines_.end()) return out;
  for (const auto& s : it->second) {
    if (start && s.time < *start) continue;
    if (end && s.time > *end) break;
    out.push_back(s);
  }
  return out;
}

std::optional<Celsius> TemperatureMonitor::temperature(int gpu_index,
                                                       std::optional<Seconds> t) const {
  std::lock_guard lock(mutex_);
  const auto it = timelines_.find(gpu_index);
  if (it == timelines_.end() || it->second.empty()) return std::nullopt;
  const Timeline& tl = it->second;
  if (!t) return tl.back().temperature;
  const auto after =
      std::lower_bound(tl.begin(), tl.end(), *t,
                       [](const TemperatureSample& s, Seconds time) { return s.time < time; });
  if (after == tl.begin()) return after->temperature;
  if (after == tl.end()) return tl.back().temperature;
  const auto before = std::prev(after);
  // A tie goes to the earlier sample, as upstream's bisect does.
  return (after->time - *t) < (*t - before->time) ? after->temperature : before->temperature;
}

std::optional<std::map<int, Celsius>> TemperatureMonitor::temperatures(
    std::optional<Seconds> t) const {
  std::map<int, Celsius> out;
  for (int index : gpu_indices_) {
    const auto c = temperature(index, t);
    if (!c) return std::nullopt;
    out[index] = *c;
  }
  return out;
}

}  // namespace zeus::monitor
