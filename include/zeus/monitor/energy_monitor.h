// Named measurement windows over GPUs, CPU packages and DRAM: the ZeusMonitor
// of the Python Zeus. begin_window()/end_window() read each device's energy
// counter once; windows nest and overlap freely.
#pragma once

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "zeus/device/devices.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/util/clock.h"
#include "zeus/util/files.h"

namespace zeus::monitor {

// Where a GPU's window energy came from.
enum class EnergySource {
  kCounter,             // difference of the GPU's energy counter
  kPowerTimeline,       // integral of sampled power (GPUs without a counter)
  kInstantPowerApprox,  // instant power x window time (window too short, approx asked)
};
const char* energy_source_name(EnergySource source);

// A Jetson board's rails over a window (the Python Zeus's JetsonMeasurement):
// integrated rail power. A rail the board lacks stays nullopt.
struct SocEnergy {
  std::optional<Joules> cpu;
  std::optional<Joules> gpu;
  std::optional<Joules> total;  // the module's input rail
};

struct Measurement {
  Seconds time{};
  std::map<int, Joules> gpu_energy;   // by GPU index
  std::map<int, Joules> cpu_energy;   // by CPU package index; empty without RAPL
  std::map<int, Joules> dram_energy;  // packages that have a DRAM zone
  std::map<int, EnergySource> gpu_energy_source;
  // GPUs whose counter did not move during the window: the window was shorter
  // than the counter's update period, so their energy is 0 (or approximated
  // when approx_instant_energy is on). Never a silent zero.
  std::vector<int> gpus_below_update_period;
  // Devices whose reading failed at the end of the window (GPU lost, counter
  // unreadable), with the error: left out of the energies and totals above,
  // so one failing device never costs the others' results.
  std::map<int, std::string> failed_gpus;
  std::map<int, std::string> failed_cpus;
  // Set when a Jetson board is measured. Not part of the totals below (its
  // total rail already includes the CPU and GPU rails).
  std::optional<SocEnergy> soc_energy;
  // Set when the monitor has no device to measure (no driver, no readable
  // RAPL, a selection of nothing): why, in words a user can act on. Its
  // energies are then absent and its totals 0 J, which is not a measured 0.
  std::optional<std::string> nothing_measured;

  // No device was measured: the totals are not measurements.
  bool empty() const {
    return gpu_energy.empty() && cpu_energy.empty() && dram_energy.empty() && !soc_energy;
  }
  Joules total_gpu_energy() const;
  // GPUs + CPU packages + DRAM.
  Joules total_energy() const;
};

struct EnergyMonitorOptions {
  // GPU indices to measure (this process's CUDA indices). nullopt: all.
  std::optional<std::vector<int>> gpu_indices;
  // CPU packages to measure. nullopt: all readable packages.
  std::optional<std::vector<int>> cpu_indices;
  // Windows whose counter did not move get instant power x time instead of 0.
  bool approx_instant_energy = false;
  // CSV log: a row per ended window (start_time,window_name,elapsed_time,
  // gpu<i>_energy,cpu<i>_energy,dram<i>_energy...), appended; the header is
  // written to a new or empty file, and an existing file whose header differs
  // is refused (kInvalidArgument) rather than mixed. An empty cell is a device
  // whose reading failed.
  std::string log_file;
  // Called before counters are read (when a call asks for sync), so a
  // framework can wait for queued GPU work: e.g. [] { cudaDeviceSynchronize(); }.
  std::function<void()> sync_execution;
  // Measure the Jetson board's rails when the inventory has one.
  bool soc = true;
  // A monitor with nothing to measure logs a warning (once, naming why) when
  // it is made; front ends that say so their own way (the CLI refuses, Python
  // raises a RuntimeWarning) turn it off. Every measurement says it either
  // way (Measurement::nothing_measured).
  bool warn_when_empty = true;
  // Options of the power monitor started for GPUs without an energy counter
  // (and for Jetson rails).
  PowerMonitorOptions power_monitor;
  Clock* clock = nullptr;  // nullptr: the process's steady clock
};

// What an optimizer needs from a monitor: named windows and the GPUs they
// measure (to change their settings). EnergyMonitor is the real one; the
// Python package adapts any object with the ZeusMonitor methods (e.g. the
// log-replaying ReplayZeusMonitor that upstream's tests use), as the Python
// Zeus's duck-typed optimizers accept.
class WindowMonitor {
 public:
  virtual ~WindowMonitor() = default;
  // Starts window `name`. kAlreadyExists if it is running, unless restart.
  virtual void begin_window(const std::string& name, bool sync, bool restart) = 0;
  // Ends window `name` and returns what it measured. kNotFound for a window
  // that is not running. cancel: drop it and return an empty measurement.
  virtual Measurement end_window(const std::string& name, bool sync, bool cancel) = 0;
  virtual bool window_running(const std::string& name) const = 0;
  virtual const std::vector<int>& gpu_indices() const = 0;
  // The GPU with index gpu_indices()[k] (for optimizers that change its settings).
  virtual const std::shared_ptr<device::Gpu>& gpu(int gpu_index) const = 0;

