#include <fmt/format.h>

#include <algorithm>

#include "zeus/metric/pushgateway.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::metric {
namespace {

constexpr const char* kGpuEnergy = "energy_monitor_gpu_energy_joules";
constexpr const char* kCpuEnergy = "energy_monitor_cpu_energy_joules";
constexpr const char* kDramEnergy = "energy_monitor_dram_energy_joules";
constexpr const char* kGpuPower = "power_monitor_gpu_power_watts";

EnergyMonitorOptions monitor_options(std::vector<int> cpus, std::vector<int> gpus, Clock* clock) {
  EnergyMonitorOptions o;
  o.cpu_indices = std::move(cpus);
  o.gpu_indices = std::move(gpus);
  o.clock = clock;
  return o;
}

void require_buckets(const std::vector<double>& b, const char* kind) {
  if (b.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} bucket range cannot be empty. Please provide a valid range or "
                            "omit the argument to use defaults.",
                            kind));
  }
}

bool any_dram(const DeviceInventory& devices, const std::vector<int>& cpus) {
  for (int i : cpus) {
    if (i >= 0 && static_cast<std::size_t>(i) < devices.cpus.size() &&
        devices.cpus[static_cast<std::size_t>(i)]->has_dram()) {
      return true;
    }
  }
  return false;
}

void push_logged(const std::string& url, const std::string& job, const PushRegistry& r) {
  try {
    push_to_gateway(url, job, r.render());
  } catch (const std::exception& e) {
    log::warn("metric: {}", e.what());
  }
}

}  // namespace

EnergyHistogram::EnergyHistogram(const DeviceInventory& devices, std::vector<int> cpu_indices,
                                 std::vector<int> gpu_indices, std::string pushgateway_url,
                                 std::string job, std::vector<double> gpu_bucket_range,
                                 std::vector<double> cpu_bucket_range,
                                 std::vector<double> dram_bucket_range, Clock* clock)
    : url_(std::move(pushgateway_url)),
      job_(std::move(job)),
      gpu_buckets_(std::move(gpu_bucket_range)),
      cpu_buckets_(std::move(cpu_bucket_range)),
      dram_buckets_(std::move(dram_bucket_range)),
      monitor_(devices, monitor_options(cpu_indices, gpu_indices, clock)) {
  require_buckets(gpu_buckets_, "GPU");
  require_buckets(cpu_buckets_, "CPU");
  require_buckets(dram_buckets_, "DRAM");
  if (!gpu_indices.empty()) {
    registry_.add_family(kGpuEnergy, "GPU energy consumption", PushRegistry::Type::kHistogram,
                         gpu_buckets_);
  }
  if (!cpu_indices.empty()) {
    registry_.add_family(kCpuEnergy, "CPU energy consumption", PushRegistry::Type::kHistogram,
                         cpu_buckets_);
    if (any_dram(devices, cpu_indices)) {
      registry_.add_family(kDramEnergy, "DRAM energy consumption", PushRegistry::Type::kHistogram,
                           dram_buckets_);
    }
  }
}

void EnergyHistogram::begin_window(const std::string& name, bool sync_execution) {
  monitor_.begin_window("__EnergyHistogram_" + name, sync_execution);
}

Measurement EnergyHistogram::end_window(const std::string& name, bool sync_execution) {
  const Measurement m = monitor_.end_window("__EnergyHistogram_" + name, sync_execution);
  const auto record = [&](const char* family, const char* kind, const std::map<int, Joules>& e,
                          const std::vector<double>& buckets) {
    if (!registry_.has_family(family)) return;
    const auto [lo, hi] = std::minmax_element(buckets.begin(), buckets.end());
    for (const auto& [index, joules] : e) {
      registry_.observe(family, name, index, joules.value());
      if (joules.value() > *hi) {
        log::warn("{} {} energy {} exceeds the maximum bucket value of {}", kind, index,
                  joules.value(), *hi);
      } else if (joules.value() < *lo) {
        log::warn("{} {} energy {} exceeds the minimum bucket value of {}", kind, index,
                  joules.value(), *lo);
      }
    }
  };
  record(kGpuEnergy, "GPU", m.gpu_energy, gpu_buckets_);
  record(kCpuEnergy, "CPU", m.cpu_energy, cpu_buckets_);
  record(kDramEnergy, "DRAM", m.dram_energy, dram_buckets_);
  push_to_gateway(url_, job_, registry_.render());
  return m;
}

struct EnergyCumulativeCounter::Window {
  std::string name;
  std::mutex mutex;  // guards stop
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;
};

EnergyCumulativeCounter::EnergyCumulativeCounter(const DeviceInventory& devices,
                                                 std::vector<int> cpu_indices,
                                                 std::vector<int> gpu_indices,
                                                 Seconds update_period, std::string pushgateway_url,
                                                 std::string job, Clock* clock)
    : url_(std::move(pushgateway_url)),
      job_(std::move(job)),
      period_(update_period),
      monitor_(devices, monitor_options(cpu_indices, gpu_indices, clock)) {
  if (!(period_.count() > 0)) {
    throw_error(ErrorCode::kInvalidArgument, "update_period must be positive");
  }
  if (!gpu_indices.empty()) {
    registry_.add_family(kGpuEnergy, "GPU energy consumption", PushRegistry::Type::kCounter);
  }
  if (!cpu_indices.empty()) {
    registry_.add_family(kCpuEnergy, "CPU energy consumption", PushRegistry::Type::kCounter);
    if (any_dram(devices, cpu_indices)) {
      registry_.add_family(kDramEnergy, "DRAM energy consumption", PushRegistry::Type::kCounter);
    }
  }
}

