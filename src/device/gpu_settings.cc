#include "zeus/device/gpu_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "zeus/util/error.h"

namespace zeus::device {
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

// `r` within the span of `list()` (the clocks the GPU lists for `kind`); a
// device that cannot list them is left to refuse by itself.
template <class List>
void check_within_listed(Gpu& gpu, int index, const ClockRange& r, const char* kind, List list) {
  std::vector<Megahertz> clocks;
  try {
    clocks = list();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotSupported) return;
    throw;
  }
  if (clocks.empty()) return;
  const auto [lo, hi] = std::minmax_element(clocks.begin(), clocks.end());
  if (r.min < *lo || r.max > *hi) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("GPU {} ({}) supports {} clocks from {} to {} MHz, not {}-{} "
                            "MHz; no GPU was changed",
                            index, gpu.name(), kind, lo->value(), hi->value(), r.min.value(),
                            r.max.value()));
  }
}

// The GPU's graphics clocks at its highest memory clock span what it can be
// locked to.
void check_supported_gpu_clocks(Gpu& gpu, int index, const ClockRange& r) {
  check_within_listed(gpu, index, r, "graphics", [&] {
    const auto memory = gpu.supported_memory_clocks();
    if (memory.empty()) return std::vector<Megahertz>{};
    return gpu.supported_graphics_clocks(*std::max_element(memory.begin(), memory.end()));
  });
}

// The memory clocks the GPU lists span what its memory can be locked to.
void check_supported_memory_clocks(Gpu& gpu, int index, const ClockRange& r) {
  check_within_listed(gpu, index, r, "memory", [&] { return gpu.supported_memory_clocks(); });
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
  for (std::size_t k = 0; k < gpus.size() && c.memory_clocks; ++k) {
    check_supported_memory_clocks(*gpus[k], indices[k], *c.memory_clocks);
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

// The steps applied so far, each with what undoes it. What cannot be
// checked up front (a clock table the device or zeusd does not report) may
// still be refused midway; the steps before it are then undone, so a failed
// `zeus gpu set` leaves the GPUs as it found them where it can.
class Steps {
 public:
  // Runs `apply`; on success records `line` and, when the step can be undone,
  // `undo` (described by `undo_line`).
  void run(const std::function<void()>& apply, std::string line, std::function<void()> undo = {},
           std::string undo_line = {}) {
    apply();
    done_.push_back(std::move(line));
    if (undo) {
      undo_.push_back({std::move(undo_line), std::move(undo)});
    } else {
      not_undoable_.push_back(done_.back());
    }
  }
  const std::vector<std::string>& done() const { return done_; }

  // Undoes every step, latest first; says what was undone and what was not.
  std::string roll_back() noexcept {
    std::string out;
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
      try {
        it->run();
        out += "\n  undone: " + it->line;
      } catch (const std::exception& e) {
        out += fmt::format("\n  NOT undone: {} ({})", it->line, e.what());
      }
    }
    for (const auto& line : not_undoable_) out += "\n  stays (cannot be undone): " + line;
    return out.empty() ? " nothing had been applied" : out;
  }

 private:
  struct Undo {
    std::string line;
    std::function<void()> run;
  };
  std::vector<std::string> done_;
  std::vector<Undo> undo_;
  std::vector<std::string> not_undoable_;
};

void apply_power_limit(Gpu& gpu, int index, const GpuSettingsChange& c, Steps& steps) {
  const Milliwatts before = gpu.power_limit();
  const Milliwatts after = c.power_limit ? *c.power_limit : gpu.default_power_limit();
  steps.run([&] { gpu.set_power_limit(after); },
            fmt::format("GPU {}: power limit {:g} W -> {:g} W{}", index, watts(before),
                        watts(after), c.reset_power_limit ? " (the default)" : ""),
            [&gpu, before] { gpu.set_power_limit(before); },
            fmt::format("GPU {}: power limit back to {:g} W", index, watts(before)));
}

void apply_persistence(Gpu& gpu, int index, bool enabled, Steps& steps) {
  const auto before = read_or_empty<bool>([&] { return gpu.persistence_mode(); });
  std::function<void()> undo;
  if (before) undo = [&gpu, was = *before] { gpu.set_persistence_mode(was); };
  steps.run(
      [&] { gpu.set_persistence_mode(enabled); },
      fmt::format("GPU {}: persistence mode {}", index, enabled ? "on" : "off"), std::move(undo),
      fmt::format("GPU {}: persistence mode back {}", index, before && *before ? "on" : "off"));
}

// Locked clocks cannot be read back (NVML sets and resets a range only), so a
// lock is undone by unlocking, and an unlock cannot be undone.
void apply_clocks(Gpu& gpu, int index, const GpuSettingsChange& c, Steps& steps) {
  if (c.gpu_clocks) {
    steps.run([&] { gpu.set_gpu_locked_clocks(c.gpu_clocks->min, c.gpu_clocks->max); },
              fmt::format("GPU {}: GPU clocks locked to {}", index, clocks_text(*c.gpu_clocks)),
              [&gpu] { gpu.reset_gpu_locked_clocks(); },
              fmt::format("GPU {}: GPU clocks unlocked", index));
  }
  if (c.reset_gpu_clocks) {
    steps.run([&] { gpu.reset_gpu_locked_clocks(); },
              fmt::format("GPU {}: GPU clocks unlocked", index));
  }
  if (c.memory_clocks) {
    steps.run(
        [&] { gpu.set_memory_locked_clocks(c.memory_clocks->min, c.memory_clocks->max); },
        fmt::format("GPU {}: memory clocks locked to {}", index, clocks_text(*c.memory_clocks)),
        [&gpu] { gpu.reset_memory_locked_clocks(); },
        fmt::format("GPU {}: memory clocks unlocked", index));
  }
  if (c.reset_memory_clocks) {
    steps.run([&] { gpu.reset_memory_locked_clocks(); },
              fmt::format("GPU {}: memory clocks unlocked", index));
  }
}

void apply_one(Gpu& gpu, int index, const GpuSettingsChange& c, Steps& steps) {
  if (c.power_limit || c.reset_power_limit) apply_power_limit(gpu, index, c, steps);
  if (c.persistence_mode) apply_persistence(gpu, index, *c.persistence_mode, steps);
  apply_clocks(gpu, index, c, steps);
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
  Steps steps;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    try {
      apply_one(*gpus[k], indices[k], change, steps);
    } catch (const std::exception& e) {
      const auto* error = dynamic_cast<const Error*>(&e);
      throw Error(error ? error->code() : ErrorCode::kUnknown,
                  fmt::format("GPU {}: {}; rolled back what was applied before:{}", indices[k],
                              e.what(), steps.roll_back()));
    }
  }
  return {steps.done()};
}

}  // namespace zeus::device
