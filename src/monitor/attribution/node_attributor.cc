#include "zeus/monitor/attribution/node_attributor.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "util/parse.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"

namespace zeus::attribution {
namespace {

Millijoules to_mj(Joules j) { return Millijoules(std::llround(j.value() * 1000.0)); }

Millijoules idle_mj(Watts idle, double seconds) {
  return Millijoules(std::max<long long>(0, std::llround(idle.value() * seconds * 1000.0)));
}

std::uint64_t time_key(std::uint32_t pid, std::uint64_t start_ticks) {
  return (start_ticks << 22) ^ pid;  // pids are below 2^22 on Linux
}

}  // namespace

std::map<unsigned, Watts> parse_idle_powers(std::string_view text, std::string_view what) {
  std::map<unsigned, Watts> out;
  if (text.empty()) return out;  // the flag not given
  for (const std::string& entry : split_list(text, what)) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: '{}' is not ID=WATTS (e.g. 0=60,1=58.5)", what, printable(entry)));
    }
    const auto id =
        static_cast<unsigned>(parse_int(std::string_view(entry).substr(0, eq), what, 0, 1 << 20));
    const double watts = parse_double(std::string_view(entry).substr(eq + 1), what, 0, 10'000);
    if (!out.emplace(id, Watts(watts)).second) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: device {} is given twice", what, id));
    }
  }
  return out;
}

