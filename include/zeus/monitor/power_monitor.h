// Background power sampling into per-device timelines, and energy by
// integrating them. Serves GPUs without an energy counter (pre-Volta) and
// anyone who wants a power timeline (the `zeus monitor power` command).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/device/jetson.h"
#include "zeus/util/clock.h"
#include "zeus/util/periodic_thread.h"

namespace zeus::monitor {

struct PowerSample {
  Seconds time;  // on the monitor's clock
  Watts power;
};

struct PowerMonitorOptions {
  // Domains to sample on every GPU. Empty: instant if supported, else average.
  std::vector<device::PowerDomain> domains;
  // Sampling interval. nullopt: inferred from how often the GPUs' power
  // readings change (half the fastest update period, at most 100 ms), as the
  // Python Zeus does.
  std::optional<Seconds> interval;
  // Bound on memory: samples kept per device and domain (oldest dropped).
  std::size_t max_samples = 1 << 16;
  // Start the background thread. Off in tests that call sample_now() by hand.
  bool start_thread = true;
  Clock* clock = nullptr;  // nullptr: the process's steady clock
  // A Jetson board whose rails are sampled too (each into its own timeline);
  // with it, a monitor without GPUs or CPUs is allowed.
  std::shared_ptr<const device::JetsonBoard> jetson;
};

// Thread-safe. One background thread calls sample_now() every interval of the
// injected clock (waiting with Clock::wait_until, so stop() wakes it and a
// ManualClock steps it); any
// thread may query timelines or call sample_now() itself (the energy monitor
// does at window edges). A mutex guards the timelines; device reads happen
// outside it. Runs of equal readings are stored as their first and last
// sample, which keeps memory low without changing the integral.
class PowerMonitor {
 public:
  // `gpus[k]` is reported as GPU index gpu_indices[k] (same for CPUs).
  // Throws kInvalidArgument for an empty device list or an unsupported domain.
  PowerMonitor(std::vector<std::shared_ptr<device::Gpu>> gpus, std::vector<int> gpu_indices,
               std::vector<std::shared_ptr<device::Cpu>> cpus, std::vector<int> cpu_indices,
               PowerMonitorOptions options = {});
  ~PowerMonitor();
  PowerMonitor(const PowerMonitor&) = delete;
  PowerMonitor& operator=(const PowerMonitor&) = delete;

  // Stops the thread (idempotent). Timelines stay queryable.
  void stop();
  // Reads every device once and records the samples.
  void sample_now();

  Seconds interval() const { return interval_; }
  const std::vector<device::PowerDomain>& domains() const { return domains_; }
  const std::vector<int>& gpu_indices() const { return gpu_indices_; }
  const std::vector<int>& cpu_indices() const { return cpu_indices_; }

  // Samples in [start, end] (inclusive; open ends when nullopt), time-ordered.
  std::vector<PowerSample> gpu_timeline(int gpu_index, device::PowerDomain domain,
                                        std::optional<Seconds> start = std::nullopt,
                                        std::optional<Seconds> end = std::nullopt) const;
  // CPU package (and DRAM) power derived from consecutive RAPL energy reads.
  std::vector<PowerSample> cpu_timeline(int cpu_index, bool dram = false,
                                        std::optional<Seconds> start = std::nullopt,
                                        std::optional<Seconds> end = std::nullopt) const;

  // Power at time t, linearly interpolated between the neighbouring samples
  // (held flat beyond the ends). nullopt when there are no samples. (The
  // Python binding's get_power(time) serves it.)
  std::optional<Watts> gpu_power_at(int gpu_index, device::PowerDomain domain, Seconds t) const;
  std::optional<Watts> latest_gpu_power(int gpu_index, device::PowerDomain domain) const;

  // Energy over [start, end]: trapezoids over the samples inside, plus the
  // pieces up to each edge with the power interpolated at the edge. nullopt
  // when no sample exists. Reads power samples only (not energy counters).
  std::optional<Joules> gpu_energy(int gpu_index, device::PowerDomain domain, Seconds start,
                                   Seconds end) const;

  // The same over a CPU package's (or its DRAM's) derived power timeline.
  std::optional<Joules> cpu_energy(int cpu_index, bool dram, Seconds start, Seconds end) const;

  // A Jetson rail's power timeline and energy (as for GPUs); empty/nullopt
  // for a rail the board lacks or that was never read.
  std::vector<PowerSample> soc_timeline(device::SocRail rail,
                                        std::optional<Seconds> start = std::nullopt,
                                        std::optional<Seconds> end = std::nullopt) const;
  std::optional<Joules> soc_energy(device::SocRail rail, Seconds start, Seconds end) const;
  const std::shared_ptr<const device::JetsonBoard>& jetson() const { return jetson_; }

  // Infers the update period of the GPUs' power readings (see options.interval).
  static Seconds infer_interval(const std::vector<std::shared_ptr<device::Gpu>>& gpus,
                                device::PowerDomain domain, Clock& clock);

 private:
  using Timeline = std::deque<PowerSample>;
  struct CpuLast {
    Seconds time{};
    device::CpuEnergy energy{};
    bool valid = false;
  };
  void record_locked(Timeline& timeline, PowerSample sample);
  const Timeline* find_gpu_timeline_locked(int gpu_index, device::PowerDomain domain) const;
  // The timeline of GPU k's domain j (slot k * domains_.size() + j), made on
  // its first sample and remembered (std::map nodes do not move).
  Timeline& gpu_timeline_locked(std::size_t slot);

  std::vector<std::shared_ptr<device::Gpu>> gpus_;
  std::vector<int> gpu_indices_;
  std::vector<std::shared_ptr<device::Cpu>> cpus_;
  std::vector<int> cpu_indices_;
  std::shared_ptr<const device::JetsonBoard> jetson_;
  std::vector<device::PowerDomain> domains_;
  Clock& clock_;
  Seconds interval_{0.1};
  std::size_t max_samples_;

  mutable std::mutex mutex_;  // guards the timelines and cpu_last_
  std::map<std::pair<int, device::PowerDomain>, Timeline> gpu_timelines_;
  std::vector<Timeline*> gpu_timeline_slots_;  // by slot; nullptr: no sample yet
  std::map<std::pair<int, bool>, Timeline> cpu_timelines_;
  std::map<device::SocRail, Timeline> soc_timelines_;
  std::vector<CpuLast> cpu_last_;
  std::map<std::pair<int, device::PowerDomain>, int> unsupported_counts_;

  PeriodicThread sampler_;  // calls sample_now() every interval
};

// Energy of a timeline over [start, end] (the integration rule above);
// nullopt without samples. kInvalidArgument for a NaN, infinite or reversed
// range (never a silent 0 J). Exposed for reuse and tests; samples must be
// time-ordered.
std::optional<Joules> integrate_power(const std::deque<PowerSample>& samples, Seconds start,
                                      Seconds end);
// Power at t: linear between neighbouring samples, held flat beyond the ends.
std::optional<Watts> interpolate_power(const std::deque<PowerSample>& samples, Seconds t);

}  // namespace zeus::monitor
