#include "zeus/monitor/power_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <span>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::monitor {
namespace {

constexpr Seconds kMaxInterval{0.1};
constexpr Seconds kMinInferredInterval{0.001};

bool domain_supported(device::Gpu& gpu, device::PowerDomain domain) {
  try {
    (void)gpu.power(domain);
    return true;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotSupported) return false;
    throw;
  }
}

}  // namespace

PowerMonitor::PowerMonitor(std::vector<std::shared_ptr<device::Gpu>> gpus,
                           std::vector<int> gpu_indices,
                           std::vector<std::shared_ptr<device::Cpu>> cpus,
                           std::vector<int> cpu_indices, PowerMonitorOptions options)
    : gpus_(std::move(gpus)),
      gpu_indices_(std::move(gpu_indices)),
      cpus_(std::move(cpus)),
      cpu_indices_(std::move(cpu_indices)),
      jetson_(std::move(options.jetson)),
      domains_(std::move(options.domains)),
      clock_(options.clock != nullptr ? *options.clock : SteadyClock::instance()),
      max_samples_(std::max<std::size_t>(options.max_samples, 4)),
      cpu_last_(cpus_.size()) {
  if (gpus_.size() != gpu_indices_.size() || cpus_.size() != cpu_indices_.size()) {
    throw_error(ErrorCode::kInternal, "PowerMonitor: device and index lists differ in length");
  }
  if (gpus_.empty() && cpus_.empty() && !jetson_) {
    throw_error(ErrorCode::kInvalidArgument,
                "power monitor: no GPU, CPU or Jetson rail to monitor");
  }
  if (!gpus_.empty()) {
    // Probed on the first GPU, like the reference: monitored GPUs are alike.
    if (domains_.empty()) {
      domains_.push_back(domain_supported(*gpus_[0], device::PowerDomain::kDeviceInstant)
                             ? device::PowerDomain::kDeviceInstant
                             : device::PowerDomain::kDeviceAverage);
    }
    for (device::PowerDomain d : domains_) {
      if (!domain_supported(*gpus_[0], d)) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("power domain '{}' is not supported by GPU {} ({}); choose another "
                                "with --domain",
                                device::power_domain_name(d), gpu_indices_[0], gpus_[0]->name()));
      }
    }
  }
  if (options.interval) {
    if (!(options.interval->count() > 0) || !std::isfinite(options.interval->count())) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("power monitor: the update period must be a positive, finite "
                              "number of seconds, got {}",
                              options.interval->count()));
    }
    interval_ = *options.interval;
    if (interval_ < Seconds(0.05) && !gpus_.empty()) {
      log::debug(
          "power sampling every {:.4f} s; NVML power readings update every 10-100 ms, "
          "so faster polling mostly repeats values",
          interval_.count());
    }
  } else if (!gpus_.empty()) {
    interval_ = infer_interval(gpus_, domains_.front(), clock_);
  }
  gpu_timeline_slots_.assign(gpus_.size() * domains_.size(), nullptr);
  sample_now();
  // The first sample is taken; the thread takes the next one an interval on.
  if (options.start_thread) sampler_.start(clock_, interval_, [this] { sample_now(); });
}

PowerMonitor::~PowerMonitor() { stop(); }

void PowerMonitor::stop() { sampler_.stop(); }

void PowerMonitor::record_locked(Timeline& timeline, PowerSample sample) {
  const std::size_t n = timeline.size();
  if (n >= 2 && timeline[n - 1].power == sample.power && timeline[n - 2].power == sample.power) {
    timeline[n - 1].time = sample.time;  // extend the run of equal readings
    return;
  }
  timeline.push_back(sample);
  if (timeline.size() > max_samples_) timeline.pop_front();
}

PowerMonitor::Timeline& PowerMonitor::gpu_timeline_locked(std::size_t slot) {
  Timeline*& cached = gpu_timeline_slots_[slot];
  if (cached == nullptr) {
    const std::size_t k = slot / domains_.size();
    cached = &gpu_timelines_[{gpu_indices_[k], domains_[slot % domains_.size()]}];
  }
  return *cached;
}

