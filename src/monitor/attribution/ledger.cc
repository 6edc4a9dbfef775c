#include "zeus/monitor/attribution/ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zeus/util/error.h"

namespace zeus::attribution {

const char* method_name(Method method) {
  switch (method) {
    case Method::kNone:
      return "none";
    case Method::kProcessUtilization:
      return "process_utilization";
    case Method::kAccounting:
      return "accounting";
    case Method::kEqualSplit:
      return "equal_split";
    case Method::kMigSmFraction:
      return "mig_sm_fraction";
    case Method::kCpuTime:
      return "cpu_time";
  }
  return "none";
}

bool method_is_estimate(Method method) {
  return method == Method::kEqualSplit || method == Method::kMigSmFraction;
}

const char* idle_source_name(IdleSource source) {
  switch (source) {
    case IdleSource::kNone:
      return "none";
    case IdleSource::kConfigured:
      return "configured";
    case IdleSource::kLearned:
      return "learned";
  }
  return "none";
}

void split_exact(std::int64_t total, std::span<const double> weights,
                 std::vector<std::int64_t>& out, SplitScratch& scratch) {
  out.assign(weights.size(), 0);
  double sum = 0;
  for (double w : weights) sum += w;
  if (total <= 0 || !(sum > 0) || !std::isfinite(sum)) return;
  // Floors first, in long double so that shares of counters up to 2^53 mJ
  // stay exact enough that the leftover is at most one unit per weight.
  std::int64_t given = 0;
  scratch.clear();
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] > 0)) continue;
    const long double exact = static_cast<long double>(total) * weights[i] / sum;
    const long double floor = std::floor(exact);
    out[i] = std::min(total, static_cast<std::int64_t>(floor));
    given += out[i];
    scratch.emplace_back(exact - static_cast<long double>(out[i]), i);
  }
  // Rounding can overshoot by a unit when floors are computed from a rounded
  // quotient: take units back from the largest parts first.
  while (given > total) {
    auto it = std::max_element(out.begin(), out.end());
    --*it;
    --given;
  }
  // The leftover units go to the largest remainders (ties: the lower index);
  // only that many need to be in order.
  const auto leftover = static_cast<std::size_t>(total - given);
  const auto by_remainder = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  if (leftover < scratch.size()) {
    std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(leftover),
                     scratch.end(), by_remainder);
  }
  for (std::size_t k = 0; given < total; k = (k + 1) % scratch.size()) {
    ++out[scratch[k].second];
    ++given;
  }
}

Ledger::Ledger(LedgerOptions options) : options_(options) {}

DeviceIndex Ledger::add_device(std::string name) {
  devices_.push_back(Device{std::move(name), {}, false, 0});
  for (auto& w : workloads_) size_for_devices(w);
  for (auto& p : processes_) size_for_devices(p);
  return static_cast<DeviceIndex>(devices_.size() - 1);
}

void Ledger::size_for_devices(Consumer& c) const { c.energy.resize(devices_.size()); }

WorkloadIndex Ledger::workload(const WorkloadLabels& labels, double now_s) {
  if (auto it = workload_by_cgroup_.find(labels.cgroup); it != workload_by_cgroup_.end()) {
    auto& w = workloads_[it->second];
    w.seen_s = now_s;
    // Labels learned later (a pod's name) fill in; known ones are kept
    // unless the new value is set, so a failed kubelet read never blanks them.
    if (!labels.namespace_.empty()) w.labels.namespace_ = labels.namespace_;
    if (!labels.pod.empty()) w.labels.pod = labels.pod;
    if (!labels.container.empty()) w.labels.container = labels.container;
    if (!labels.hpc_job.empty()) w.labels.hpc_job = labels.hpc_job;
    return it->second;
  }
  WorkloadIndex index;
  if (!free_workloads_.empty()) {
    index = free_workloads_.back();
    free_workloads_.pop_back();
  } else {
    index = static_cast<WorkloadIndex>(workloads_.size());
    workloads_.emplace_back();
  }
  auto& w = workloads_[index];
  w.live = true;
  w.seen_s = now_s;
  w.labels = labels;
  w.processes = 0;
  w.energy.assign(devices_.size(), ConsumerEnergy{});
  workload_by_cgroup_.emplace(labels.cgroup, index);
  ++live_workloads_;
  return index;
}

ProcessIndex Ledger::process(std::uint32_t pid, std::uint64_t start_ticks, std::string_view comm,
                             WorkloadIndex workload, double now_s) {
  if (workload >= workloads_.size() || !workloads_[workload].live) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("ledger: process {} names an unknown workload {}", pid, workload));
  }
  workloads_[workload].seen_s = now_s;
  const ProcessKey key{pid, start_ticks};
  if (auto it = process_by_key_.find(key); it != process_by_key_.end()) {
    processes_[it->second].seen_s = now_s;
    return it->second;
  }
  ProcessIndex index;
  if (!free_processes_.empty()) {
    index = free_processes_.back();
    free_processes_.pop_back();
  } else {
    index = static_cast<ProcessIndex>(processes_.size());
    processes_.emplace_back();
  }
  auto& p = processes_[index];
  p.live = true;
  p.seen_s = now_s;
  p.pid = pid;
  p.start_ticks = start_ticks;
  p.comm.assign(comm);
  p.workload = workload;
  p.energy.assign(devices_.size(), ConsumerEnergy{});
  ++workloads_[workload].processes;
  process_by_key_.emplace(key, index);
  ++live_processes_;
  return index;
}

