// Batch job steps in the node ledger: the scheduler (Slurm's SPANK plugin,
// through zeusd) names a step's processes; they and their descendants count
// for the step's workload whatever their cgroup, so a node without per-job
// cgroups (proctrack/linuxproc) still splits per job.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "zeus/monitor/attribution/node_attributor.h"
#include "zeus/util/clock.h"

namespace zeus::attribution {
namespace {

constexpr int kMaxAncestry = 64;  // deeper trees than this are not followed

std::string job_key(const std::string& job, const std::string& step) { return job + "." + step; }

}  // namespace

void NodeAttributor::start_job(const std::string& job, const std::string& step,
                               std::span<const std::uint32_t> pids,
                               std::span<const unsigned> gpus) {
  std::lock_guard lock(mutex_);
  const double now = last_poll_s_ < 0 ? clock_.now().count() : last_poll_s_;
  auto [it, created] = jobs_.try_emplace(job_key(job, step));
  JobState& state = it->second;
  if (created) {
    state.job = job;
    state.step = step;
    state.start_unix_s = wall_time_seconds();
    WorkloadLabels labels;
    labels.cgroup = "slurm:" + job_key(job, step);
    labels.hpc_job = job;
    state.workload = ledger_.workload(labels, now);
  }
  for (std::uint32_t pid : pids) {
    const auto info = reader_.process(pid);
    if (!info) {
      state.missing.push_back(fmt::format(
          "process {} had ended when it was registered: its energy is not counted", pid));
      continue;
    }
    state.roots.emplace_back(pid, info->start_ticks);
    ++state.processes;
  }
  for (unsigned gpu : gpus) {
    bool found = false;
    for (std::size_t d = 0; d < infos_.size(); ++d) {
      if (infos_[d].kind == DeviceInfo::Kind::kGpu && infos_[d].index == gpu) {
        if (std::find(state.gpus.begin(), state.gpus.end(), d) == state.gpus.end()) {
          state.gpus.push_back(static_cast<DeviceIndex>(d));
        }
        found = true;
      }
    }
    if (!found) {
      state.missing.push_back(fmt::format(
          "GPU {} is not in the ledger (no such GPU, or no energy counter): its energy is not "
          "counted",
          gpu));
    }
  }
}

void NodeAttributor::assign_jobs(double now) {
  if (jobs_.empty()) return;
  // Root processes first, then each process by its ancestry (memoized).
  std::unordered_map<std::uint32_t, WorkloadIndex> owner;
  for (auto& [key, job] : jobs_) {
    for (const auto& [pid, start] : job.roots) {
      auto it = seen_.find(pid);
      if (it != seen_.end() && it->second.poll == polls_ && it->second.info.start_ticks == start) {
        owner[pid] = job.workload;
      }
    }
  }
  std::vector<std::uint32_t> chain;
  for (auto& [pid, s] : seen_) {
    if (s.poll != polls_) continue;
    chain.clear();
    WorkloadIndex found = kNoIndex;
    std::uint32_t at = pid;
    for (int depth = 0; depth < kMaxAncestry; ++depth) {
      if (auto known = owner.find(at); known != owner.end()) {
        found = known->second;
        break;
      }
      chain.push_back(at);
      auto parent = seen_.find(at);
      if (parent == seen_.end() || parent->second.poll != polls_ || parent->second.info.ppid == 0 ||
          parent->second.info.ppid == at) {
        break;
      }
      at = parent->second.info.ppid;
    }
    for (std::uint32_t p : chain) owner[p] = found;
    if (found != kNoIndex) {
      s.workload = found;
      s.in_job = true;
      ledger_.touch_workload(found, now);
    }
  }
}

void NodeAttributor::book_job_gpu(DeviceIndex device, std::int64_t idle_mj, Method method) {
  if (jobs_.empty()) return;
  std::vector<JobState*> holders;
  for (auto& [key, job] : jobs_) {
    if (std::find(job.gpus.begin(), job.gpus.end(), device) != job.gpus.end()) {
      holders.push_back(&job);
      // An interval with nobody on the GPU (say the step's last, after its
      // processes ended) does not undo how the step's energy was split.
      if (method != Method::kNone) job.method = method;
    }
  }
  if (holders.empty() || idle_mj <= 0) return;
  std::vector<double> weights(holders.size(), 1.0);
  std::vector<std::int64_t> parts;
  SplitScratch scratch;
  split_exact(idle_mj, weights, parts, scratch);
  for (std::size_t i = 0; i < holders.size(); ++i) holders[i]->idle_mj += parts[i];
}

JobRecord NodeAttributor::record_of(const JobState& job) const {
  JobRecord r;
  r.job = job.job;
  r.step = job.step;
  r.start_unix_s = job.start_unix_s;
  r.idle_j = static_cast<double>(job.idle_mj) / 1000.0;
  r.missing = job.missing;
  r.processes = job.processes;
  std::int64_t gpu_mj = 0;
  std::int64_t cpu_mj = 0;
  ledger_.for_each_workload([&](const Ledger::WorkloadView& w) {
    if (w.index != job.workload) return;
    for (std::size_t d = 0; d < infos_.size(); ++d) {
      (infos_[d].kind == DeviceInfo::Kind::kGpu ? gpu_mj : cpu_mj) += w.energy[d].total.value();
    }
  });
  r.gpu_j = static_cast<double>(gpu_mj) / 1000.0;
  r.cpu_j = static_cast<double>(cpu_mj) / 1000.0;
  r.method = job.gpus.empty() ? method_name(Method::kCpuTime) : method_name(job.method);
  for (DeviceIndex d : job.gpus) r.gpus.push_back(infos_[d].uuid);
  if (cpus_.empty()) r.missing.push_back("no CPU energy counter (RAPL) is readable: cpu_j is 0");
  return r;
}

std::optional<JobRecord> NodeAttributor::end_job(const std::string& job, const std::string& step) {
  {
    std::lock_guard lock(mutex_);
    if (!jobs_.contains(job_key(job, step))) return std::nullopt;
  }
  poll();  // the record reaches now
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_key(job, step));
  if (it == jobs_.end()) return std::nullopt;  // ended by another call meanwhile
  JobRecord r = record_of(it->second);
  r.end_unix_s = wall_time_seconds();
  jobs_.erase(it);
  return r;
}

std::vector<JobRecord> NodeAttributor::jobs() const {
  std::lock_guard lock(mutex_);
  std::vector<JobRecord> out;
  for (const auto& [key, job] : jobs_) out.push_back(record_of(job));
  return out;
}

std::string job_record_json(const JobRecord& r) {
  nlohmann::json j = {{"job", r.job},
                      {"step", r.step},
                      {"start", r.start_unix_s},
                      {"gpu_j", r.gpu_j},
                      {"cpu_j", r.cpu_j},
                      {"idle_j", r.idle_j},
                      {"method", r.method},
                      {"gpus", r.gpus},
                      {"missing", r.missing},
                      {"processes", r.processes}};
  if (r.end_unix_s > 0) j["end"] = r.end_unix_s;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace zeus::attribution
