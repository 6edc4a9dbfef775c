// `zeus monitor temperature`: a thin adapter over TemperatureMonitor. Lives in
// its own file and attaches to the `monitor` command registered by
// monitor_command.cc (order 20), so both can change independently.
#include <fmt/format.h>
#include <signal.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/temperature_monitor.h"
#include "zeus/util/error.h"
#include "zeus/util/parse.h"
#include "zeus/util/process.h"

namespace {

using zeus::Seconds;

struct TemperatureFlags {
  std::string gpus;
  double interval = 1.0;
  double duration = 0.0;
  bool json = false;
  bool csv = false;
};

void run_temperature(const TemperatureFlags& f) {
  zeus::SignalCatcher signals;  // before any thread starts, so threads inherit the mask
  zeus::DiscoveryOptions discovery;
  discovery.cpus = false;
  const auto devices = zeus::discover_devices(discovery);
  for (const auto& note : devices.notes) fmt::print(stderr, "zeus: note: {}\n", note);
  const auto selection = zeus::select_devices(
      devices,
      f.gpus.empty() ? std::nullopt : std::optional(zeus::parse_int_list(f.gpus, "--gpus")),
      std::vector<int>{});
  if (selection.gpus.empty()) {
    throw zeus::Error(zeus::ErrorCode::kNotFound, "no GPU to monitor (see `zeus show-env`)");
  }
  zeus::TemperatureMonitorOptions options;
  options.interval = Seconds(f.interval);
  options.start_thread = false;  // this loop samples once per printed line
  zeus::TemperatureMonitor tm(selection.gpus, selection.gpu_indices, options);

  auto& clock = zeus::SteadyClock::instance();
  const Seconds start = clock.now();
  if (f.csv) {
    std::string header = "time_s";
    for (int i : selection.gpu_indices) header += fmt::format(",gpu{}_c", i);
    fmt::print("{}\n", header);
  }
  Seconds next = start;
  bool first = true;
  while (true) {
    if (!first) {
      next += Seconds(f.interval);
      if (f.duration > 0 && next - start > Seconds(f.duration)) next = start + Seconds(f.duration);
      const int sig = signals.wait(next - clock.now());
      if (sig == SIGINT || sig == SIGTERM) break;
      if (sig != 0) continue;  // SIGCHLD: not ours
      tm.sample_now();
    }
    first = false;
    const Seconds t = clock.now() - start;
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
    if (f.duration > 0 && t >= Seconds(f.duration) - Seconds(1e-3)) break;
  }
}

void setup(CLI::App& root) {
  CLI::App* monitor = root.get_subcommand("monitor");
  auto tf = std::make_shared<TemperatureFlags>();
  auto* cmd = monitor->add_subcommand(
      "temperature", "Print GPU temperatures every interval (NVIDIA: GPU core; AMD: hotspot)");
  cmd->add_option("--gpus", tf->gpus,
                  "GPU indices to monitor, e.g. 0,2 or 0-3 (default: all visible GPUs)");
  cmd->add_option("--interval", tf->interval, "Seconds between lines (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--duration", tf->duration, "Stop after this many seconds (default: Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  auto* json_flag = cmd->add_flag("--json", tf->json, "JSON lines");
  auto* csv_flag = cmd->add_flag("--csv", tf->csv, "CSV rows");
  json_flag->excludes(csv_flag);
  cmd->footer("Example: zeus monitor temperature --gpus 0,1 --interval 5 --csv > temps.csv");
  cmd->callback([tf] { run_temperature(*tf); });
}

const bool registered = zeus::cli::register_command(21, &setup);

}  // namespace