void Ledger::validate(const DeviceReading& reading) const {
  if (reading.device >= devices_.size()) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("ledger: no device {}", reading.device));
  }
  if (reading.idle.value() < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("ledger: {}: negative idle energy {} mJ", devices_[reading.device].name,
                            reading.idle.value()));
  }
  for (const Use& use : reading.uses) {
    if (!(use.weight >= 0) || !std::isfinite(use.weight)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("ledger: {}: weight {} is not a finite number ≥ 0",
                              devices_[reading.device].name, use.weight));
    }
    const bool process_ok = use.process == kNoIndex ||
                            (use.process < processes_.size() && processes_[use.process].live);
    const bool workload_ok = use.process != kNoIndex ||
                             (use.workload < workloads_.size() && workloads_[use.workload].live);
    if (!process_ok || !workload_ok) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("ledger: {}: a use names a dropped or unknown consumer",
                              devices_[reading.device].name));
    }
  }
}

void Ledger::credit(Consumer& c, DeviceIndex d, std::int64_t mj) {
  auto& e = c.energy[d];
  const std::uint64_t stamp = devices_[d].totals.intervals;
  if (e.stamp != stamp) {
    e.stamp = stamp;
    e.interval = Millijoules(0);
  }
  e.interval += Millijoules(mj);
  e.total += Millijoules(mj);
}

void Ledger::record(const DeviceReading& reading, double now_s) {
  validate(reading);
  Device& device = devices_[reading.device];
  DeviceTotals& t = device.totals;
  const std::int64_t counter = reading.counter.value();
  if (!device.has_reading) {
    // What the counter says was used before we watched: nobody's known.
    device.has_reading = true;
    device.last_counter = counter;
    t.before_start = Millijoules(std::max<std::int64_t>(counter, 0));
    t.measured = t.before_start;
    return;
  }
  std::int64_t measured = counter - device.last_counter;
  if (measured < 0) {
    // A counter that went backwards restarted (driver reload): what it
    // reads now is the energy since the restart.
    ++t.counter_resets;
    measured = std::max<std::int64_t>(counter, 0);
  }
  device.last_counter = counter;
  ++t.intervals;
  t.method = reading.method;
  t.last_interval = Millijoules(measured);
  t.measured += Millijoules(measured);

  const std::int64_t idle = std::min(reading.idle.value(), measured);
  const std::int64_t active = measured - idle;
  t.idle += Millijoules(idle);

  weights_.clear();
  for (const Use& use : reading.uses) weights_.push_back(use.weight);
  split_exact(active, weights_, parts_, order_);
  std::int64_t given = 0;
  for (std::size_t i = 0; i < reading.uses.size(); ++i) {
    if (parts_[i] == 0) continue;
    const Use& use = reading.uses[i];
    given += parts_[i];
    if (use.process != kNoIndex) {
      auto& p = processes_[use.process];
      p.seen_s = now_s;
      credit(p, reading.device, parts_[i]);
      credit(workloads_[p.workload], reading.device, parts_[i]);
      workloads_[p.workload].seen_s = now_s;
    } else {
      auto& w = workloads_[use.workload];
      w.seen_s = now_s;
      credit(w, reading.device, parts_[i]);
    }
  }
  t.attributed += Millijoules(given);
  t.unattributed += Millijoules(active - given);
}

void Ledger::retire_process(ProcessIndex index) {
  auto& p = processes_[index];
  process_by_key_.erase(ProcessKey{p.pid, p.start_ticks});
  if (p.workload < workloads_.size() && workloads_[p.workload].processes > 0) {
    --workloads_[p.workload].processes;
  }
  // A process's energy is also in its workload's: nothing to move.
  p.live = false;
  p.energy.clear();
  p.comm.clear();
  free_processes_.push_back(index);
  --live_processes_;
}

void Ledger::retire_workload(WorkloadIndex index) {
  auto& w = workloads_[index];
  for (std::size_t d = 0; d < w.energy.size() && d < devices_.size(); ++d) {
    devices_[d].totals.retired += w.energy[d].total;
  }
  workload_by_cgroup_.erase(w.labels.cgroup);
  w.live = false;
  w.energy.clear();
  w.labels = {};
  free_workloads_.push_back(index);
  --live_workloads_;
}

void Ledger::expire(double now_s) {
  const double horizon = now_s - static_cast<double>(options_.retention.count());
  for (std::size_t i = 0; i < processes_.size(); ++i) {
    if (processes_[i].live && processes_[i].seen_s < horizon) {
      retire_process(static_cast<ProcessIndex>(i));
    }
  }
  for (std::size_t i = 0; i < workloads_.size(); ++i) {
    auto& w = workloads_[i];
    if (w.live && w.processes == 0 && w.seen_s < horizon) {
      retire_workload(static_cast<WorkloadIndex>(i));
    }
  }
  enforce_bounds();
}

void Ledger::enforce_bounds() {
  // Over a bound: drop the consumer unseen longest. O(n) per drop, which
  // only a flood of new consumers pays.
  while (live_processes_ > options_.max_processes) {
    std::size_t oldest = kNoIndex;
    for (std::size_t i = 0; i < processes_.size(); ++i) {
      if (processes_[i].live &&
          (oldest == kNoIndex || processes_[i].seen_s < processes_[oldest].seen_s)) {
        oldest = i;
      }
    }
    retire_process(static_cast<ProcessIndex>(oldest));
  }
  while (live_workloads_ > options_.max_workloads) {
    std::size_t oldest = kNoIndex;
    for (std::size_t i = 0; i < workloads_.size(); ++i) {
      if (!workloads_[i].live) continue;
      // Never the workload of a live process: a process must roll up.
      if (workloads_[i].processes > 0) continue;
      if (oldest == kNoIndex || workloads_[i].seen_s < workloads_[oldest].seen_s) oldest = i;
    }
    if (oldest == kNoIndex) break;
    retire_workload(static_cast<WorkloadIndex>(oldest));
  }
}

}  // namespace zeus::attribution
