// `zeus monitor temperature`: a thin adapter over TemperatureMonitor. Lives in
// its own file and attaches to the `monitor` command registered by
// monitor_command.cc (order 20), so both can change independently. Its
// pacing flags and signal handling are those of `zeus monitor power`
// (sampling_flags.h).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "sampling_flags.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/temperature_monitor.h"
#include "zeus/util/error.h"

namespace zeus::cli::monitor_temperature_command {
namespace {

using zeus::Seconds;

struct TemperatureFlags {
  std::string gpus;
  zeus::cli::PacingFlags pacing;
  bool json = false;
  bool csv = false;
};

void run_temperature(const TemperatureFlags& f, bool duration_given) {
  const zeus::cli::Pacing pacing = zeus::cli::parse_pacing(f.pacing, duration_given);
  zeus::device::DiscoveryOptions discovery;
  discovery.cpus = false;
  const auto devices = zeus::device::discover_devices(discovery);
  for (const auto& note : devices.notes) fmt::print(stderr, "zeus: note: {}\n", note);
  const auto selection = zeus::device::select_devices(
      devices, zeus::cli::parse_device_indices(f.gpus, "--gpus"), std::vector<int>{});
  if (selection.gpus.empty()) {
    throw zeus::Error(zeus::ErrorCode::kNotFound, "no GPU to monitor (see `zeus show-env`)");
  }
  zeus::monitor::TemperatureMonitorOptions options;
  options.interval = pacing.interval;
  options.start_thread = false;  // this loop samples once per printed line
  zeus::monitor::TemperatureMonitor tm(selection.gpus, selection.gpu_indices, options);

  zeus::cli::LinePacer pacer(pacing);
  if (f.csv) {
    std::string header = "time_s";
    for (int i : selection.gpu_indices) header += fmt::format(",gpu{}_c", i);
    fmt::print("{}\n", header);
  }
  // The first line is read at once (the monitor sampled when it started).
  for (bool first = true; first || pacer.wait_next(); first = false) {
    if (!first) tm.sample_now();
    const Seconds t = pacer.elapsed();
    nlohmann::json line = {{"time_s", t.count()}};
    std::string csv = fmt::format("{:.3f}", t.count());
    std::string text = fmt::format("{:8.3f} s", t.count());
    for (int i : selection.gpu_indices) {
      const auto c = tm.temperature(i);
      line["gpu_c"][std::to_string(i)] = c ? nlohmann::json(c->value()) : nlohmann::json(nullptr);
      csv += c ? fmt::format(",{:g}", c->value()) : ",";
      text +=
          c ? fmt::format("  GPU{} {:6.1f} C", i, c->value()) : fmt::format("  GPU{}      - C", i);
    }
    if (f.json) {
      std::cout << line.dump() << std::endl;
    } else {
      fmt::print("{}\n", f.csv ? csv : text);
      std::fflush(stdout);
    }
  }
}

void setup(CLI::App& root) {
  CLI::App* monitor = root.get_subcommand("monitor");
  auto tf = std::make_shared<TemperatureFlags>();
  auto* cmd = monitor->add_subcommand(
      "temperature", "Print GPU temperatures every interval (NVIDIA: GPU core; AMD: hotspot)");
  cmd->add_option("--gpus", tf->gpus,
                  "GPU indices to monitor, e.g. 0,2 or 0-3 (default: all visible GPUs)");
  zeus::cli::add_interval_flag(cmd, tf->pacing);
  auto* duration = zeus::cli::add_duration_flag(cmd, tf->pacing);
  auto* json_flag = cmd->add_flag("--json", tf->json, "JSON lines");
  auto* csv_flag = cmd->add_flag("--csv", tf->csv, "CSV rows");
  json_flag->excludes(csv_flag);
  cmd->footer("Example: zeus monitor temperature --gpus 0,1 --interval 5 --csv > temps.csv");
  cmd->callback([tf, duration] { run_temperature(*tf, duration->count() > 0); });
}

const bool registered = zeus::cli::register_command(21, &setup);

}  // namespace
}  // namespace zeus::cli::monitor_temperature_command
