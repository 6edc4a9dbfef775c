// Energy windows priced by hourly rates: the shared algorithm behind
// CarbonEmissionMonitor and EnergyCostMonitor (and `zeus monitor energy
// --carbon-... --price-...`). As the Python Zeus does, every window is split
// at UTC hour boundaries; each hour's energy per device is multiplied by that
// hour's rate (kWh = J / 3.6e6; gCO2eq = kWh x gCO2eq/kWh; $ = kWh x $/kWh).
//
// How the split works: a background thread wakes just after every UTC hour
// boundary and ends each running window's current slice (an internal
// EnergyMonitor window) and begins the next, so each slice's energy belongs
// to one hour. A slice that spans a boundary anyway (the thread was late, or
// there is none) is apportioned by time, i.e. assuming constant power inside
// it. The thread also calls the providers' refresh() about hourly, so history
// APIs keep the early hours of long windows.
//
// A provider that fails never loses the energy: the measurement keeps every
// device's energy and the hourly split, and the failing provider's result
// says why it has no emissions or cost.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus::carbon {

inline constexpr double kJoulesPerKwh = 3.6e6;

// One UTC hour of a window.
struct HourShare {
  UtcHour hour = 0;
  Seconds time{};  // window time inside this hour
  std::map<int, Joules> gpu_energy;
  std::map<int, Joules> cpu_energy;
  std::map<int, Joules> dram_energy;
  Joules total_energy() const;
};

// A window's energy priced by one provider.
struct RateResult {
  std::string provider;                           // description()
  std::string rate_unit;                          // "gCO2eq/kWh", "$/kWh"
  std::string unit;                               // of the results: "gCO2eq", "$"
  std::vector<std::optional<double>> hour_rates;  // parallel to HourlyMeasurement::hours
  // energy x rate per device; nullopt when some hour had no rate (see error).
  std::optional<std::map<int, double>> gpu;
  std::optional<std::map<int, double>> cpu;
  std::optional<std::map<int, double>> dram;
  std::string error;  // why there are no results; empty when there are
  std::optional<double> total() const;
};

struct HourlyMeasurement {
  monitor::Measurement energy;    // the whole window, as EnergyMonitor measures it
  std::vector<HourShare> hours;   // in time order
  std::vector<RateResult> rates;  // parallel to the monitor's providers
};

struct HourlyRateMonitorOptions {
  // Devices, sync function and clock of the energy measurement (the thread
  // also waits on that clock). log_file is not used here (front ends log the
  // priced result themselves, see PricedLog).
  monitor::EnergyMonitorOptions energy;
  // Wall time in Unix seconds, which decides the UTC hours; nullptr: the
  // system clock. Tests pass the same manual clock as energy.clock.
  std::function<double()> wall_time;
  // Run the thread that splits windows at hour boundaries and refreshes the
  // providers. Off in tests that call tick() by hand.
  bool start_thread = true;
};

// Thread-safe: any thread may begin and end windows; a mutex guards the
// window table (held across the inner energy monitor's calls so a window's
// slices never interleave). Providers are called outside it.
class HourlyRateMonitor {
 public:
  // kInvalidArgument for no provider or bad device indices.
  HourlyRateMonitor(const device::DeviceInventory& devices,
                    std::vector<std::shared_ptr<HourlyRateProvider>> providers,
                    HourlyRateMonitorOptions options = {});
  ~HourlyRateMonitor();
  HourlyRateMonitor(const HourlyRateMonitor&) = delete;
  HourlyRateMonitor& operator=(const HourlyRateMonitor&) = delete;

  // kAlreadyExists for a window that is running.
  void begin_window(const std::string& name, bool sync = true);
  // kNotFound for a window that is not running. Throws only for that and for
  // device errors; provider errors land in the result's RateResult::error.
  HourlyMeasurement end_window(const std::string& name, bool sync = true);
  bool window_running(const std::string& name) const;

  // Splits every running window whose current slice began in an earlier hour
  // than now. The thread calls it just after each hour boundary.
  void tick();
  // Stops the thread (idempotent).
  void stop();

  const monitor::EnergyMonitor& energy_monitor() const { return *energy_; }
  const std::vector<std::shared_ptr<HourlyRateProvider>>& providers() const { return providers_; }

 private:
  struct Window {
    std::string slice;   // name of the running slice window
    double slice_start;  // wall seconds
    std::map<UtcHour, HourShare> hours;
  };
  void end_slice_locked(Window& w, double wall_end);
  void run();

  std::vector<std::shared_ptr<HourlyRateProvider>> providers_;
  std::function<double()> wall_time_;
  std::unique_ptr<monitor::EnergyMonitor> energy_;

  mutable std::mutex mutex_;  // guards windows_ and next_slice_
  std::map<std::string, Window> windows_;
  std::uint64_t next_slice_ = 0;

  Clock* clock_;           // the thread's waits
  std::stop_source stop_;  // wakes the thread's Clock::wait_until
  std::thread thread_;
};

// "gCO2eq/kWh" -> "gCO2eq".
std::string result_unit_of(const std::string& rate_unit);

}  // namespace zeus::carbon
