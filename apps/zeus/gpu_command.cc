// `zeus gpu show|set`: an operator's lasting GPU settings (power limit,
// persistence mode, locked clocks), as `nvidia-smi -pl/-pm/-lgc` do, on any
// backend and through zeusd without a lease. A thin adapter over
// zeus/device/gpu_settings.h, which checks every GPU before changing any.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "output_checks.h"
#include "sampling_flags.h"
#include "util/parse.h"
#include "zeus/device/devices.h"
#include "zeus/device/gpu_settings.h"
#include "zeus/util/error.h"

namespace zeus::cli::gpu_command {
namespace {

struct GpuFlags {
  std::string gpus;
  bool json = false;
  std::string power_limit_w;
  bool reset_power_limit = false;
  std::string persistence;
  std::string gpu_clocks;
  bool reset_gpu_clocks = false;
  std::string memory_clocks;
  bool reset_memory_clocks = false;
};

zeus::device::DeviceSelection discover(const std::string& gpus, bool persistent) {
  zeus::device::DiscoveryOptions options;
  options.cpus = false;
  // Through zeusd, no lease: the daemon keeps what this command sets.
  options.zeusd_persistent_settings = persistent;
  auto devices =
      std::make_shared<zeus::device::DeviceInventory>(zeus::device::discover_devices(options));
  for (const auto& note : devices->notes) fmt::print(stderr, "zeus: note: {}\n", note);
  auto selection = zeus::device::select_devices(
      *devices, zeus::cli::parse_device_indices(gpus, "--gpus"), std::vector<int>{});
  if (selection.gpus.empty()) {
    const auto why = zeus::device::nothing_to_measure(*devices, selection);
    zeus::throw_error(zeus::ErrorCode::kNotFound,
                      fmt::format("no GPU to show or set: {}", why.value_or("none selected")));
  }
  return selection;
}

std::string watts_text(const std::optional<zeus::Milliwatts>& mw) {
  return mw ? fmt::format("{:g} W", static_cast<double>(mw->value()) / 1000.0) : "unknown";
}

nlohmann::json watts_json(const std::optional<zeus::Milliwatts>& mw) {
  return mw ? nlohmann::json(static_cast<double>(mw->value()) / 1000.0) : nlohmann::json(nullptr);
}

void show(const GpuFlags& f) {
  const auto selection = discover(f.gpus, false);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t k = 0; k < selection.gpus.size(); ++k) {
    const auto r = zeus::device::read_gpu_settings(*selection.gpus[k], selection.gpu_indices[k]);
    if (f.json) {
      out.push_back({{"index", r.index},
                     {"name", r.name},
                     {"power_limit_w", watts_json(r.power_limit)},
                     {"default_power_limit_w", watts_json(r.default_power_limit)},
                     {"min_power_limit_w",
                      watts_json(r.constraints ? std::optional<zeus::Milliwatts>(r.constraints->min)
                                               : std::nullopt)},
                     {"max_power_limit_w",
                      watts_json(r.constraints ? std::optional<zeus::Milliwatts>(r.constraints->max)
                                               : std::nullopt)},
                     {"persistence_mode", r.persistence_mode ? nlohmann::json(*r.persistence_mode)
                                                             : nlohmann::json(nullptr)}});
      continue;
    }
    fmt::print("GPU {}: {}\n  power limit {} (default {}, range {} to {})\n  persistence mode {}\n",
               r.index, r.name, watts_text(r.power_limit), watts_text(r.default_power_limit),
               watts_text(r.constraints ? std::optional(r.constraints->min) : std::nullopt),
               watts_text(r.constraints ? std::optional(r.constraints->max) : std::nullopt),
               r.persistence_mode ? (*r.persistence_mode ? "on" : "off") : "unknown");
  }
  if (f.json) std::cout << out.dump(2) << std::endl;
  zeus::cli::flush_stdout();
}

zeus::device::ClockRange parse_clocks(const std::string& text, const char* flag) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{} {}: give MIN:MAX in MHz, e.g. 1005:1410", flag, text));
  }
  return {zeus::Megahertz(zeus::parse_int(text.substr(0, colon), flag, 1, 100000)),
          zeus::Megahertz(zeus::parse_int(text.substr(colon + 1), flag, 1, 100000))};
}

