#include "zeus/monitor/carbon/hourly_rate_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::carbon {
namespace {

// Inner window names cannot collide with each other (the inner monitor is
// private, so no user window shares its namespace).
const std::string kWholePrefix = "window/";
const std::string kSlicePrefix = "slice/";

// Adds `m` to the hours it overlaps, by time fraction (constant power inside a slice).
void apportion(const monitor::Measurement& m, double start, double end,
               std::map<UtcHour, HourShare>& hours) {
  if (!(end > start)) end = start;
  const UtcHour first = utc_hour_of(start);
  const UtcHour last = end > start ? utc_hour_of(std::nextafter(end, start)) : first;
  const double span = end - start;
  for (UtcHour h = first; h <= last; h += kSecondsPerHour) {
    const double lo = std::max(start, static_cast<double>(h));
    const double hi = std::min(end, static_cast<double>(h + kSecondsPerHour));
    const double fraction = span > 0 ? (hi - lo) / span : 1.0;
    HourShare& share = hours[h];
    share.hour = h;
    share.time += Seconds(std::max(0.0, hi - lo));
    for (const auto& [i, e] : m.gpu_energy) share.gpu_energy[i] += e * fraction;
    for (const auto& [i, e] : m.cpu_energy) share.cpu_energy[i] += e * fraction;
    for (const auto& [i, e] : m.dram_energy) share.dram_energy[i] += e * fraction;
  }
}

// The window's energy less what its earlier hours already hold: the energy
// of its last slice, taken from the same reading as the whole window.
monitor::Measurement rest_of_window(const monitor::Measurement& whole,
                                    const std::map<UtcHour, HourShare>& hours) {
  monitor::Measurement rest = whole;
  const auto subtract = [&](std::map<int, Joules>& energy,
                            std::map<int, Joules> HourShare::*field) {
    for (auto& [i, joules] : energy) {
      double left = joules.value();
      for (const auto& [hour, share] : hours) {
        if (const auto it = (share.*field).find(i); it != (share.*field).end()) {
          left -= it->second.value();
        }
      }
      joules = Joules(std::max(0.0, left));
    }
  };
  subtract(rest.gpu_energy, &HourShare::gpu_energy);
  subtract(rest.cpu_energy, &HourShare::cpu_energy);
  subtract(rest.dram_energy, &HourShare::dram_energy);
  return rest;
}

std::map<int, double> priced(const std::vector<HourShare>& hours,
                             const std::vector<std::optional<double>>& rates,
                             std::map<int, Joules> HourShare::*field) {
  std::map<int, double> out;
  for (std::size_t h = 0; h < hours.size(); ++h) {
    for (const auto& [i, e] : hours[h].*field) out[i] += e.value() / kJoulesPerKwh * *rates[h];
  }
  return out;
}

}  // namespace

Joules HourShare::total_energy() const {
  Joules sum{};
  for (const auto* m : {&gpu_energy, &cpu_energy, &dram_energy}) {
    for (const auto& [i, e] : *m) sum += e;
  }
  return sum;
}

std::optional<double> RateResult::total() const {
  if (!gpu || !cpu || !dram) return std::nullopt;
  double sum = 0;
  for (const auto* m : {&*gpu, &*cpu, &*dram}) {
    for (const auto& [i, v] : *m) sum += v;
  }
  return sum;
}

std::string result_unit_of(const std::string& rate_unit) {
  const auto slash = rate_unit.find("/kWh");
  return slash == std::string::npos ? rate_unit : rate_unit.substr(0, slash);
}

HourlyRateMonitor::HourlyRateMonitor(const device::DeviceInventory& devices,
                                     std::vector<std::shared_ptr<HourlyRateProvider>> providers,
                                     HourlyRateMonitorOptions options)
    : providers_(std::move(providers)), wall_time_(std::move(options.wall_time)) {
  if (providers_.empty() ||
      std::any_of(providers_.begin(), providers_.end(), [](const auto& p) { return !p; })) {
    throw_error(ErrorCode::kInvalidArgument,
                "hourly rate monitor: give a carbon intensity or price provider");
  }
  if (!wall_time_) wall_time_ = wall_time_seconds;
  clock_ = options.energy.clock != nullptr ? options.energy.clock : &SteadyClock::instance();
  options.energy.log_file.clear();
  energy_ = std::make_unique<monitor::EnergyMonitor>(devices, std::move(options.energy));
  if (options.start_thread) thread_ = std::thread([this] { run(); });
}

HourlyRateMonitor::~HourlyRateMonitor() { stop(); }

