#include <fmt/format.h>

#include <algorithm>

#include "metric/energy_families.h"
#include "metric/periodic_windows.h"
#include "zeus/metric/pushgateway.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::metric {
namespace {

constexpr const char* kGpuPower = "power_monitor_gpu_power_watts";

monitor::EnergyMonitorOptions monitor_options(std::vector<int> cpus, std::vector<int> gpus,
                                              Clock* clock) {
  monitor::EnergyMonitorOptions o;
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

void push_logged(const std::string& url, const std::string& job, const PushRegistry& r) {
  try {
    push_to_gateway(url, job, r.render());
  } catch (const std::exception& e) {
    log::warn("metric: {}", e.what());
  }
}

}  // namespace

EnergyHistogram::EnergyHistogram(const device::DeviceInventory& devices,
                                 std::vector<int> cpu_indices, std::vector<int> gpu_indices,
                                 std::string pushgateway_url, std::string job,
                                 std::vector<double> gpu_bucket_range,
                                 std::vector<double> cpu_bucket_range,
                                 std::vector<double> dram_bucket_range, Clock* clock)
    : url_(std::move(pushgateway_url)),
      job_(std::move(job)),
      buckets_{std::move(gpu_bucket_range), std::move(cpu_bucket_range),
               std::move(dram_bucket_range)},
      monitor_(devices, monitor_options(cpu_indices, gpu_indices, clock)) {
  for (std::size_t k = 0; k < buckets_.size(); ++k) {
    require_buckets(buckets_[k], metric_internal::kEnergyFamilies[k].kind);
  }
  metric_internal::add_energy_families(registry_, devices, cpu_indices, gpu_indices,
                                       PushRegistry::Type::kHistogram, buckets_);
}

void EnergyHistogram::begin_window(const std::string& name, bool sync_execution) {
  monitor_.begin_window("__EnergyHistogram_" + name, sync_execution);
}

monitor::Measurement EnergyHistogram::end_window(const std::string& name, bool sync_execution) {
  const monitor::Measurement m = monitor_.end_window("__EnergyHistogram_" + name, sync_execution);
  metric_internal::for_each_energy(registry_, m, [&](std::size_t family, int index, Joules energy) {
    const auto [lo, hi] = std::minmax_element(buckets_[family].begin(), buckets_[family].end());
    registry_.observe(metric_internal::kEnergyFamilies[family].name, name, index, energy.value());
    if (energy.value() > *hi) {
      log::warn("{} {} energy {} exceeds the maximum bucket value of {}",
                metric_internal::kEnergyFamilies[family].kind, index, energy.value(), *hi);
    } else if (energy.value() < *lo) {
      log::warn("{} {} energy {} exceeds the minimum bucket value of {}",
                metric_internal::kEnergyFamilies[family].kind, index, energy.value(), *lo);
    }
  });
  push_to_gateway(url_, job_, registry_.render());
  return m;
}

EnergyCumulativeCounter::EnergyCumulativeCounter(const device::DeviceInventory& devices,
                                                 std::vector<int> cpu_indices,
                                                 std::vector<int> gpu_indices,
                                                 Seconds update_period, std::string pushgateway_url,
                                                 std::string job, Clock* clock)
    : url_(std::move(pushgateway_url)),
      job_(std::move(job)),
      monitor_(devices, monitor_options(cpu_indices, gpu_indices, clock)),
      windows_(std::make_unique<metric_internal::PeriodicWindows>(update_period)) {
  metric_internal::add_energy_families(registry_, devices, cpu_indices, gpu_indices,
                                       PushRegistry::Type::kCounter);
}

EnergyCumulativeCounter::~EnergyCumulativeCounter() = default;

void EnergyCumulativeCounter::begin_window(const std::string& name) {
  if (!windows_->begin(name, [this](metric_internal::PeriodicWindow& w) { run(w); })) {
    throw_error(ErrorCode::kAlreadyExists, fmt::format("window '{}' is already running", name));
  }
}

void EnergyCumulativeCounter::end_window(const std::string& name) {
  if (!windows_->end(name)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("No active monitoring process found for '{}'.", name));
  }
}

void EnergyCumulativeCounter::run(metric_internal::PeriodicWindow& w) {
  const std::string inner = "__EnergyCumulativeCounter_" + w.name();
  for (;;) {
    monitor_.begin_window(inner, false, true);
    const bool stop = w.wait_period();
    const monitor::Measurement m = monitor_.end_window(inner, false);
    metric_internal::for_each_energy(registry_, m,
                                     [&](std::size_t family, int index, Joules energy) {
                                       registry_.inc(metric_internal::kEnergyFamilies[family].name,
                                                     w.name(), index, energy.value());
                                     });
    push_logged(url_, job_, registry_);
    if (stop) return;
  }
}

PowerGauge::PowerGauge(const device::DeviceInventory& devices, std::vector<int> gpu_indices,
                       Seconds update_period, std::string pushgateway_url, std::string job)
    : url_(std::move(pushgateway_url)),
      job_(std::move(job)),
      windows_(std::make_unique<metric_internal::PeriodicWindows>(update_period)) {
  const device::DeviceSelection s =
      device::select_devices(devices, gpu_indices, std::vector<int>{});
  for (std::size_t k = 0; k < s.gpus.size(); ++k) gpus_.emplace_back(s.gpu_indices[k], s.gpus[k]);
  registry_.add_family(kGpuPower, "Records power consumption for GPU over time",
                       PushRegistry::Type::kGauge);
}

PowerGauge::~PowerGauge() = default;

void PowerGauge::begin_window(const std::string& name) {
  if (!windows_->begin(name, [this](metric_internal::PeriodicWindow& w) { run(w); })) {
    throw_error(ErrorCode::kAlreadyExists,
                fmt::format("PowerGauge metric '{}' already exists.", name));
  }
}

void PowerGauge::end_window(const std::string& name) {
  if (!windows_->end(name)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("No active power monitoring found for '{}'.", name));
  }
}

void PowerGauge::run(metric_internal::PeriodicWindow& w) {
  for (;;) {
    for (const auto& [index, gpu] : gpus_) {
      try {
        registry_.set(kGpuPower, w.name(), index,
                      gpu->power(device::PowerDomain::kDeviceInstant).value());
      } catch (const std::exception& e) {
        log::warn("metric: GPU {} power: {}", index, e.what());
      }
    }
    push_logged(url_, job_, registry_);
    if (w.wait_period()) return;
  }
}

}  // namespace zeus::metric