zeus::device::GpuSettingsChange parse_change(const GpuFlags& f) {
  zeus::device::GpuSettingsChange c;
  if (!f.power_limit_w.empty()) {
    const double w = zeus::parse_double(f.power_limit_w, "--power-limit", 1.0, 100000.0);
    c.power_limit = zeus::Milliwatts(static_cast<std::int64_t>(w * 1000.0 + 0.5));
  }
  c.reset_power_limit = f.reset_power_limit;
  if (f.persistence == "on" || f.persistence == "off") {
    c.persistence_mode = f.persistence == "on";
  } else if (!f.persistence.empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("--persistence {}: give on or off", f.persistence));
  }
  if (!f.gpu_clocks.empty()) c.gpu_clocks = parse_clocks(f.gpu_clocks, "--gpu-clocks");
  c.reset_gpu_clocks = f.reset_gpu_clocks;
  if (!f.memory_clocks.empty()) c.memory_clocks = parse_clocks(f.memory_clocks, "--memory-clocks");
  c.reset_memory_clocks = f.reset_memory_clocks;
  return c;
}

void set(const GpuFlags& f) {
  const auto change = parse_change(f);  // flag errors before discovery
  if (change.empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "nothing to set: give --power-limit, --persistence, --gpu-clocks, "
                      "--memory-clocks or a --reset-* flag (see zeus gpu set --help)");
  }
  const auto selection = discover(f.gpus, true);
  const auto applied =
      zeus::device::apply_gpu_settings(selection.gpus, selection.gpu_indices, change);
  for (const auto& line : applied.changes) fmt::print("{}\n", line);
  fmt::print(stderr,
             "zeus: note: these settings stay until changed again or the driver reloads (zeus "
             "gpu set --reset-power-limit --reset-gpu-clocks undoes them)\n");
  zeus::cli::flush_stdout();
}

void setup(CLI::App& root) {
  auto* gpu = root.add_subcommand("gpu", "Show or set lasting GPU settings (operators)");
  gpu->require_subcommand(1);
  auto sf = std::make_shared<GpuFlags>();
  auto* show_cmd =
      gpu->add_subcommand("show", "Print each GPU's power limit, its range and persistence mode");
  show_cmd->add_option("--gpus", sf->gpus, "GPU indices, e.g. 0,2 or 0-3 (default: all)");
  show_cmd->add_flag("--json", sf->json, "One JSON array");
  show_cmd->callback([sf] { show(*sf); });

  auto f = std::make_shared<GpuFlags>();
  auto* set_cmd = gpu->add_subcommand(
      "set",
      "Change GPU settings that stay after this command (unlike the leased changes of jobs). "
      "Every GPU is checked before any is changed.");
  set_cmd->add_option("--gpus", f->gpus, "GPU indices, e.g. 0,2 or 0-3 (all GPUs: 'all')")
      ->required();
  auto* pl = set_cmd->add_option("--power-limit", f->power_limit_w, "Power limit in watts");
  set_cmd->add_flag("--reset-power-limit", f->reset_power_limit, "Back to the default limit")
      ->excludes(pl);
  set_cmd->add_option("--persistence", f->persistence, "Persistence mode: on or off");
  auto* gc = set_cmd->add_option("--gpu-clocks", f->gpu_clocks, "Lock GPU clocks, MIN:MAX MHz");
  set_cmd->add_flag("--reset-gpu-clocks", f->reset_gpu_clocks, "Unlock GPU clocks")->excludes(gc);
  auto* mc =
      set_cmd->add_option("--memory-clocks", f->memory_clocks, "Lock memory clocks, MIN:MAX MHz");
  set_cmd->add_flag("--reset-memory-clocks", f->reset_memory_clocks, "Unlock memory clocks")
      ->excludes(mc);
  set_cmd->footer(
      "Examples: zeus gpu set --gpus all --power-limit 300\n"
      "          zeus gpu set --gpus 0,1 --reset-power-limit --reset-gpu-clocks\n"
      "Needs the privileges nvidia-smi needs, or a zeusd (ZEUSD_SOCK_PATH) whose token has "
      "gpu-control; through zeusd no lease is taken, so the daemon keeps the settings.");
  set_cmd->callback([f] {
    GpuFlags flags = *f;
    if (flags.gpus == "all") flags.gpus.clear();
    set(flags);
  });
}

const bool registered = zeus::cli::register_command(26, &setup);

}  // namespace
}  // namespace zeus::cli::gpu_command