void PowerMonitor::sample_now() {
  // One round: every GPU's domains, in one batched read per GPU where the
  // backend can. The buffers are the calling thread's (the sampler's, or a
  // window's edge), kept from round to round: a round allocates nothing.
  struct GpuReading {
    std::size_t slot;  // gpu * domains_.size() + domain
    Watts power;
  };
  thread_local std::vector<GpuReading> readings;
  thread_local std::vector<std::size_t> unsupported;
  readings.clear();
  unsupported.clear();
  const std::size_t domain_count = domains_.size();
  constexpr std::size_t kMaxBatch = 3;
  std::array<Watts, kMaxBatch> batch{};
  const Seconds t = clock_.now();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (domain_count > 1 && domain_count <= kMaxBatch &&
        gpus_[i]->read_powers(domains_, std::span<Watts>(batch.data(), domain_count))) {
      for (std::size_t j = 0; j < domain_count; ++j) {
        if (batch[j].value() > 0) readings.push_back({i * domain_count + j, batch[j]});
      }
      continue;
    }
    for (std::size_t j = 0; j < domain_count; ++j) {
      try {
        const Watts p = gpus_[i]->power(domains_[j]);
        if (p.value() > 0) readings.push_back({i * domain_count + j, p});
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kNotSupported) {
          unsupported.push_back(i * domain_count + j);
        } else {
          log::warn("power monitor: GPU {}: {}", gpu_indices_[i], e.what());
        }
      }
    }
  }
  std::vector<std::pair<std::size_t, device::CpuEnergy>> cpu_reads;
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    try {
      cpu_reads.emplace_back(i, cpus_[i]->total_energy());
    } catch (const Error& e) {
      log::warn("power monitor: CPU {}: {}", cpu_indices_[i], e.what());
    }
  }

  std::vector<std::pair<device::SocRail, Watts>> soc_reads;
  if (jetson_) {
    for (const auto& rail : jetson_->rails()) {
      try {
        soc_reads.emplace_back(rail.rail, jetson_->power(rail.rail));
      } catch (const Error& e) {
        log::warn("power monitor: Jetson {} rail: {}", device::soc_rail_name(rail.rail), e.what());
      }
    }
  }

  std::lock_guard lock(mutex_);
  for (const auto& [rail, power] : soc_reads) record_locked(soc_timelines_[rail], {t, power});
  for (const auto& r : readings) record_locked(gpu_timeline_locked(r.slot), {t, r.power});
  for (const std::size_t slot : unsupported) {
    const int index = gpu_indices_[slot / domain_count];
    const device::PowerDomain domain = domains_[slot % domain_count];
    // Counted and reported every 10th time, so a flaky sensor is visible without flooding.
    if (++unsupported_counts_[{index, domain}] % 10 == 0) {
      log::warn("power monitor: GPU {} did not support a {} power reading 10 more times", index,
                device::power_domain_name(domain));
    }
  }
  for (const auto& [i, energy] : cpu_reads) {
    CpuLast& last = cpu_last_[i];
    if (last.valid && t > last.time) {
      const Seconds dt = t - last.time;
      const Seconds mid = last.time + dt / 2.0;
      record_locked(cpu_timelines_[{cpu_indices_[i], false}],
                    {mid, (energy.package - last.energy.package) / dt});
      if (energy.dram && last.energy.dram) {
        record_locked(cpu_timelines_[{cpu_indices_[i], true}],
                      {mid, (*energy.dram - *last.energy.dram) / dt});
      }
    }
    last = CpuLast{t, energy, true};
  }
}

const PowerMonitor::Timeline* PowerMonitor::find_gpu_timeline_locked(
    int gpu_index, device::PowerDomain domain) const {
  const auto it = gpu_timelines_.find({gpu_index, domain});
  return it == gpu_timelines_.end() ? nullptr : &it->second;
}

