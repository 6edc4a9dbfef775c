// The attribution ledger: who used each device's energy, conserved exactly.
//
// For every device (a GPU — for MIG the parent GPU — or a RAPL package or
// DRAM zone) and every poll interval:
//
//     measured = idle + Σ consumers' active + unattributed
//
// in integer millijoules, every term ≥ 0. `measured` is the difference of the
// device's own energy counter, never power × time, so the ledger agrees with
// the device's energy metric to the millijoule. Idle is what the caller says
// the device would have used anyway (configured or learned idle power × the
// interval), capped at the measured energy; the rest, the active energy, is
// split over the interval's consumers in proportion to their weights by the
// largest-remainder method, or left unattributed when no consumer weighs.
//
// Consumers are processes (a pid with its start time, so a reused pid is a
// new process) that roll up to workloads (one cgroup: a container, a pod's
// container, a Slurm step, a systemd service), or workloads directly (the CPU
// split weighs cgroups by their CPU time). A consumer that has not been seen
// for the retention window is dropped; its energy moves to a per-device
// "retired" total, so Σ workloads + retired = attributed at all times.
//
// Pure: no device, clock or file is touched. Not thread-safe: the caller
// serializes (the node attributor holds a mutex). In the steady state (no new
// consumer) record() allocates nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::attribution {

// How a device's active energy was split in an interval.
enum class Method : std::uint8_t {
  kNone,                // no consumer weighed: all active energy is unattributed
  kProcessUtilization,  // time-integrated per-process SM utilization samples
  kAccounting,          // NVML accounting: utilization × running time per process
  kEqualSplit,          // equally over the running compute processes (an estimate)
  kMigSmFraction,       // MIG: instance SM fraction × activity (an estimate)
  kCpuTime,             // CPU time per cgroup (or per process)
};
const char* method_name(Method method);
// Whether the split is an estimate rather than a measurement of each one's use.
bool method_is_estimate(Method method);

// Where a device's idle power comes from.
enum class IdleSource : std::uint8_t {
  kNone,        // unknown: idle is 0, and every joule is active
  kConfigured,  // given by the operator
  kLearned,     // the lowest power seen while no process ran
};
const char* idle_source_name(IdleSource source);

// Splits `total` (≥ 0) over `weights` (each ≥ 0 and finite, at least one > 0)
// in proportion, in whole units: each gets the floor of its exact share and
// the units left over go, one each, to the largest fractional remainders
// (ties to the lower index). The parts add up to `total` exactly.
// `out` is resized to weights.size(); `scratch` is reused working space, so a
// caller that keeps both allocates nothing once they are large enough.
using SplitScratch = std::vector<std::pair<long double, std::size_t>>;  // (remainder, index)
void split_exact(std::int64_t total, std::span<const double> weights,
                 std::vector<std::int64_t>& out, SplitScratch& scratch);

using DeviceIndex = std::uint32_t;
using WorkloadIndex = std::uint32_t;
using ProcessIndex = std::uint32_t;
inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

// What a workload is, as labels (dcgm-exporter's names where they exist).
struct WorkloadLabels {
  std::string cgroup;  // the key: one workload per cgroup path
  std::string namespace_;
  std::string pod;
  std::string container;
  std::string hpc_job;  // a Slurm job (or other batch job) id
};

// One consumer's weight in an interval: a process (which rolls up to its
// workload) or, with process == kNoIndex, a workload directly.
struct Use {
  ProcessIndex process = kNoIndex;
  WorkloadIndex workload = kNoIndex;
  double weight = 0;
};

// One device's interval.
struct DeviceReading {
  DeviceIndex device = 0;
  Millijoules counter{0};  // the device's cumulative energy counter now
  Millijoules idle{0};     // idle energy of the interval (capped at the measured energy)
  Method method = Method::kNone;
  std::span<const Use> uses;
};

struct DeviceTotals {
  // The counter as last read: before_start + idle + attributed + unattributed,
  // exactly. Monotonic: a counter that went backwards (a driver reload)
  // counts the new reading as the interval's energy and carries on.
  Millijoules measured{0};
  Millijoules before_start{0};  // the counter at the first reading: used before the ledger watched
  Millijoules idle{0};
  Millijoules attributed{0};
  Millijoules unattributed{0};
  Millijoules retired{0};         // attributed to consumers since dropped (part of attributed)
  Millijoules last_interval{0};   // measured in the last interval
  Method method = Method::kNone;  // of the last interval
  std::uint64_t intervals = 0;
  std::uint64_t counter_resets = 0;
};

struct LedgerOptions {
  // How long a consumer unseen (no weight, no registration) is kept.
  std::chrono::seconds retention{600};
  // Bounds on memory and label cardinality: past them the consumers unseen
  // longest are dropped first (their energy retired).
  std::size_t max_processes = 4096;
  std::size_t max_workloads = 1024;
};

class Ledger {
 public:
  explicit Ledger(LedgerOptions options = {});

  // A device; `name` is for messages only.
  DeviceIndex add_device(std::string name);
  std::size_t device_count() const { return devices_.size(); }

