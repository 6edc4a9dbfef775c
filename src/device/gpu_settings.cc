#include "zeus/device/gpu_settings.h"

#include <fmt/format.h>

#include <algorithm>

#include "zeus/util/error.h"

namespace zeus {
namespace {

template <class T, class F>
std::optional<T> read_or_empty(F read) {
  try {
    return read();
  } catch (const Error&) {
    return std::nullopt;  // not supported or not permitted: shown as unknown
  }
}

double watts(Milliwatts mw) { return static_cast<double>(mw.value()) / 1000.0; }

void check_range(const ClockRange& r, const char* what) {
  if (r.min.value() <= 0 || r.max.value() < r.min.value()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} {}-{} MHz: give MIN:MAX with 0 < MIN <= MAX", what, r.min.value(),
                            r.max.value()));
  }
}

// The GPU's graphics clocks at its highest memory clock span what it can be
// locked to. A device that cannot list them is left to refuse by itself.
void check_supported_gpu_clocks(Gpu& gpu, int index, const ClockRange& r) {
  std::vector<Megahertz> clocks;
  try {
    const auto memory = gpu.supported_memory_clocks();
    if (memory.empty()) return;
    clocks = gpu.supported_graphics_clocks(*std::max_element(memory.begin(), memory.end()));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotSupported) return;
    throw;
  }
  if (clocks.empty()) return;
  const auto [lo, hi] = std::minmax_element(clocks.begin(), clocks.end());
  if (r.min < *lo || r.max > *hi) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("GPU {} ({}) supports graphics clocks from {} to {} MHz, not {}-{} "
                    "MHz; no GPU was changed",
                    index, gpu.name(), lo->value(), hi->value(), r.min.value(), r.max.value()));
  }
}

// Everything that can be known before touching a GPU.
void validate(const std::vector<std::shared_ptr<Gpu>>& gpus, const std::vector<int>& indices,
              const GpuSettingsChange& c) {
  if (c.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "no setting to change was given");
  }
  if (gpus.empty()) throw_error(ErrorCode::kInvalidArgument, "no GPU was selected");
  if (c.power_limit && c.reset_power_limit) {
    throw_error(ErrorCode::kInvalidArgument, "set a power limit or reset it, not both");
  }
  if (c.gpu_clocks && c.reset_gpu_clocks) {
    throw_error(ErrorCode::kInvalidArgument, "lock the GPU clocks or reset them, not both");
  }
  if (c.memory_clocks && c.reset_memory_clocks) {
    throw_error(ErrorCode::kInvalidArgument, "lock the memory clocks or reset them, not both");
  }
  if (c.gpu_clocks) check_range(*c.gpu_clocks, "GPU clocks");
  if (c.memory_clocks) check_range(*c.memory_clocks, "memory clocks");
  for (std::size_t k = 0; k < gpus.size() && c.gpu_clocks; ++k) {
    check_supported_gpu_clocks(*gpus[k], indices[k], *c.gpu_clocks);
  }
  if (!c.power_limit) return;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    const PowerLimitConstraints range = gpus[k]->power_limit_constraints();
    if (*c.power_limit < range.min || *c.power_limit > range.max) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("GPU {} ({}) takes power limits from {:g} W to {:g} W, not {:g} W; "
                              "no GPU was changed",
                              indices[k], gpus[k]->name(), watts(range.min), watts(range.max),
                              watts(*c.power_limit)));
    }
  }
}

std::string clocks_text(const ClockRange& r) {
  return fmt::format("{}-{} MHz", r.min.value(), r.max.value());
}

void apply_one(Gpu& gpu, int index, const GpuSettingsChange& c, std::vector<std::string>& done) {
  if (c.power_limit || c.reset_power_limit) {
    const Milliwatts before = gpu.power_limit();
    const Milliwatts after = c.power_limit ? *c.power_limit : gpu.default_power_limit();
    gpu.set_power_limit(after);
    done.push_back(fmt::format("GPU {}: power limit {:g} W -> {:g} W{}", index, watts(before),
                               watts(after), c.reset_power_limit ? " (the default)" : ""));
  }
  if (c.persistence_mode) {
    gpu.set_persistence_mode(*c.persistence_mode);
    done.push_back(
        fmt::format("GPU {}: persistence mode {}", index, *c.persistence_mode ? "on" : "off"));
  }
  if (c.gpu_clocks) {
    gpu.set_gpu_locked_clocks(c.gpu_clocks->min, c.gpu_clocks->max);
    done.push_back(
        fmt::format("GPU {}: GPU clocks locked to {}", index, clocks_text(*c.gpu_clocks)));
  }
  if (c.reset_gpu_clocks) {
    gpu.reset_gpu_locked_clocks();
    done.push_back(fmt::format("GPU {}: GPU clocks unlocked", index));
  }
  if (c.memory_clocks) {
    gpu.set_memory_locked_clocks(c.memory_clocks->min, c.memory_clocks->max);
    done.push_back(
        fmt::format("GPU {}: memory clocks locked to {}", index, clocks_text(*c.memory_clocks)));
  }
  if (c.reset_memory_clocks) {
    gpu.reset_memory_locked_clocks();
    done.push_back(fmt::format("GPU {}: memory clocks unlocked", index));
  }
}

}  // namespace

bool GpuSettingsChange::empty() const {
  return !power_limit && !reset_power_limit && !persistence_mode && !gpu_clocks &&
         !reset_gpu_clocks && !memory_clocks && !reset_memory_clocks;
}

GpuSettingsReport read_gpu_settings(Gpu& gpu, int index) {
  GpuSettingsReport r;
  r.index = index;
  r.name = gpu.name();
  r.power_limit = read_or_empty<Milliwatts>([&] { return gpu.power_limit(); });
  r.default_power_limit = read_or_empty<Milliwatts>([&] { return gpu.default_power_limit(); });
  r.constraints =
      read_or_empty<PowerLimitConstraints>([&] { return gpu.power_limit_constraints(); });
  r.persistence_mode = read_or_empty<bool>([&] { return gpu.persistence_mode(); });
  return r;
}

AppliedSettings apply_gpu_settings(const std::vector<std::shared_ptr<Gpu>>& gpus,
                                   const std::vector<int>& indices,
                                   const GpuSettingsChange& change) {
  if (gpus.size() != indices.size()) {
    throw_error(ErrorCode::kInternal, "apply_gpu_settings: one index per GPU");
  }
  validate(gpus, indices, change);
  AppliedSettings applied;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    try {
      apply_one(*gpus[k], indices[k], change, applied.changes);
    } catch (const Error& e) {
      std::string so_far;
      for (const auto& line : applied.changes) so_far += "\n  " + line;
      throw Error(e.code(), fmt::format("GPU {}: {}; applied before the failure:{}", indices[k],
                                        e.what(), so_far.empty() ? " nothing" : so_far));
    }
  }
  return applied;
}

}  // namespace zeus
