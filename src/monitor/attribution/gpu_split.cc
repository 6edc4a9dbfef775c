#include "zeus/monitor/attribution/gpu_split.h"

#include <algorithm>

#include "zeus/util/error.h"

namespace zeus::attribution {
namespace {

bool any_weight(const GpuSplit& split) {
  return std::any_of(split.weights.begin(), split.weights.end(),
                     [](const ProcessWeight& w) { return w.weight > 0; });
}

void add_weight(std::vector<ProcessWeight>& weights, std::uint32_t pid, double weight) {
  for (auto& w : weights) {
    if (w.pid == pid) {
      w.weight += weight;
      return;
    }
  }
  weights.push_back(ProcessWeight{pid, weight});
}

template <class F>
bool not_supported(F&& f) {
  try {
    f();
    return false;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kNotSupported) throw;
    return true;
  }
}

}  // namespace

GpuSplit split_from_samples(std::span<const device::GpuProcessSample> samples) {
  GpuSplit split;
  split.method = Method::kProcessUtilization;
  split.busy = !samples.empty();
  // Sorted by pid, each process's samples are one run: O(n log n) however
  // many processes share the GPU.
  std::vector<device::GpuProcessSample> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  std::vector<double> memory;
  bool any_sm = false;
  for (const auto& s : sorted) {
    if (split.weights.empty() || split.weights.back().pid != s.pid) {
      split.weights.push_back(ProcessWeight{s.pid, 0});
      memory.push_back(0);
    }
    split.weights.back().weight += s.sm_percent;
    memory.back() += s.memory_percent;
    any_sm = any_sm || s.sm_percent > 0;
  }
  if (!any_sm) {
    // Memory-bound work (copies, decoding) shows no SM activity: weigh the
    // memory utilization rather than call the interval idle.
    for (std::size_t i = 0; i < memory.size(); ++i) split.weights[i].weight = memory[i];
  }
  return split;
}

GpuSplit split_from_accounting(std::span<const device::GpuAccountingStat> now,
                               const std::unordered_map<std::uint32_t, double>& before) {
  GpuSplit split;
  split.method = Method::kAccounting;
  split.busy = std::any_of(now.begin(), now.end(), [](const auto& s) { return s.running; });
  for (const auto& s : now) {
    const double used = static_cast<double>(s.gpu_percent) * static_cast<double>(s.time_ms);
    const auto it = before.find(s.pid);
    const double grew = used - (it == before.end() ? 0.0 : it->second);
    // Accounting averages over a process's life: the product can shrink
    // when a process idles; a shrinking one weighs nothing this interval.
    if (grew > 0) add_weight(split.weights, s.pid, grew);
  }
  return split;
}

GpuSplit split_equally(std::span<const device::GpuProcess> running) {
  GpuSplit split;
  split.method = running.empty() ? Method::kNone : Method::kEqualSplit;
  split.busy = !running.empty();
  for (const auto& p : running) add_weight(split.weights, p.pid, 1.0);
  for (auto& w : split.weights) w.weight = 1.0;  // a pid listed twice is one process
  return split;
}

GpuSplit split_mig(const device::GpuMigLayout& layout) {
  GpuSplit split;
  split.method = Method::kMigSmFraction;
  split.busy = false;
  const double gpu_sms = layout.gpu_sm_count > 0 ? layout.gpu_sm_count : 1.0;
  for (const auto& instance : layout.instances) {
    if (instance.processes.empty()) continue;
    split.busy = true;
    const double share =
        instance.sm_count / gpu_sms / static_cast<double>(instance.processes.size());
    for (const auto& p : instance.processes) add_weight(split.weights, p.pid, share);
  }
  if (!split.busy) split.method = Method::kNone;
  return split;
}

GpuSplit GpuSplitter::from_samples(device::Gpu& gpu) {
  auto samples = gpu.process_utilization(cursor_us_);
  for (const auto& s : samples) cursor_us_ = std::max(cursor_us_, s.timestamp_us);
  if (!primed_) {
    // The driver's buffer reaches back before our first interval: those
    // samples only set the cursor.
    primed_ = true;
    samples.clear();
  }
  return split_from_samples(samples);
}

std::optional<GpuSplit> GpuSplitter::from_accounting(device::Gpu& gpu) {
  std::vector<device::GpuAccountingStat> stats;
  if (not_supported([&] { stats = gpu.accounting_stats(); })) {
    accounting_supported_ = false;
    return std::nullopt;
  }
  GpuSplit split = split_from_accounting(stats, accounting_before_);
  accounting_before_.clear();
  for (const auto& s : stats) {
    accounting_before_[s.pid] = static_cast<double>(s.gpu_percent) * static_cast<double>(s.time_ms);
  }
  return split;
}

GpuSplit GpuSplitter::next(device::Gpu& gpu) {
  if (mig_supported_) {
    device::GpuMigLayout layout;
    if (not_supported([&] { layout = gpu.mig_layout(); })) {
      mig_supported_ = false;
    } else if (layout.enabled) {
      return split_mig(layout);
    }
  }
  if (samples_supported_) {
    GpuSplit split;
    if (not_supported([&] { split = from_samples(gpu); })) {
      samples_supported_ = false;
    } else if (any_weight(split)) {
      return split;
    }
  }
  if (accounting_supported_) {
    auto split = from_accounting(gpu);
    if (split && any_weight(*split)) return *split;
  }
  std::vector<device::GpuProcess> running;
  if (not_supported([&] { running = gpu.compute_processes(); })) {
    // Nothing can name a process: the interval is nobody's, and whether the
    // GPU was busy is unknown (so no idle is learned from it).
    GpuSplit none;
    none.busy = true;
    return none;
  }
  return split_equally(running);
}

void IdleLearner::observe(Millijoules energy, double seconds, bool busy) {
  if (busy || !(seconds > 0)) {
    quiet_ = 0;
    quiet_mj_ = 0;
    quiet_s_ = 0;
    return;
  }
  ++quiet_;
  quiet_mj_ += static_cast<double>(energy.value());
  quiet_s_ += seconds;
  if (quiet_ < quiet_polls_) return;
  const Watts average(quiet_mj_ / 1000.0 / quiet_s_);
  if (!learned_ || average < *learned_) learned_ = average;
  quiet_ = 0;
  quiet_mj_ = 0;
  quiet_s_ = 0;
}

}  // namespace zeus::attribution