  // The workload of `labels.cgroup`, created on first sight; later calls
  // refresh its labels (pods are learned after their processes) and mark it
  // seen at `now_s` (seconds on the caller's clock).
  WorkloadIndex workload(const WorkloadLabels& labels, double now_s);
  // The live workload of `cgroup`, if any (no allocation).
  std::optional<WorkloadIndex> find_workload(const std::string& cgroup) const {
    const auto it = workload_by_cgroup_.find(cgroup);
    if (it == workload_by_cgroup_.end()) return std::nullopt;
    return it->second;
  }
  // Marks a live workload seen.
  void touch_workload(WorkloadIndex w, double now_s) { workloads_.at(w).seen_s = now_s; }
  // The process (pid, start_ticks), created on first sight in `workload`;
  // marks it (and its workload) seen.
  ProcessIndex process(std::uint32_t pid, std::uint64_t start_ticks, std::string_view comm,
                       WorkloadIndex workload, double now_s);

  // Books one device's interval. Uses naming dropped or unknown consumers are
  // kInvalidArgument (nothing is booked); so are negative idle or weights that
  // are negative or not finite.
  void record(const DeviceReading& reading, double now_s);

  // Drops consumers unseen for the retention window and then, past the
  // bounds, the longest unseen, retiring their energy. Call it after each
  // poll's record()s (between two calls the bounds can be exceeded by one
  // poll's new consumers, never by more). O(consumers).
  void expire(double now_s);

  const DeviceTotals& device(DeviceIndex d) const { return devices_.at(d).totals; }
  const std::string& device_name(DeviceIndex d) const { return devices_.at(d).name; }

  struct ConsumerEnergy {
    Millijoules total{0};
    Millijoules interval{0};  // in the device's interval number `stamp`
    std::uint64_t stamp = 0;
  };
  // A consumer's energy in the device's last interval (0 if it had none).
  Millijoules last_interval(const ConsumerEnergy& e, DeviceIndex d) const {
    return e.stamp == devices_.at(d).totals.intervals ? e.interval : Millijoules(0);
  }
  struct WorkloadView {
    WorkloadIndex index;
    const WorkloadLabels& labels;
    std::span<const ConsumerEnergy> energy;  // per device
  };
  struct ProcessView {
    ProcessIndex index;
    std::uint32_t pid;
    std::uint64_t start_ticks;
    const std::string& comm;
    WorkloadIndex workload;
    std::span<const ConsumerEnergy> energy;  // per device
  };
  // Visits the live consumers (unordered).
  template <class F>
  void for_each_workload(F&& f) const {
    for (std::size_t i = 0; i < workloads_.size(); ++i) {
      const auto& w = workloads_[i];
      if (w.live) f(WorkloadView{static_cast<WorkloadIndex>(i), w.labels, w.energy});
    }
  }
  template <class F>
  void for_each_process(F&& f) const {
    for (std::size_t i = 0; i < processes_.size(); ++i) {
      const auto& p = processes_[i];
      if (p.live) {
        f(ProcessView{static_cast<ProcessIndex>(i), p.pid, p.start_ticks, p.comm, p.workload,
                      p.energy});
      }
    }
  }
  const WorkloadLabels& workload_labels(WorkloadIndex w) const { return workloads_.at(w).labels; }
  std::size_t live_workloads() const { return live_workloads_; }
  std::size_t live_processes() const { return live_processes_; }

 private:
  struct Device {
    std::string name;
    DeviceTotals totals;
    bool has_reading = false;
    std::int64_t last_counter = 0;
  };
  struct Consumer {
    bool live = false;
    double seen_s = 0;
    std::vector<ConsumerEnergy> energy;  // per device
  };
  struct WorkloadEntry : Consumer {
    WorkloadLabels labels;
    std::size_t processes = 0;  // live processes in it
  };
  struct ProcessEntry : Consumer {
    std::uint32_t pid = 0;
    std::uint64_t start_ticks = 0;
    std::string comm;
    WorkloadIndex workload = kNoIndex;
  };
  struct ProcessKey {
    std::uint32_t pid;
    std::uint64_t start_ticks;
    bool operator==(const ProcessKey&) const = default;
  };
  struct ProcessKeyHash {
    std::size_t operator()(const ProcessKey& k) const {
      return std::hash<std::uint64_t>()(k.start_ticks * 0x9e3779b97f4a7c15ULL ^ k.pid);
    }
  };
  void validate(const DeviceReading& reading) const;
  void credit(Consumer& c, DeviceIndex d, std::int64_t mj);
  void size_for_devices(Consumer& c) const;
  void retire_process(ProcessIndex p);
  void retire_workload(WorkloadIndex w);
  void enforce_bounds();

  LedgerOptions options_;
  std::vector<Device> devices_;
  std::vector<WorkloadEntry> workloads_;
  std::vector<ProcessEntry> processes_;
  std::vector<WorkloadIndex> free_workloads_;
  std::vector<ProcessIndex> free_processes_;
  std::unordered_map<std::string, WorkloadIndex> workload_by_cgroup_;
  std::unordered_map<ProcessKey, ProcessIndex, ProcessKeyHash> process_by_key_;
  std::size_t live_workloads_ = 0;
  std::size_t live_processes_ = 0;
  // Working space of record().
  std::vector<double> weights_;
  std::vector<std::int64_t> parts_;
  SplitScratch order_;
};

}  // namespace zeus::attribution
