// Window energies and power pushed to a Prometheus Pushgateway, compatible
// with the Python Zeus metric classes (zeus.metric): the same metric names
// (energy_monitor_{gpu,cpu,dram}_energy_joules, power_monitor_gpu_power_watts),
// the same labels (window, index), the same types and bucket defaults, and
// the same push (PUT <url>/metrics/job/<job>, replacing the job's group, in
// the text format prometheus_client writes). Dashboards and alerts written
// for the Python classes work unchanged.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zeus/device/devices.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/util/clock.h"

// The counters' threads, a part-private detail (src/metric/periodic_windows.h).
namespace zeus::metric_internal {
class PeriodicWindow;
class PeriodicWindows;  // a thread per running window
}  // namespace zeus::metric_internal

namespace zeus::metric {

// PUT `text` (exposition format 0.0.4) to <url>/metrics/job/<job>. `url` is
// "http://host:port" (a bare "host:port" is accepted, as prometheus_client
// does). kIo when the gateway cannot be reached or answers an error.
void push_to_gateway(const std::string& url, const std::string& job, const std::string& text);

// Metric families in memory, rendered the way prometheus_client renders them
// (counters as <name>_total plus a <name>_created gauge; histograms with
// _bucket/_count/_sum and _created). Thread-safe; the mutex guards the series.
class PushRegistry {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  void add_family(const std::string& name, const std::string& help, Type type,
                  std::vector<double> buckets = {});
  bool has_family(const std::string& name) const;
  // Series are keyed by (window, index).
  void inc(const std::string& name, const std::string& window, int index, double amount);
  void set(const std::string& name, const std::string& window, int index, double value);
  void observe(const std::string& name, const std::string& window, int index, double value);
  std::string render() const;

 private:
  struct Series {
    double value = 0;                    // counter / gauge value, histogram sum
    std::vector<std::uint64_t> buckets;  // histogram: cumulative counts per bound
    std::uint64_t count = 0;
    double created = 0;
  };
  struct Family {
    std::string help;
    Type type;
    std::vector<double> bounds;
    std::map<std::pair<std::string, int>, Series> series;
  };
  Series& series_locked(Family& f, const std::string& window, int index);
  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
  std::vector<std::string> order_;
};

// One energy histogram per device kind; end_window() observes each device's
// energy in J and pushes. Warns (once per value) when an energy is outside
// the bucket range. Single-threaded use per window name.
class EnergyHistogram {
 public:
  EnergyHistogram(const device::DeviceInventory& devices, std::vector<int> cpu_indices,
                  std::vector<int> gpu_indices, std::string pushgateway_url, std::string job,
                  std::vector<double> gpu_bucket_range = {50.0, 100.0, 200.0, 500.0, 1000.0},
                  std::vector<double> cpu_bucket_range = {10.0, 50.0, 100.0, 500.0, 1000.0},
                  std::vector<double> dram_bucket_range = {5.0, 10.0, 20.0, 50.0, 150.0},
                  Clock* clock = nullptr);
  void begin_window(const std::string& name, bool sync_execution = true);
  // Returns what was measured (and pushed).
  monitor::Measurement end_window(const std::string& name, bool sync_execution = true);
  const PushRegistry& registry() const { return registry_; }

 private:
  std::string url_, job_;
  std::array<std::vector<double>, 3> buckets_;  // GPU, CPU, DRAM
  monitor::EnergyMonitor monitor_;
  PushRegistry registry_;
};

// A background thread per window measures energy every `update_period`,
// adds it to counters (same names as the histograms) and pushes.
class EnergyCumulativeCounter {
 public:
  EnergyCumulativeCounter(const device::DeviceInventory& devices, std::vector<int> cpu_indices,
                          std::vector<int> gpu_indices, Seconds update_period,
                          std::string pushgateway_url, std::string job, Clock* clock = nullptr);
  ~EnergyCumulativeCounter();  // ends every window
  void begin_window(const std::string& name);
  void end_window(const std::string& name);  // kNotFound for an unknown window
  const PushRegistry& registry() const { return registry_; }

 private:
  void run(metric_internal::PeriodicWindow& w);
  std::string url_, job_;
  monitor::EnergyMonitor monitor_;
  PushRegistry registry_;
  // Last, so its threads are joined before the members they use go.
  std::unique_ptr<metric_internal::PeriodicWindows> windows_;
};

// A background thread per window sets power_monitor_gpu_power_watts to each
// GPU's instant power every `update_period` and pushes.
class PowerGauge {
 public:
  PowerGauge(const device::DeviceInventory& devices, std::vector<int> gpu_indices,
             Seconds update_period, std::string pushgateway_url, std::string job);
  ~PowerGauge();                               // ends every window
  void begin_window(const std::string& name);  // kAlreadyExists if running
  void end_window(const std::string& name);
  const PushRegistry& registry() const { return registry_; }

 private:
  void run(metric_internal::PeriodicWindow& w);
  std::string url_, job_;
  std::vector<std::pair<int, std::shared_ptr<device::Gpu>>> gpus_;
  PushRegistry registry_;
  // Last, so its threads are joined before the members they use go.
  std::unique_ptr<metric_internal::PeriodicWindows> windows_;
};

}  // namespace zeus::metric