NodeAttributor::NodeAttributor(std::vector<std::shared_ptr<device::Gpu>> gpus,
                               std::vector<std::shared_ptr<device::Cpu>> cpus,
                               AttributorOptions options, Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      reader_(options_.proc_root, options_.cgroup_root),
      ledger_(options_.ledger) {
  for (unsigned i = 0; i < gpus.size(); ++i) {
    auto& gpu = gpus[i];
    // A GPU without an energy counter (before Volta) has nothing exact to
    // split: it stays out of the ledger (docs/attribution.md).
    if (!gpu->supports_energy_counter()) continue;
    DeviceInfo info;
    info.kind = DeviceInfo::Kind::kGpu;
    info.index = i;
    try {
      info.uuid = gpu->uuid();
    } catch (const Error&) {
    }
    GpuState state{gpu,
                   ledger_.add_device(fmt::format("GPU {}", i)),
                   {},
                   IdleLearner(options_.idle_quiet_polls),
                   false};
    if (auto it = options_.gpu_idle.find(i); it != options_.gpu_idle.end()) {
      state.configured_idle = true;
      info.idle_source = IdleSource::kConfigured;
      info.idle_power = it->second;
    }
    infos_.push_back(info);
    gpus_.push_back(std::move(state));
  }
  for (unsigned k = 0; k < cpus.size(); ++k) {
    auto& cpu = cpus[k];
    CpuState state{cpu, ledger_.add_device(cpu->name()), kNoIndex};
    DeviceInfo info;
    info.kind = DeviceInfo::Kind::kCpuPackage;
    info.index = k;
    info.zone = cpu->name();
    if (auto it = options_.cpu_idle.find(k); it != options_.cpu_idle.end()) {
      info.idle_source = IdleSource::kConfigured;
      info.idle_power = it->second;
    }
    infos_.push_back(info);
    if (cpu->has_dram()) {
      state.dram = ledger_.add_device(cpu->name() + " dram");
      DeviceInfo dram;
      dram.kind = DeviceInfo::Kind::kCpuDram;
      dram.index = k;
      dram.zone = "dram";
      infos_.push_back(dram);
    }
    cpus_.push_back(std::move(state));
  }
  load_idle_state();
}

void NodeAttributor::load_idle_state() {
  if (options_.idle_state_path.empty() || !std::filesystem::exists(options_.idle_state_path)) {
    return;
  }
  try {
    const auto state = nlohmann::json::parse(read_file(options_.idle_state_path));
    for (auto& g : gpus_) {
      auto& info = infos_[g.device];
      if (g.configured_idle || info.uuid.empty() || !state.contains(info.uuid)) continue;
      const double w = state.at(info.uuid).get<double>();
      if (!(w >= 0) || !std::isfinite(w)) continue;
      g.learner.set_learned(Watts(w));
      info.idle_source = IdleSource::kLearned;
      info.idle_power = Watts(w);
    }
  } catch (const std::exception& e) {
    // A damaged state file costs the learned values, never the daemon.
    log::warn("attribution: ignoring the idle state file {}: {}", options_.idle_state_path,
              e.what());
  }
}

void NodeAttributor::save_idle_state() {
  if (options_.idle_state_path.empty()) return;
  nlohmann::json state = nlohmann::json::object();
  for (const auto& g : gpus_) {
    const auto& info = infos_[g.device];
    if (info.idle_source == IdleSource::kLearned && !info.uuid.empty()) {
      state[info.uuid] = info.idle_power.value();
    }
  }
  try {
    write_file_atomically(options_.idle_state_path, state.dump() + "\n");
  } catch (const std::exception& e) {
    log::warn("attribution: cannot keep learned idle powers in {}: {}", options_.idle_state_path,
              e.what());
  }
}

void NodeAttributor::set_pods(PodDeviceMap pods) {
  std::lock_guard lock(mutex_);
  pods_ = std::move(pods);
}

WorkloadIndex NodeAttributor::workload_of(const std::string& cgroup, double now) {
  if (auto known = ledger_.find_workload(cgroup)) {
    ledger_.touch_workload(*known, now);
    return *known;
  }
  WorkloadLabels labels;
  labels.cgroup = cgroup;
  // A Slurm job's cgroup names it; jobs without one register their
  // processes instead (start_job).
  labels.hpc_job = parse_cgroup_owner(cgroup).slurm_job;
  return ledger_.workload(labels, now);
}

void NodeAttributor::read_processes(double now) {
  for (auto it = seen_.begin(); it != seen_.end();) {
    // Kept one poll after a process is gone: its last samples still count.
    if (it->second.poll + 1 < polls_) {
      it = seen_.erase(it);
    } else {
      ++it;
    }
  }
  for (std::uint32_t pid : reader_.pids()) {
    auto info = reader_.process(pid);
    if (!info) continue;  // gone between the listing and the read
    Seen& s = seen_[pid];
    s.info = std::move(*info);
    s.poll = polls_;
    s.workload = kNoIndex;
    s.in_job = false;
  }
  assign_jobs(now);
}

ProcessIndex NodeAttributor::process_for(std::uint32_t pid, double now) {
  auto it = seen_.find(pid);
  if (it == seen_.end()) {
    // It came and went between two polls: its energy is its own, under a
    // workload that says its cgroup is unknown.
    const WorkloadIndex unknown = workload_of("", now);
    return ledger_.process(pid, 0, "", unknown, now);
  }
  Seen& s = it->second;
  if (s.workload == kNoIndex) s.workload = workload_of(s.info.cgroup, now);
  return ledger_.process(pid, s.info.start_ticks, s.info.comm, s.workload, now);
}

void NodeAttributor::poll_gpu(GpuState& g, double now, double seconds) {
  const Millijoules counter = to_mj(g.gpu->total_energy());
  const GpuSplit split = g.splitter.next(*g.gpu);
  uses_.clear();
  for (const auto& w : split.weights)
    uses_.push_back(Use{process_for(w.pid, now), kNoIndex, w.weight});
  DeviceInfo& info = infos_[g.device];
  const std::uint64_t intervals = ledger_.device(g.device).intervals;
  const Millijoules idle_before = ledger_.device(g.device).idle;
  ledger_.record(
      DeviceReading{g.device, counter, idle_mj(info.idle_power, seconds), split.method, uses_},
      now);
  const DeviceTotals& totals = ledger_.device(g.device);
  if (totals.intervals == intervals || !(seconds > 0)) return;  // the first reading
  // The idle the ledger booked (capped at what was measured), shared by the
  // job steps holding the GPU.
  book_job_gpu(g.device, totals.idle.value() - idle_before.value(), split.method);
  info.last_power = Watts(static_cast<double>(totals.last_interval.value()) / 1000.0 / seconds);
  if (!g.configured_idle && options_.learn_gpu_idle) {
    const auto before = g.learner.learned();
    g.learner.observe(totals.last_interval, seconds, split.busy);
    if (g.learner.learned() && g.learner.learned() != before) {
      info.idle_source = IdleSource::kLearned;
      info.idle_power = *g.learner.learned();
      save_idle_state();
    }
  }
  label_gpu_holders(g, split.weights, now);
}

std::string NodeAttributor::hostname_of(std::uint32_t pid) const {
  // Kubernetes sets a container's HOSTNAME to its pod's name; the
  // environment is readable by root (zeusd) only.
  std::string environ;
  try {
    environ = read_file(fmt::format("{}/{}/environ", options_.proc_root, pid), 1 << 20);
  } catch (const Error&) {
    return {};
  }
  std::string_view rest(environ);
  while (!rest.empty()) {
    const auto end = rest.find('\0');
    const std::string_view entry = rest.substr(0, end);
    if (entry.starts_with("HOSTNAME=")) return std::string(entry.substr(9));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return {};
}

void NodeAttributor::label_gpu_holders(const GpuState& g, std::span<const ProcessWeight> weights,
                                       double now) {
  if (pods_.empty() || weights.empty()) return;
  const auto holders = pods_.holders_of_gpu(infos_[g.device].uuid);
  if (holders.empty()) return;
  for (const auto& w : weights) {
    auto it = seen_.find(w.pid);
    if (it == seen_.end() || it->second.workload == kNoIndex) continue;
    const WorkloadIndex workload = it->second.workload;
    if (!ledger_.workload_labels(workload).pod.empty()) continue;  // labelled already
    std::optional<PodRef> holder;
    if (holders.size() == 1) {
      holder = holders.front();
    } else if (auto pod = pods_.pod_named(hostname_of(w.pid))) {
      // A time-sliced GPU: the process's pod among the GPU's holders; the
      // container is known only when that pod holds the GPU in one container.
      for (const auto& h : holders) {
        if (h.pod != pod->pod || h.namespace_ != pod->namespace_) continue;
        if (!holder) {
          holder = h;
        } else if (holder->container != h.container) {
          holder->container.clear();
        }
      }
    }
    if (!holder) continue;
    WorkloadLabels labels;
    labels.cgroup = ledger_.workload_labels(workload).cgroup;
    labels.namespace_ = holder->namespace_;
    labels.pod = holder->pod;
    labels.container = holder->container;
    ledger_.workload(labels, now);
  }
}

std::vector<Use>& NodeAttributor::cpu_uses(double now) {
  // CPU time of the interval per workload: a leaf cgroup's own counter
  // (which keeps the time of processes that ended between polls), else the
  // sum over its processes: for a cgroup with children (its counter counts
  // theirs too), a cgroup that also holds a job's process, and the job's
  // processes themselves. Every process's time is remembered each poll, so
  // switching a cgroup from one way to the other never counts time twice.
  std::unordered_map<std::string, std::uint64_t> cgroup_now;
  std::unordered_map<std::uint64_t, std::uint64_t> process_now;
  std::unordered_map<WorkloadIndex, double> weight;
  std::unordered_set<std::string_view> shared;
  for (const auto& [pid, s] : seen_) {
    if (s.poll == polls_ && s.in_job) shared.insert(s.info.cgroup);
  }
  const bool baseline = polls_ == 0;
  for (auto& [pid, s] : seen_) {
    if (s.poll != polls_) continue;  // gone
    if (s.workload == kNoIndex) s.workload = workload_of(s.info.cgroup, now);
    const std::uint64_t key = time_key(pid, s.info.start_ticks);
    process_now[key] = s.info.cpu_time_us;
    const auto before = process_time_us_.find(key);
    // A process first seen after the first poll was born since the last one:
    // all its time is the interval's.
    const std::uint64_t was = before != process_time_us_.end() ? before->second : 0;
    const double own =
        baseline || s.info.cpu_time_us < was ? 0.0 : static_cast<double>(s.info.cpu_time_us - was);
    const std::string& cgroup = s.info.cgroup;
    if (!s.in_job && !shared.contains(cgroup)) {
      if (cgroup_now.contains(cgroup)) continue;  // counted through its cgroup's counter
      if (!reader_.cgroup_has_children(cgroup)) {
        if (const auto counter = reader_.cgroup_cpu_time_us(cgroup)) {
          cgroup_now[cgroup] = *counter;
          // A cgroup not counted at the last poll starts a baseline now.
          const auto last = cgroup_time_us_.find(cgroup);
          if (last != cgroup_time_us_.end() && *counter > last->second) {
            weight[s.workload] += static_cast<double>(*counter - last->second);
          }
          continue;
        }
      }
    }
    weight[s.workload] += own;
  }
  cgroup_time_us_ = std::move(cgroup_now);
  process_time_us_ = std::move(process_now);
  uses_.clear();
  for (const auto& [workload, w] : weight) {
    if (w > 0) uses_.push_back(Use{kNoIndex, workload, w});
  }
  return uses_;
}

void NodeAttributor::poll_cpus(double now, double seconds) {
  const auto& uses = cpu_uses(now);
  const Method method = uses.empty() ? Method::kNone : Method::kCpuTime;
  for (auto& c : cpus_) {
    device::CpuEnergy energy;
    try {
      energy = c.cpu->total_energy();
    } catch (const Error&) {
      ++read_errors_;
      continue;
    }
    auto book = [&](DeviceIndex d, Joules counter) {
      DeviceInfo& info = infos_[d];
      const std::uint64_t intervals = ledger_.device(d).intervals;
      ledger_.record(
          DeviceReading{d, to_mj(counter), idle_mj(info.idle_power, seconds), method, uses}, now);
      const auto& totals = ledger_.device(d);
      if (totals.intervals != intervals && seconds > 0) {
        info.last_power =
            Watts(static_cast<double>(totals.last_interval.value()) / 1000.0 / seconds);
      }
    };
    book(c.package, energy.package);
    if (c.dram != kNoIndex && energy.dram) book(c.dram, *energy.dram);
  }
}

void NodeAttributor::poll() {
  std::lock_guard frame(frame_);
  std::lock_guard lock(mutex_);
  const double now = clock_.now().count();
  const double seconds = last_poll_s_ < 0 ? 0.0 : now - last_poll_s_;
  read_processes(now);
  for (auto& g : gpus_) {
    try {
      poll_gpu(g, now, seconds);
    } catch (const Error& e) {
      ++read_errors_;
      log::debug("attribution: GPU {}: {}", infos_[g.device].index, e.what());
    }
  }
  if (options_.split_cpu) poll_cpus(now, seconds);
  ledger_.expire(now);
  last_poll_s_ = now;
  last_interval_s_ = seconds;
  ++polls_;
}

std::uint64_t NodeAttributor::polls() const {
  std::lock_guard lock(mutex_);
  return polls_;
}

std::uint64_t NodeAttributor::read_errors() const {
  std::lock_guard lock(mutex_);
  return read_errors_;
}

double NodeAttributor::interval_seconds() const {
  std::lock_guard lock(mutex_);
  return last_interval_s_;
}

}  // namespace zeus::attribution