EnergyCumulativeCounter::~EnergyCumulativeCounter() {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [n, w] : windows_) names.push_back(n);
  }
  for (const auto& n : names) end_window(n);
}

void EnergyCumulativeCounter::begin_window(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (windows_.count(name) != 0) {
    throw_error(ErrorCode::kAlreadyExists, fmt::format("window '{}' is already running", name));
  }
  auto w = std::make_unique<Window>();
  w->name = name;
  Window* raw = w.get();
  windows_[name] = std::move(w);
  raw->thread = std::thread([this, raw] { run(*raw); });
}

void EnergyCumulativeCounter::end_window(const std::string& name) {
  std::unique_ptr<Window> w;
  {
    std::lock_guard lock(mutex_);
    const auto it = windows_.find(name);
    if (it == windows_.end()) {
      throw_error(ErrorCode::kNotFound,
                  fmt::format("No active monitoring process found for '{}'.", name));
    }
    w = std::move(it->second);
    windows_.erase(it);
  }
  {
    std::lock_guard lock(w->mutex);
    w->stop = true;
  }
  w->cv.notify_all();
  w->thread.join();
}

void EnergyCumulativeCounter::run(Window& w) {
  const std::string inner = "__EnergyCumulativeCounter_" + w.name;
  for (;;) {
    monitor_.begin_window(inner, false, true);
    bool stop;
    {
      std::unique_lock lock(w.mutex);
      w.cv.wait_for(lock, period_, [&] { return w.stop; });
      stop = w.stop;
    }
    const Measurement m = monitor_.end_window(inner, false);
    for (const auto& [i, e] : m.gpu_energy) {
      if (registry_.has_family(kGpuEnergy)) registry_.inc(kGpuEnergy, w.name, i, e.value());
    }
    for (const auto& [i, e] : m.cpu_energy) {
      if (registry_.has_family(kCpuEnergy)) registry_.inc(kCpuEnergy, w.name, i, e.value());
    }
    for (const auto& [i, e] : m.dram_energy) {
      if (registry_.has_family(kDramEnergy)) registry_.inc(kDramEnergy, w.name, i, e.value());
    }
    push_logged(url_, job_, registry_);
    if (stop) return;
  }
}

struct PowerGauge::Window {
  std::string name;
  std::mutex mutex;  // guards stop
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;
};

PowerGauge::PowerGauge(const DeviceInventory& devices, std::vector<int> gpu_indices,
                       Seconds update_period, std::string pushgateway_url, std::string job)
    : url_(std::move(pushgateway_url)), job_(std::move(job)), period_(update_period) {
  if (!(period_.count() > 0)) {
    throw_error(ErrorCode::kInvalidArgument, "update_period must be positive");
  }
  const DeviceSelection s = select_devices(devices, gpu_indices, std::vector<int>{});
  for (std::size_t k = 0; k < s.gpus.size(); ++k) gpus_.emplace_back(s.gpu_indices[k], s.gpus[k]);
  registry_.add_family(kGpuPower, "Records power consumption for GPU over time",
                       PushRegistry::Type::kGauge);
}

PowerGauge::~PowerGauge() {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [n, w] : windows_) names.push_back(n);
  }
  for (const auto& n : names) end_window(n);
}

void PowerGauge::begin_window(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (windows_.count(name) != 0) {
    throw_error(ErrorCode::kAlreadyExists,
                fmt::format("PowerGauge metric '{}' already exists.", name));
  }
  auto w = std::make_unique<Window>();
  w->name = name;
  Window* raw = w.get();
  windows_[name] = std::move(w);
  raw->thread = std::thread([this, raw] { run(*raw); });
}

void PowerGauge::end_window(const std::string& name) {
  std::unique_ptr<Window> w;
  {
    std::lock_guard lock(mutex_);
    const auto it = windows_.find(name);
    if (it == windows_.end()) {
      throw_error(ErrorCode::kNotFound,
                  fmt::format("No active power monitoring found for '{}'.", name));
    }
    w = std::move(it->second);
    windows_.erase(it);
  }
  {
    std::lock_guard lock(w->mutex);
    w->stop = true;
  }
  w->cv.notify_all();
  w->thread.join();
}

void PowerGauge::run(Window& w) {
  for (;;) {
    for (const auto& [index, gpu] : gpus_) {
      try {
        registry_.set(kGpuPower, w.name, index, gpu->power(PowerDomain::kDeviceInstant).value());
      } catch (const std::exception& e) {
        log::warn("metric: GPU {} power: {}", index, e.what());
      }
    }
    push_logged(url_, job_, registry_);
    std::unique_lock lock(w.mutex);
    if (w.cv.wait_for(lock, period_, [&] { return w.stop; })) return;
  }
}

}  // namespace zeus::metric
