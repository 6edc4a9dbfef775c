// `zeus monitor temperature`: a thin adapter over TemperatureMonitor. Lives in
// its own file and attaches to the `monitor` command registered by
// monitor_command.cc (order 20), so both can change independently. Flags and
// signals follow `zeus monitor power`.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>

#include "command_registry.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/temperature_monitor.h"
#include "zeus/util/error.h"
#include "zeus/util/parse.h"
#include "zeus/util/signals.h"

namespace {

using zeus::Seconds;

constexpr int kMaxDeviceIndex = 4095;
constexpr double kMinInterval = 0.01;
constexpr double kMaxSeconds = 1e7;  // about 116 days

struct TemperatureFlags {
  std::string gpus;
  std::string interval = "1";
  std::string duration;
  bool json = false;
  bool csv = false;
};

void run_temperature(const TemperatureFlags& f, bool duration_given) {
  const double interval = zeus::parse_double(f.interval, "--interval", kMinInterval, kMaxSeconds);
  const double duration =  // 0: until a signal
      duration_given ? zeus::parse_double(f.duration, "--duration", kMinInterval, kMaxSeconds)
                     : 0.0;
  zeus::DiscoveryOptions discovery;
  discovery.cpus = false;
  const auto devices = zeus::discover_devices(discovery);
  for (const auto& note : devices.notes) fmt::print(stderr, "zeus: note: {}\n", note);
  const auto selection = zeus::select_devices(
      devices,
      f.gpus.empty() ? std::nullopt
                     : std::optional(zeus::parse_int_list(f.gpus, "--gpus", 0, kMaxDeviceIndex)),
      std::vector<int>{});
  if (selection.gpus.empty()) {
    throw zeus::Error(zeus::ErrorCode::kNotFound, "no GPU to monitor (see `zeus show-env`)");
  }
  zeus::TemperatureMonitorOptions options;
  options.interval = Seconds(interval);
  options.start_thread = false;  // this loop samples once per printed line
  zeus::TemperatureMonitor tm(selection.gpus, selection.gpu_indices, options);

  std::stop_source stop;
  zeus::SignalSubscription on_signal(zeus::SignalSubscription::Kind::kHandle,
                                     [&](int) { stop.request_stop(); });
  auto& clock = zeus::SteadyClock::instance();
  const Seconds start = clock.now();
  if (f.csv) {
    std::string header = "time_s";
    for (int i : selection.gpu_indices) header += fmt::format(",gpu{}_c", i);
    fmt::print("{}\n", header);
  }
  Seconds next = start;
  for (bool first = true, last = false; !last; first = false) {
    if (!first) {
      next += Seconds(interval);
      if (duration > 0 && next - start >= Seconds(duration) - Seconds(1e-9)) {
        next = start + Seconds(duration);
        last = true;
      }
      if (!clock.wait_until(next, stop.get_token())) break;
      tm.sample_now();
    }
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
  }
}

void setup(CLI::App& root) {
  CLI::App* monitor = root.get_subcommand("monitor");
  auto tf = std::make_shared<TemperatureFlags>();
  auto* cmd = monitor->add_subcommand(
      "temperature", "Print GPU temperatures every interval (NVIDIA: GPU core; AMD: hotspot)");
  cmd->add_option("--gpus", tf->gpus,
                  "GPU indices to monitor, e.g. 0,2 or 0-3 (default: all visible GPUs)");
  cmd->add_option("--interval", tf->interval,
                  fmt::format("Seconds between lines, at least {} (default 1)", kMinInterval));
  auto* duration = cmd->add_option("--duration", tf->duration,
                                   "Stop after this many seconds (default: at Ctrl-C or SIGTERM)");
  auto* json_flag = cmd->add_flag("--json", tf->json, "JSON lines");
  auto* csv_flag = cmd->add_flag("--csv", tf->csv, "CSV rows");
  json_flag->excludes(csv_flag);
  cmd->footer("Example: zeus monitor temperature --gpus 0,1 --interval 5 --csv > temps.csv");
  cmd->callback([tf, duration] { run_temperature(*tf, duration->count() > 0); });
}

const bool registered = zeus::cli::register_command(21, &setup);

}  // namespace
