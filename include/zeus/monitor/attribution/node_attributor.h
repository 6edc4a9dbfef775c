// The ledger of one node: reads every GPU's and CPU zone's energy counter,
// who ran on each GPU and how much CPU time each cgroup used, and books each
// poll interval into the conserved ledger (ledger.h). zeusd runs one and
// exports it; `zeus top` runs one when no zeusd is reachable.
//
//   GPU: the GPU's counter; its split from GpuSplitter (per-process samples,
//        accounting, equal split, MIG SM fraction); idle configured or learned.
//   CPU: each RAPL package and DRAM zone's counter, split by the CPU time of
//        the interval per cgroup: a leaf cgroup's own counter (which keeps the
//        time of processes that ended between two polls), the processes' times
//        for a cgroup with children (its counter would count theirs too). On a
//        multi-package machine every package is split by the node's CPU time,
//        not per socket. Idle only when configured.
//   Consumers: processes roll up to their cgroup's workload, labelled with the
//        container, pod (PodDeviceMap from the kubelet) and Slurm job.
//
// Thread-safe: poll() runs on one thread (the daemon's timer), readers take a
// snapshot or visit under the same lock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/attribution/consumers.h"
#include "zeus/monitor/attribution/gpu_split.h"
#include "zeus/monitor/attribution/kubernetes.h"
#include "zeus/monitor/attribution/ledger.h"
#include "zeus/util/clock.h"

namespace zeus::attribution {

struct AttributorOptions {
  LedgerOptions ledger;
  std::map<unsigned, Watts> gpu_idle;  // configured idle power by GPU index
  bool learn_gpu_idle = true;          // learn the others'
  unsigned idle_quiet_polls = 10;      // quiet intervals in a row before learning
  // Where learned idle powers are kept across restarts, by GPU UUID ("": not kept).
  std::string idle_state_path;
  std::map<unsigned, Watts> cpu_idle;  // configured idle power by CPU package index (package zone)
  bool split_cpu = true;
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

// What one device looks like in the ledger, for exporters.
struct DeviceInfo {
  enum class Kind { kGpu, kCpuPackage, kCpuDram };
  Kind kind = Kind::kGpu;
  unsigned index = 0;  // GPU index or CPU package index
  std::string uuid;    // GPUs
  std::string zone;    // CPU zones: "package-0", "dram-0"
  IdleSource idle_source = IdleSource::kNone;
  Watts idle_power{0};
  Watts last_power{0};  // measured energy of the last interval / its length
};

// One batch job step's energy (Slurm): what zeusd answers when the step ends.
struct JobRecord {
  std::string job;
  std::string step;
  double start_unix_s = 0;
  double end_unix_s = 0;             // 0 while the step runs
  double gpu_j = 0;                  // active GPU energy of its processes
  double cpu_j = 0;                  // active CPU package + DRAM energy, by CPU time
  double idle_j = 0;                 // its share of the idle energy of the GPUs it held
  std::string method;                // how its GPUs were split ("cpu_time" without GPUs)
  std::vector<std::string> gpus;     // UUIDs of the GPUs it held
  std::vector<std::string> missing;  // what the numbers lack, in words
  std::size_t processes = 0;         // processes registered (descendants are followed)
};
std::string job_record_json(const JobRecord& record);

// "0=60,1=58.5" (device id = idle watts) from a flag: each id once, watts
// finite in [0, 10000]. kInvalidArgument naming `what` otherwise.
std::map<unsigned, Watts> parse_idle_powers(std::string_view text, std::string_view what);

class NodeAttributor {
 public:
  NodeAttributor(std::vector<std::shared_ptr<device::Gpu>> gpus,
                 std::vector<std::shared_ptr<device::Cpu>> cpus, AttributorOptions options,
                 Clock& clock = SteadyClock::instance());

  // One poll: books the interval since the last poll (the first only reads
  // the counters). A device whose read fails is skipped this time (its
  // interval carries into the next) and counted in read_errors().
  void poll();

  // The kubelet's latest answer (zeusd refreshes it).
  void set_pods(PodDeviceMap pods);

