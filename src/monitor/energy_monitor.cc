#include "zeus/monitor/energy_monitor.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/csv.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::monitor {
namespace {

// NVIDIA counters update every 10-100 ms (AMD's about every millisecond): a
// window this long sees several updates unless the counter is stuck.
constexpr Seconds kLongerThanAnyUpdatePeriod{0.5};

}  // namespace

const char* energy_source_name(EnergySource source) {
  switch (source) {
    case EnergySource::kCounter:
      return "counter";
    case EnergySource::kPowerTimeline:
      return "power_timeline";
    case EnergySource::kInstantPowerApprox:
      return "instant_power_approx";
  }
  return "unknown";
}

Joules Measurement::total_gpu_energy() const {
  Joules total{};
  for (const auto& [i, e] : gpu_energy) total += e;
  return total;
}

Joules Measurement::total_energy() const {
  Joules total = total_gpu_energy();
  for (const auto& [i, e] : cpu_energy) total += e;
  for (const auto& [i, e] : dram_energy) total += e;
  return total;
}

EnergyMonitor::EnergyMonitor(const device::DeviceInventory& devices, EnergyMonitorOptions options)
    : clock_(options.clock != nullptr ? *options.clock : SteadyClock::instance()),
      options_(std::move(options)) {
  device::DeviceSelection selected =
      device::select_devices(devices, options_.gpu_indices, options_.cpu_indices);
  nothing_measured_ = device::nothing_to_measure(devices, selected);
  if (nothing_measured_ && options_.warn_when_empty) {
    log::warn(
        "{}; every window of this EnergyMonitor will be empty "
        "(Measurement::nothing_measured says so)",
        *nothing_measured_);
  }
  gpu_indices_ = std::move(selected.gpu_indices);
  gpus_ = std::move(selected.gpus);
  cpu_indices_ = std::move(selected.cpu_indices);
  cpus_ = std::move(selected.cpus);
  std::vector<std::shared_ptr<device::Gpu>> no_counter;
  std::vector<int> no_counter_indices;
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    gpu_has_counter_.push_back(gpus_[k]->supports_energy_counter());
    if (!gpu_has_counter_.back()) {
      no_counter.push_back(gpus_[k]);
      no_counter_indices.push_back(gpu_indices_[k]);
    }
  }
  for (const auto& cpu : cpus_) cpu_has_dram_.push_back(cpu->has_dram());
  if (options_.soc && devices.jetson) jetson_ = devices.jetson;
  if (!no_counter.empty() || jetson_) {
    PowerMonitorOptions pm = options_.power_monitor;
    if (pm.clock == nullptr) pm.clock = &clock_;
    pm.jetson = jetson_;
    power_monitor_ = std::make_unique<PowerMonitor>(
        std::move(no_counter), std::move(no_counter_indices),
        std::vector<std::shared_ptr<device::Cpu>>{}, std::vector<int>{}, std::move(pm));
  }
  if (!options_.log_file.empty()) {
    std::string header = "start_time,window_name,elapsed_time";
    for (int i : gpu_indices_) header += fmt::format(",gpu{}_energy", i);
    for (std::size_t k = 0; k < cpu_indices_.size(); ++k) {
      header += fmt::format(",cpu{}_energy", cpu_indices_[k]);
      if (cpu_has_dram_[k]) header += fmt::format(",dram{}_energy", cpu_indices_[k]);
    }
    log_ = std::make_unique<AppendFile>(options_.log_file);
    if (log_->was_empty()) {
      log_->append(header + "\n");
    } else if (log_->first_line() != header) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("the log file '{}' has the columns '{}', but this run measures "
                              "'{}'; appending would mix them: give another log file (or the "
                              "same devices as before)",
                              options_.log_file, printable(log_->first_line(), 200), header));
    }
  }
}

EnergyMonitor::~EnergyMonitor() {
  if (power_monitor_) power_monitor_->stop();
}

const std::shared_ptr<device::Gpu>& EnergyMonitor::gpu(int gpu_index) const {
  for (std::size_t k = 0; k < gpu_indices_.size(); ++k) {
    if (gpu_indices_[k] == gpu_index) return gpus_[k];
  }
  throw_error(ErrorCode::kNotFound, fmt::format("GPU {} is not monitored", gpu_index));
}

void EnergyMonitor::read_state(WindowState& s, bool tolerate_failures) {
  s.time = clock_.now();
  s.wall_time = 0;
  s.gpu.assign(gpus_.size(), Joules{});
  s.cpu.assign(cpus_.size(), device::CpuEnergy{});
  s.gpu_error.clear();
  s.cpu_error.clear();
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (!gpu_has_counter_[k]) continue;
    try {
      s.gpu[k] = gpus_[k]->total_energy();
    } catch (const Error& e) {
      if (!tolerate_failures) throw;
      s.gpu_error.resize(gpus_.size());
      s.gpu_error[k] = e.what();
    }
  }
  for (std::size_t k = 0; k < cpus_.size(); ++k) {
    try {
      s.cpu[k] = cpus_[k]->total_energy();
    } catch (const Error& e) {
      if (!tolerate_failures) throw;
      s.cpu_error.resize(cpus_.size());
      s.cpu_error[k] = e.what();
    }
  }
}

