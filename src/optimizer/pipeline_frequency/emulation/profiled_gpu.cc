#include "optimizer/pipeline_frequency/emulation/profiled_gpu.h"

#include <fmt/format.h>

#include <set>

#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {
constexpr Milliwatts kMinLimit{100'000};
constexpr Milliwatts kMaxLimit{400'000};  // A100 SXM
}  // namespace

ProfiledGpu::ProfiledGpu(const pipeline_frequency::StageProfile& profile, int stage,
                         Watts p_blocking, ManualClock& clock)
    : stage_(stage), p_blocking_(p_blocking), clock_(clock), limit_(kMaxLimit) {
  for (const auto instruction :
       {pipeline_frequency::Instruction::kForward, pipeline_frequency::Instruction::kBackward}) {
    Menu& m = instruction == pipeline_frequency::Instruction::kForward ? forward_ : backward_;
    for (const auto& e : profile.entries_for(stage, instruction)) {
      m[e.frequency] = Cost{e.time, e.energy};
    }
    if (m.empty()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{} has no {} rows for stage {}", profile.source(),
                              pipeline_frequency::instruction_name(instruction), stage));
    }
  }
  idle_since_ = clock_.now();
}

std::string ProfiledGpu::name() { return fmt::format("Emulated GPU (Perseus stage {})", stage_); }
std::string ProfiledGpu::uuid() { return fmt::format("GPU-emulated-stage-{}", stage_); }

void ProfiledGpu::settle_idle_locked() {
  const Seconds now = clock_.now();
  if (now > idle_since_) {
    energy_ += p_blocking_ * (now - idle_since_);
    idle_since_ = now;
  }
}

Joules ProfiledGpu::total_energy() {
  std::lock_guard lock(mutex_);
  settle_idle_locked();
  return energy_;
}

Watts ProfiledGpu::power(device::PowerDomain domain) {
  if (domain == device::PowerDomain::kMemoryAverage) {
    throw_error(ErrorCode::kNotSupported, "the emulated GPU has no memory power domain");
  }
  return p_blocking_;  // computations take no real time: outside them the GPU blocks
}

device::PowerLimitConstraints ProfiledGpu::power_limit_constraints() {
  return {kMinLimit, kMaxLimit};
}

Milliwatts ProfiledGpu::power_limit() {
  std::lock_guard lock(mutex_);
  return limit_;
}

Milliwatts ProfiledGpu::default_power_limit() { return kMaxLimit; }

void ProfiledGpu::set_power_limit(Milliwatts limit) {
  if (limit < kMinLimit || limit > kMaxLimit) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("power limit {} mW is outside [{}, {}] mW", limit.value(),
                            kMinLimit.value(), kMaxLimit.value()));
  }
  std::lock_guard lock(mutex_);
  limit_ = limit;
}

bool ProfiledGpu::persistence_mode() {
  std::lock_guard lock(mutex_);
  return persistence_;
}

void ProfiledGpu::set_persistence_mode(bool enabled) {
  std::lock_guard lock(mutex_);
  persistence_ = enabled;
}

std::vector<Megahertz> ProfiledGpu::supported_memory_clocks() { return {kMemoryClock}; }

std::vector<Megahertz> ProfiledGpu::supported_graphics_clocks(Megahertz memory_clock) {
  if (memory_clock != kMemoryClock) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("memory clock {} MHz is not supported (only {} MHz)",
                            memory_clock.value(), kMemoryClock.value()));
  }
  std::set<Megahertz, std::greater<>> all;
  for (const auto& [f, c] : forward_) all.insert(f);
  for (const auto& [f, c] : backward_) all.insert(f);
  return {all.begin(), all.end()};
}

void ProfiledGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  if (min > max || min.value() <= 0) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("locked clock range [{}, {}] MHz is invalid", min.value(), max.value()));
  }
  std::lock_guard lock(mutex_);
  locked_max_ = max;
}

void ProfiledGpu::reset_gpu_locked_clocks() {
  std::lock_guard lock(mutex_);
  locked_max_.reset();
}

void ProfiledGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  if (min > max || max != kMemoryClock) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("memory clocks can only be locked at {} MHz", kMemoryClock.value()));
  }
  std::lock_guard lock(mutex_);
  memory_locked_ = true;
}

void ProfiledGpu::reset_memory_locked_clocks() {
  std::lock_guard lock(mutex_);
  memory_locked_ = false;
}

const ProfiledGpu::Menu& ProfiledGpu::menu(pipeline_frequency::Instruction instruction) const {
  return instruction == pipeline_frequency::Instruction::kForward ? forward_ : backward_;
}

Megahertz ProfiledGpu::frequency_locked(const Menu& m) const {
  if (!locked_max_) return m.rbegin()->first;
  auto it = m.upper_bound(*locked_max_);         // first above the lock
  if (it == m.begin()) return m.begin()->first;  // below every profiled clock: the slowest
  return std::prev(it)->first;
}

Megahertz ProfiledGpu::frequency(pipeline_frequency::Instruction instruction) {
  std::lock_guard lock(mutex_);
  return frequency_locked(menu(instruction));
}

bool ProfiledGpu::clocks_locked() {
  std::lock_guard lock(mutex_);
  return locked_max_.has_value();
}

Megahertz ProfiledGpu::run(pipeline_frequency::Instruction instruction) {
  std::lock_guard lock(mutex_);
  settle_idle_locked();
  const Menu& m = menu(instruction);
  const Megahertz f = frequency_locked(m);
  const Cost& c = m.at(f);
  clock_.advance(c.time);
  energy_ += c.energy;
  idle_since_ = clock_.now();
  return f;
}

}  // namespace zeus::pipeline_frequency