  // A job step's processes: `pids` and, from then on, their descendants
  // count for the step (workload "slurm:<job>.<step>", labelled hpc_job),
  // whatever their cgroup; `gpus` (indices) are the GPUs it holds, whose
  // idle energy it shares. Repeated calls add processes. Pids that are gone
  // are noted in the record's `missing`.
  void start_job(const std::string& job, const std::string& step,
                 std::span<const std::uint32_t> pids, std::span<const unsigned> gpus);
  // Polls once more (so the record reaches now) and ends the step;
  // nullopt when no such step is running.
  std::optional<JobRecord> end_job(const std::string& job, const std::string& step);
  // The running steps, energy so far.
  std::vector<JobRecord> jobs() const;

  // Holds polls off while alive, so that several reads (a scrape's energy
  // counters and their split families) see one poll's numbers. A plain
  // mutex: scrapes are rare, and GCC 12's ThreadSanitizer hung in
  // std::shared_mutex's exclusive lock with no holder.
  std::unique_lock<std::mutex> hold_frame() const { return std::unique_lock<std::mutex>(frame_); }

  // Runs `f(const Ledger&, std::span<const DeviceInfo>)` under the lock.
  template <class F>
  void visit(F&& f) const {
    std::lock_guard lock(mutex_);
    f(static_cast<const Ledger&>(ledger_), std::span<const DeviceInfo>(infos_));
  }
  // The whole ledger as JSON (docs/attribution.md: the schema). With
  // `processes`, the per-process entries too.
  std::string json(bool processes) const;

  std::uint64_t polls() const;
  std::uint64_t read_errors() const;
  double interval_seconds() const;  // length of the last interval
  CgroupMode cgroup_mode() const { return reader_.mode(); }

 private:
  struct GpuState {
    std::shared_ptr<device::Gpu> gpu;
    DeviceIndex device;
    GpuSplitter splitter;
    IdleLearner learner;
    bool configured_idle = false;
  };
  struct CpuState {
    std::shared_ptr<device::Cpu> cpu;
    DeviceIndex package;
    DeviceIndex dram = kNoIndex;
  };
  struct Seen {  // a process as the last poll that found it saw it
    ProcessInfo info;
    WorkloadIndex workload = kNoIndex;  // resolved on first need in a poll
    std::uint64_t poll = 0;
    bool in_job = false;  // workload is a job step's
  };
  struct JobState {
    std::string job;
    std::string step;
    WorkloadIndex workload = kNoIndex;
    double start_unix_s = 0;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> roots;  // (pid, start_ticks)
    std::vector<DeviceIndex> gpus;
    std::int64_t idle_mj = 0;
    Method method = Method::kNone;  // the last split of its GPUs that had consumers
    std::vector<std::string> missing;
    std::size_t processes = 0;
  };
  void assign_jobs(double now);
  void book_job_gpu(DeviceIndex device, std::int64_t idle_mj, Method method);
  JobRecord record_of(const JobState& job) const;
  void read_processes(double now);
  WorkloadIndex workload_of(const std::string& cgroup, double now);
  void poll_gpu(GpuState& g, double now, double seconds);
  void poll_cpus(double now, double seconds);
  std::vector<Use>& cpu_uses(double now);
  std::string hostname_of(std::uint32_t pid) const;
  void label_gpu_holders(const GpuState& g, std::span<const ProcessWeight> weights, double now);
  ProcessIndex process_for(std::uint32_t pid, double now);
  void load_idle_state();
  void save_idle_state();

  AttributorOptions options_;
  Clock& clock_;
  ConsumerReader reader_;
  mutable std::mutex frame_;  // held by poll() and hold_frame(); taken before mutex_
  mutable std::mutex mutex_;
  Ledger ledger_;
  std::vector<GpuState> gpus_;
  std::vector<CpuState> cpus_;
  std::vector<DeviceInfo> infos_;  // by DeviceIndex
  PodDeviceMap pods_;
  std::map<std::string, JobState> jobs_;          // "<job>.<step>" -> state
  std::unordered_map<std::uint32_t, Seen> seen_;  // by pid, this poll's and the last's
  // CPU time bookkeeping between polls.
  std::unordered_map<std::string, std::uint64_t> cgroup_time_us_;
  std::unordered_map<std::uint64_t, std::uint64_t> process_time_us_;  // (pid, start) hash -> µs
  std::vector<Use> uses_;
  double last_poll_s_ = -1;
  double last_interval_s_ = 0;
  std::uint64_t polls_ = 0;
  std::uint64_t read_errors_ = 0;
};

}  // namespace zeus::attribution