std::vector<EnergyMonitor::WindowState>& EnergyMonitor::thread_spares() {
  thread_local std::vector<WindowState> spares;
  return spares;
}

EnergyMonitor::WindowState EnergyMonitor::take_spare() {
  std::vector<WindowState>& spares = thread_spares();
  if (spares.empty()) return {};
  WindowState s = std::move(spares.back());
  spares.pop_back();
  return s;
}

void EnergyMonitor::give_back(WindowState&& state) {
  // A thread holds two at a time (a window's start and end readings); a
  // few more cover windows of monitors with other device counts.
  constexpr std::size_t kSpareStatesKept = 4;
  std::vector<WindowState>& spares = thread_spares();
  if (spares.size() < kSpareStatesKept) spares.push_back(std::move(state));
}

bool EnergyMonitor::window_running(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = windows_.find(name);
  return it != windows_.end() && it->second.running;
}

void EnergyMonitor::begin_window(const std::string& name, bool sync, bool restart) {
  {
    std::lock_guard lock(mutex_);
    const auto it = windows_.find(name);
    if (!restart && it != windows_.end() && it->second.running) {
      throw_error(ErrorCode::kAlreadyExists,
                  fmt::format("measurement window '{}' is already running; end it first or pass "
                              "restart",
                              name));
    }
  }
  WindowState state = take_spare();
  if (sync && options_.sync_execution && !gpus_.empty()) options_.sync_execution();
  read_state(state, /*tolerate_failures=*/false);
  state.wall_time = log_ != nullptr ? wall_time_seconds() : 0.0;
  if (power_monitor_) power_monitor_->sample_now();  // a sample at the window's left edge
  std::lock_guard lock(mutex_);
  const auto [it, inserted] = windows_.try_emplace(name);
  WindowSlot& slot = it->second;
  if (!inserted) {
    if (slot.running) {
      if (!restart) {
        throw_error(ErrorCode::kAlreadyExists,
                    fmt::format("measurement window '{}' is already running", name));
      }
      give_back(std::move(slot.state));
    } else {
      --idle_slots_;
    }
  }
  slot.state = std::move(state);
  slot.running = true;
}

SocEnergy EnergyMonitor::soc_energy(Seconds start, Seconds end) const {
  SocEnergy e;
  for (const auto& rail : jetson_->rails()) {
    std::optional<Joules> joules = power_monitor_->soc_energy(rail.rail, start, end);
    if (!joules) joules = Joules(0);  // never read (every read failed, and was warned about)
    (rail.rail == device::SocRail::kCpu   ? e.cpu
     : rail.rail == device::SocRail::kGpu ? e.gpu
                                          : e.total) = joules;
  }
  return e;
}

void EnergyMonitor::reset_windows() {
  std::lock_guard lock(mutex_);
  windows_.clear();
  idle_slots_ = 0;
}

Measurement EnergyMonitor::end_window(const std::string& name, bool sync, bool cancel) {
  // Synchronize before the window is taken, as upstream does: when the sync
  // is interrupted (Ctrl-C in torch.cuda.synchronize) the window still runs
  // and can be ended again.
  if (!cancel && sync && options_.sync_execution && !gpus_.empty()) options_.sync_execution();
  WindowState start;
  {
    std::lock_guard lock(mutex_);
    auto it = windows_.find(name);
    if (it == windows_.end() || !it->second.running) {
      throw_error(ErrorCode::kNotFound,
                  fmt::format("no measurement window named '{}' is running", name));
    }
    start = std::move(it->second.state);
    it->second.running = false;
    if (idle_slots_ >= kIdleSlotsKept) {
      windows_.erase(it);  // many distinct names: keep only as many entries
    } else {
      ++idle_slots_;
    }
  }
  if (cancel) {
    Measurement m;
    m.nothing_measured = nothing_measured_;
    for (int i : gpu_indices_) m.gpu_energy[i] = Joules(0);
    for (int i : cpu_indices_) m.cpu_energy[i] = Joules(0);
    if (jetson_) m.soc_energy = soc_energy(Seconds(0), Seconds(0));
    give_back(std::move(start));
    return m;
  }
  WindowState end = take_spare();
  Measurement m = measure(name, start, end);
  if (log_ != nullptr) log_window(name, start, m);
  give_back(std::move(start));
  give_back(std::move(end));
  return m;
}

Measurement EnergyMonitor::running(const std::string& name, bool sync) {
  if (sync && options_.sync_execution && !gpus_.empty()) options_.sync_execution();
  WindowState start;
  {
    std::lock_guard lock(mutex_);
    auto it = windows_.find(name);
    if (it == windows_.end() || !it->second.running) {
      throw_error(ErrorCode::kNotFound,
                  fmt::format("no measurement window named '{}' is running", name));
    }
    start = it->second.state;  // a copy: the window keeps running
  }
  WindowState end;
  return measure(name, start, end);
}