void HourlyRateMonitor::stop() {
  stop_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void HourlyRateMonitor::run() {
  constexpr double kAfterBoundary = 0.05;  // wake just after the hour turns
  for (;;) {
    const double now = wall_time_();
    const double next = static_cast<double>(utc_hour_of(now) + kSecondsPerHour) + kAfterBoundary;
    const Seconds deadline = clock_->now() + Seconds(std::clamp(next - now, 0.01, 3600.0));
    if (!clock_->wait_until(deadline, stop_.get_token())) return;
    try {
      tick();
    } catch (const Error& e) {
      log::warn("hourly rate monitor: splitting windows at the hour failed: {}", e.what());
    }
    bool any_window = false;
    {
      std::lock_guard windows_lock(mutex_);
      any_window = !windows_.empty();
    }
    if (!any_window) continue;
    for (const auto& p : providers_) {
      try {
        p->refresh(wall_time_());
      } catch (const Error& e) {
        log::warn("{}: refreshing hourly rates failed (retried in an hour): {}", p->description(),
                  e.what());
      }
    }
  }
}

void HourlyRateMonitor::begin_window(const std::string& name, bool sync) {
  std::lock_guard lock(mutex_);
  if (windows_.count(name) != 0) {
    throw_error(ErrorCode::kAlreadyExists,
                fmt::format("measurement window '{}' is already running", name));
  }
  energy_->begin_window(kWholePrefix + name, sync);
  Window w;
  w.slice = kSlicePrefix + std::to_string(next_slice_++);
  w.slice_start = wall_time_();
  try {
    energy_->begin_window(w.slice, false);
  } catch (...) {
    energy_->end_window(kWholePrefix + name, false, true);
    throw;
  }
  windows_.emplace(name, std::move(w));
}

void HourlyRateMonitor::end_slice_locked(Window& w, double wall_end) {
  const monitor::Measurement m = energy_->end_window(w.slice, false);
  apportion(m, w.slice_start, wall_end, w.hours);
}

void HourlyRateMonitor::tick() {
  std::lock_guard lock(mutex_);
  const double now = wall_time_();
  for (auto& [name, w] : windows_) {
    if (utc_hour_of(w.slice_start) >= utc_hour_of(now)) continue;
    end_slice_locked(w, now);
    w.slice = kSlicePrefix + std::to_string(next_slice_++);
    w.slice_start = now;
    energy_->begin_window(w.slice, false);
  }
}

bool HourlyRateMonitor::window_running(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return windows_.count(name) != 0;
}

HourlyMeasurement HourlyRateMonitor::end_window(const std::string& name, bool sync) {
  HourlyMeasurement out;
  {
    std::lock_guard lock(mutex_);
    auto it = windows_.find(name);
    if (it == windows_.end()) {
      throw_error(ErrorCode::kNotFound,
                  fmt::format("measurement window '{}' is not running", name));
    }
    Window w = std::move(it->second);
    windows_.erase(it);
    const double now = wall_time_();
    try {
      out.energy = energy_->end_window(kWholePrefix + name, sync);
    } catch (...) {
      energy_->end_window(w.slice, false, /*cancel=*/true);
      throw;
    }
    energy_->end_window(w.slice, false, /*cancel=*/true);
    // The last slice is the rest of the window, so the hours add up to the
    // window's energy exactly (a reading of its own would come a moment later).
    apportion(rest_of_window(out.energy, w.hours), w.slice_start, now, w.hours);
    for (auto& [hour, share] : w.hours) out.hours.push_back(std::move(share));
  }
  for (const auto& provider : providers_) {
    RateResult r;
    r.provider = provider->description();
    r.rate_unit = provider->unit();
    r.unit = result_unit_of(r.rate_unit);
    for (const HourShare& h : out.hours) {
      try {
        r.hour_rates.push_back(provider->rate(h.hour));
      } catch (const Error& e) {
        r.hour_rates.push_back(std::nullopt);
        if (r.error.empty()) r.error = e.what();
      }
    }
    if (r.error.empty()) {
      r.gpu = priced(out.hours, r.hour_rates, &HourShare::gpu_energy);
      r.cpu = priced(out.hours, r.hour_rates, &HourShare::cpu_energy);
      r.dram = priced(out.hours, r.hour_rates, &HourShare::dram_energy);
    } else {
      log::warn("window '{}': no {} from {}: {} (the energy measurement is kept)", name, r.unit,
                r.provider, r.error);
    }
    out.rates.push_back(std::move(r));
  }
  return out;
}

}  // namespace zeus::carbon