 protected:
  WindowMonitor() = default;
  WindowMonitor(const WindowMonitor&) = default;
  WindowMonitor& operator=(const WindowMonitor&) = default;
};

// Thread-safe: any thread may begin or end any window; a mutex guards the
// window table and the log file. Counter reads happen outside the lock.
class EnergyMonitor final : public WindowMonitor {
 public:
  // Measures devices from an inventory (see discover_devices()).
  // kInvalidArgument for indices that do not exist.
  EnergyMonitor(const device::DeviceInventory& devices, EnergyMonitorOptions options = {});
  ~EnergyMonitor() override;
  EnergyMonitor(const EnergyMonitor&) = delete;
  EnergyMonitor& operator=(const EnergyMonitor&) = delete;

  // Starts window `name`. kAlreadyExists if it is running, unless restart.
  void begin_window(const std::string& name, bool sync = true, bool restart = false) override;
  // Ends window `name` and returns what it measured. kNotFound for a window
  // that is not running. cancel: drop it, return an empty measurement, log nothing.
  // A device whose reading fails now is reported in failed_gpus/failed_cpus
  // (and warned about) instead of failing the whole window. kIo when the log
  // row cannot be written (the window is ended all the same).
  Measurement end_window(const std::string& name, bool sync = true, bool cancel = false) override;
  // What window `name` has measured so far, without ending it (progress
  // bars, early stopping): the measurement end_window would return now, not
  // logged. kNotFound for a window that is not running. sync: as end_window.
  Measurement running(const std::string& name, bool sync = false);
  // Drops every running window.
  void reset_windows();
  bool window_running(const std::string& name) const override;

  const std::vector<int>& gpu_indices() const override { return gpu_indices_; }
  const std::vector<int>& cpu_indices() const { return cpu_indices_; }
  const std::shared_ptr<device::Gpu>& gpu(int gpu_index) const override;
  // Whether a window call with this sync flag may wait on something besides
  // the counter reads: the sync function (queued GPU work) or the log file.
  bool window_call_may_wait(bool sync) const {
    return (sync && options_.sync_execution && !gpus_.empty()) || log_ != nullptr;
  }
  // The power monitor serving GPUs without an energy counter (nullptr if none).
  PowerMonitor* power_monitor() const { return power_monitor_.get(); }
  Clock& clock() const { return clock_; }

 private:
  // Counter readings at a window's edge.
  struct WindowState {
    Seconds time{};
    double wall_time = 0;                // for the log
    std::vector<Joules> gpu;             // parallel to gpus_ (0 for GPUs without a counter)
    std::vector<device::CpuEnergy> cpu;  // parallel to cpus_
    // At the end edge only: why a device could not be read. Empty when every
    // device was read; else parallel to gpus_/cpus_ (empty string: read).
    std::vector<std::string> gpu_error, cpu_error;
  };
  // A window's entry. Entries outlive their windows (up to kIdleSlotsKept of
  // them) and states go back to the thread's spares, so a window that begins
  // and ends every step allocates nothing for them: the key, the node and the
  // vectors are the last step's.
  struct WindowSlot {
    bool running = false;
    WindowState state;
  };
  static constexpr std::size_t kIdleSlotsKept = 64;
  // Fills `s` with readings taken now (reusing its vectors' storage).
  // tolerate_failures: record a failing device's error instead of throwing.
  void read_state(WindowState& s, bool tolerate_failures);
  void log_window(const std::string& name, const WindowState& start, const Measurement& m);
  // The measurement of a window that began at `start`, read now into `end`
  // (end_window, running).
  Measurement measure(const std::string& name, const WindowState& start, WindowState& end);
  // A state with storage to read into, and back for reuse: this thread's
  // spares (a window's two states go back to the thread that ended it).
  static std::vector<WindowState>& thread_spares();
  static WindowState take_spare();
  static void give_back(WindowState&& state);
  // The Jetson rails' energy over [start, end] (zeros for a cancelled window).
  SocEnergy soc_energy(Seconds start, Seconds end) const;

  Clock& clock_;
  EnergyMonitorOptions options_;
  std::vector<int> gpu_indices_;
  std::vector<int> cpu_indices_;
  std::vector<std::shared_ptr<device::Gpu>> gpus_;  // parallel to gpu_indices_
  std::vector<bool> gpu_has_counter_;
  std::vector<std::shared_ptr<device::Cpu>> cpus_;  // parallel to cpu_indices_
  std::vector<bool> cpu_has_dram_;
  std::shared_ptr<const device::JetsonBoard> jetson_;  // null unless measuring a Jetson
  std::optional<std::string> nothing_measured_;        // why there is no device, if there is none
  std::unique_ptr<PowerMonitor> power_monitor_;        // for GPUs without a counter, Jetson rails

  mutable std::mutex mutex_;  // guards windows_, idle_slots_ and log_
  std::unordered_map<std::string, WindowSlot> windows_;
  std::size_t idle_slots_ = 0;  // entries of windows_ not running
  std::unique_ptr<AppendFile> log_;
  std::atomic<bool> warned_short_window_{false};
};

}  // namespace zeus::monitor