Measurement EnergyMonitor::measure(const std::string& name, const WindowState& start,
                                   WindowState& end) {
  Measurement m;
  m.nothing_measured = nothing_measured_;
  read_state(end, /*tolerate_failures=*/true);
  if (power_monitor_) power_monitor_->sample_now();  // a sample at the window's right edge
  m.time = end.time - start.time;
  if (jetson_) m.soc_energy = soc_energy(start.time, end.time);

  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    const int index = gpu_indices_[k];
    if (!end.gpu_error.empty() && !end.gpu_error[k].empty()) {
      m.failed_gpus[index] = end.gpu_error[k];
      continue;
    }
    std::optional<Joules> energy;
    EnergySource source = EnergySource::kCounter;
    if (gpu_has_counter_[k]) {
      energy = end.gpu[k] - start.gpu[k];
    } else {
      const device::PowerDomain domain = power_monitor_->domains().front();
      energy = power_monitor_->gpu_energy(index, domain, start.time, end.time);
      source = EnergySource::kPowerTimeline;
    }
    const bool stuck = !energy || (energy->value() == 0.0 && m.time.count() > 0.0);
    if (stuck) {
      m.gpus_below_update_period.push_back(index);
      if (options_.approx_instant_energy || !energy) {
        try {
          energy = gpus_[k]->power(device::PowerDomain::kDeviceInstant) * m.time;
          source = EnergySource::kInstantPowerApprox;
        } catch (const Error& e) {
          if (e.code() != ErrorCode::kNotSupported) {
            m.failed_gpus[index] = e.what();
            continue;
          }
          energy = energy.value_or(Joules(0));
        }
      }
    }
    m.gpu_energy[index] = *energy;
    m.gpu_energy_source[index] = source;
  }
  // Warned once per monitor (like Python's warnings); the measurement itself
  // always carries the flag.
  if (!m.gpus_below_update_period.empty() && !options_.approx_instant_energy &&
      !warned_short_window_.exchange(true)) {
    // Counters step every 10-100 ms: only a window shorter than a few steps
    // can honestly miss every update. A longer one means a stuck counter.
    if (m.time < kLongerThanAnyUpdatePeriod) {
      log::warn(
          "the energy counter of GPU(s) {1} did not move during window '{0}' ({2:.4f} s), so "
          "their energy reads 0 (flagged in the measurement): the window was probably shorter "
          "than the counter's update period (about 100 ms on NVIDIA GPUs); measure longer windows "
          "or enable approx_instant_energy",
          name, fmt::join(m.gpus_below_update_period, ", "), m.time.count());
    } else {
      log::warn(
          "the energy counter of GPU(s) {1} did not move during window '{0}' ({2:.3f} s, far "
          "longer than any counter's update period), so their energy reads 0 (flagged in the "
          "measurement): the counter looks stuck on this GPU or driver; check it with `zeus "
          "show-env` (energy counter check) and measure with approx_instant_energy or `zeus "
          "monitor power` meanwhile",
          name, fmt::join(m.gpus_below_update_period, ", "), m.time.count());
    }
  }
  for (std::size_t k = 0; k < cpus_.size(); ++k) {
    if (!end.cpu_error.empty() && !end.cpu_error[k].empty()) {
      m.failed_cpus[cpu_indices_[k]] = end.cpu_error[k];
      continue;
    }
    m.cpu_energy[cpu_indices_[k]] = end.cpu[k].package - start.cpu[k].package;
    if (end.cpu[k].dram && start.cpu[k].dram) {
      m.dram_energy[cpu_indices_[k]] = *end.cpu[k].dram - *start.cpu[k].dram;
    }
  }
  for (const auto& [i, why] : m.failed_gpus) {
    log::warn("window '{}': GPU {} could not be read at the end and is left out: {}", name, i, why);
  }
  for (const auto& [i, why] : m.failed_cpus) {
    log::warn("window '{}': CPU package {} could not be read at the end and is left out: {}", name,
              i, why);
  }
  return m;
}

void EnergyMonitor::log_window(const std::string& name, const WindowState& start,
                               const Measurement& m) {
  std::string row =
      fmt::format("{:.6f},{},{:.6f}", start.wall_time, csv_escape(name), m.time.count());
  const auto cell = [](const std::map<int, Joules>& energies, int i) {
    const auto it = energies.find(i);
    return it == energies.end() ? std::string(",") : fmt::format(",{:.6f}", it->second.value());
  };
  for (int i : gpu_indices_) row += cell(m.gpu_energy, i);
  for (std::size_t k = 0; k < cpu_indices_.size(); ++k) {
    row += cell(m.cpu_energy, cpu_indices_[k]);
    if (cpu_has_dram_[k]) row += cell(m.dram_energy, cpu_indices_[k]);
  }
  row += "\n";
  std::lock_guard lock(mutex_);
  log_->append(row);
}

}  // namespace zeus::monitor