namespace {

std::vector<PowerSample> slice(const std::deque<PowerSample>& t, std::optional<Seconds> start,
                               std::optional<Seconds> end) {
  std::vector<PowerSample> out;
  for (const auto& s : t) {
    if (start && s.time < *start) continue;
    if (end && s.time > *end) break;
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<PowerSample> PowerMonitor::gpu_timeline(int gpu_index, device::PowerDomain domain,
                                                    std::optional<Seconds> start,
                                                    std::optional<Seconds> end) const {
  std::lock_guard lock(mutex_);
  const Timeline* t = find_gpu_timeline_locked(gpu_index, domain);
  return t == nullptr ? std::vector<PowerSample>{} : slice(*t, start, end);
}

std::vector<PowerSample> PowerMonitor::cpu_timeline(int cpu_index, bool dram,
                                                    std::optional<Seconds> start,
                                                    std::optional<Seconds> end) const {
  std::lock_guard lock(mutex_);
  const auto it = cpu_timelines_.find({cpu_index, dram});
  return it == cpu_timelines_.end() ? std::vector<PowerSample>{} : slice(it->second, start, end);
}

std::optional<Watts> PowerMonitor::gpu_power_at(int gpu_index, device::PowerDomain domain,
                                                Seconds t) const {
  std::lock_guard lock(mutex_);
  const Timeline* tl = find_gpu_timeline_locked(gpu_index, domain);
  if (tl == nullptr) return std::nullopt;
  return interpolate_power(*tl, t);
}

std::optional<Watts> PowerMonitor::latest_gpu_power(int gpu_index,
                                                    device::PowerDomain domain) const {
  std::lock_guard lock(mutex_);
  const Timeline* tl = find_gpu_timeline_locked(gpu_index, domain);
  if (tl == nullptr || tl->empty()) return std::nullopt;
  return tl->back().power;
}

std::optional<Joules> PowerMonitor::gpu_energy(int gpu_index, device::PowerDomain domain,
                                               Seconds start, Seconds end) const {
  std::lock_guard lock(mutex_);
  const Timeline* tl = find_gpu_timeline_locked(gpu_index, domain);
  if (tl == nullptr) return std::nullopt;
  return integrate_power(*tl, start, end);
}

std::optional<Joules> PowerMonitor::cpu_energy(int cpu_index, bool dram, Seconds start,
                                               Seconds end) const {
  std::lock_guard lock(mutex_);
  const auto it = cpu_timelines_.find({cpu_index, dram});
  if (it == cpu_timelines_.end()) return std::nullopt;
  return integrate_power(it->second, start, end);
}

std::vector<PowerSample> PowerMonitor::soc_timeline(device::SocRail rail,
                                                    std::optional<Seconds> start,
                                                    std::optional<Seconds> end) const {
  std::lock_guard lock(mutex_);
  const auto it = soc_timelines_.find(rail);
  return it == soc_timelines_.end() ? std::vector<PowerSample>{} : slice(it->second, start, end);
}

std::optional<Joules> PowerMonitor::soc_energy(device::SocRail rail, Seconds start,
                                               Seconds end) const {
  std::lock_guard lock(mutex_);
  const auto it = soc_timelines_.find(rail);
  if (it == soc_timelines_.end()) return std::nullopt;
  return integrate_power(it->second, start, end);
}

Seconds PowerMonitor::infer_interval(const std::vector<std::shared_ptr<device::Gpu>>& gpus,
                                     device::PowerDomain domain, Clock& clock) {
  constexpr int kReads = 1000;
  constexpr int kSkip = 10;  // the first reads can be slow (driver warm-up)
  std::set<std::string> models_seen;
  std::optional<Seconds> fastest;  // none: no reading ever changed
  for (const auto& gpu : gpus) {
    if (!models_seen.insert(gpu->name()).second) continue;
    std::optional<Seconds> min_gap;
    Seconds last_change{};
    double last_value = -1;
    for (int i = 0; i < kReads; ++i) {
      double value;
      try {
        value = gpu->power(domain).value();
      } catch (const Error&) {
        break;
      }
      const Seconds now = clock.now();
      if (i >= kSkip && value != last_value) {
        if (last_value >= 0 && now > last_change) {
          const Seconds gap = now - last_change;
          if (!min_gap || gap < *min_gap) min_gap = gap;
        }
        last_change = now;
      }
      last_value = value;
    }
    if (min_gap && (!fastest || *min_gap < *fastest)) fastest = *min_gap;
  }
  if (!fastest) return kMaxInterval;
  // Sample twice per update so no update is missed.
  return std::clamp(*fastest / 2.0, kMinInferredInterval, kMaxInterval);
}

}  // namespace zeus::monitor
