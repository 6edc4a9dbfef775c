// `zeus monitor energy` and `zeus monitor power`: thin adapters over
// EnergyMonitor and PowerMonitor.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <stop_token>

#include "command_registry.h"
#include "monitor/carbon/hourly_json.h"
#include "monitor/measurement_json.h"
#include "pricing_flags.h"
#include "sampling_flags.h"
#include "util/process.h"
#include "util/text.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/util/error.h"
#include "zeus/util/signals.h"

namespace zeus::cli::monitor_command {
namespace {

using zeus::Seconds;

struct DeviceFlags {
  std::string gpus;
  std::string cpus;
  bool verbose = false;
};

void add_device_flags(CLI::App* cmd, DeviceFlags& flags) {
  cmd->add_option("--gpus", flags.gpus,
                  "GPU indices to measure, e.g. 0,2 or 0-3 (default: all visible GPUs)");
  cmd->add_option("--cpus", flags.cpus,
                  "CPU package indices to measure, e.g. 0,1 (default: all readable packages)");
  cmd->add_flag("--verbose", flags.verbose,
                "Also print what device discovery tried (each library's own error, the paths "
                "searched), as `zeus show-env` does");
}

// Notes are a line each; what stands behind them (every path tried) only
// when asked. Our own sentences with paths in them: printed whole (bounded
// only against a runaway), control characters escaped.
void announce(const zeus::device::DeviceInventory& devices, bool verbose) {
  for (const auto& note : devices.notes) {
    fmt::print(stderr, "zeus: note: {}\n", zeus::printable(note, 4000));
  }
  if (verbose) {
    for (const auto& detail : devices.details) {
      fmt::print(stderr, "zeus: detail: {}\n", zeus::printable(detail, 4000));
    }
  }
  if (devices.gpu_backend == "sim") {
    fmt::print(stderr,
               "zeus: note: measuring SIMULATED GPUs (ZEUS_GPU_BACKEND=sim): their energy comes "
               "from a model, not from hardware\n");
  }
}

std::string gpu_name(const zeus::device::DeviceInventory& devices, int i) {
  try {
    return zeus::printable(devices.gpus.at(static_cast<std::size_t>(i))->name());
  } catch (const std::exception&) {
    return "?";
  }
}

void print_measurement(const zeus::monitor::Measurement& m,
                       const zeus::device::DeviceInventory& devices) {
  fmt::print("Time: {:.3f} s\n", m.time.count());
  for (const auto& [i, e] : m.gpu_energy) {
    fmt::print("GPU {} ({}): {:.3f} J [{}]\n", i, gpu_name(devices, i), e.value(),
               zeus::monitor::energy_source_name(m.gpu_energy_source.at(i)));
  }
  for (const auto& [i, why] : m.failed_gpus) {
    fmt::print("GPU {} ({}): not measured: {}\n", i, gpu_name(devices, i),
               zeus::printable(why, 300));
  }
  for (const auto& [i, e] : m.cpu_energy) fmt::print("CPU package {}: {:.3f} J\n", i, e.value());
  for (const auto& [i, e] : m.dram_energy) fmt::print("DRAM {}: {:.3f} J\n", i, e.value());
  for (const auto& [i, why] : m.failed_cpus) {
    fmt::print("CPU package {}: not measured: {}\n", i, zeus::printable(why, 300));
  }
  if (m.soc_energy) {
    for (const auto& [rail, e] :
         {std::pair{"CPU", m.soc_energy->cpu}, std::pair{"GPU", m.soc_energy->gpu},
          std::pair{"module input", m.soc_energy->total}}) {
      if (e) fmt::print("Jetson {} rail: {:.3f} J\n", rail, e->value());
    }
  }
  if (m.gpu_energy.empty() && m.cpu_energy.empty() && m.failed_gpus.empty() &&
      m.failed_cpus.empty() && !m.soc_energy) {
    fmt::print("No device was measured (see `zeus show-env`).\n");
  }
  // On a Jetson alone, the module input rail is the total; a 0 J line would mislead.
  if (!m.soc_energy || !m.gpu_energy.empty() || !m.cpu_energy.empty()) {
    fmt::print("Total: {:.3f} J\n", m.total_energy().value());
  }
}

struct EnergyFlags {
  DeviceFlags devices;
  zeus::cli::PricingFlags pricing;
  bool json = false;
  bool allow_empty = false;
  std::string log;
  std::vector<std::string> command;
};

void run_energy(const EnergyFlags& f) {
  const auto devices = zeus::device::discover_devices();
  zeus::monitor::EnergyMonitorOptions options;
  options.warn_when_empty = false;  // refused below, or allowed with a note
  options.gpu_indices = zeus::cli::parse_device_indices(f.devices.gpus, "--gpus");
  options.cpu_indices = zeus::cli::parse_device_indices(f.devices.cpus, "--cpus");
  // A measurement of nothing is refused before the command runs: a 0 J total
  // would be recorded as if it had been measured. The refusal carries the
  // notes itself, so they are not printed before it a second time.
  const auto why = zeus::device::nothing_to_measure(
      devices, zeus::device::select_devices(devices, options.gpu_indices, options.cpu_indices));
  if (why && !f.allow_empty) {
    if (f.devices.verbose) announce(devices, true);
    throw zeus::Error(zeus::ErrorCode::kNotFound,
                      *why + "; pass --allow-empty to record an empty measurement anyway");
  }
  announce(devices, f.devices.verbose);
  if (why) {
    fmt::print(stderr, "zeus: note: {}; the measurement will be empty (--allow-empty)\n",
               zeus::printable(*why, 600));
  }
  // With carbon or price flags the window is split at UTC hours and priced
  // (HourlyRateMonitor, which writes its own log with the priced columns).
  const auto providers = zeus::cli::make_providers(f.pricing);
  std::unique_ptr<zeus::carbon::HourlyRateMonitor> priced;
  std::unique_ptr<zeus::monitor::EnergyMonitor> plain;
  if (!providers.empty()) {
    zeus::carbon::HourlyRateMonitorOptions priced_options;
    priced_options.energy = options;
    priced = std::make_unique<zeus::carbon::HourlyRateMonitor>(devices, providers, priced_options);
  } else {
    options.log_file = f.log;
    plain = std::make_unique<zeus::monitor::EnergyMonitor>(devices, options);
  }
  const std::string window = "zeus.monitor.energy";
  const double start_wall = zeus::wall_time_seconds();
  int exit_code = 0;
  if (priced) {
    priced->begin_window(window);
  } else {
    plain->begin_window(window);
  }
  if (!f.command.empty()) {
    exit_code = zeus::run_forwarding_signals(f.command);
  } else {
    std::stop_source stop;
    zeus::SignalSubscription on_signal(zeus::SignalSubscription::Kind::kHandle,
                                       [&](int) { stop.request_stop(); });
    fmt::print(stderr, "zeus: measuring until Ctrl-C (SIGINT) or SIGTERM\n");
    zeus::SteadyClock::instance().wait_until(Seconds(INFINITY), stop.get_token());
  }
  // A failing log write must not hide the measurement: print it first.
  std::optional<zeus::Error> log_error;
  zeus::monitor::Measurement m;
  std::optional<zeus::carbon::HourlyMeasurement> hourly;
  try {
    if (priced) {
      hourly = priced->end_window(window);
      m = hourly->energy;
      if (!f.log.empty()) zeus::carbon::PricedLog(f.log).append(start_wall, window, *hourly);
    } else {
      m = plain->end_window(window);
    }
  } catch (const zeus::Error& e) {
    // The priced log refuses a file with other columns (kInvalidArgument).
    const bool log_failed = e.code() == zeus::ErrorCode::kIo ||
                            (hourly && e.code() == zeus::ErrorCode::kInvalidArgument);
    if (!log_failed || f.log.empty() || (priced && !hourly)) throw;
    log_error = e;
  }
  if (f.json) {
    auto j = zeus::monitor::to_json(m);
    if (hourly) zeus::cli::add_rates_json(j, *hourly);
    j["gpu_backend"] = devices.gpu_backend;
    if (!f.command.empty()) {
      j["command"] = f.command;
      j["exit_code"] = exit_code;
    }
    std::cout << j.dump() << std::endl;
  } else {
    print_measurement(m, devices);
    if (hourly) zeus::cli::print_rates(*hourly);
  }
  if (log_error) {
    fmt::print(stderr, "zeus: error: {}\n", log_error->what());
    if (exit_code == 0) exit_code = zeus::kExitFailure;
  }
  const bool measured_something = !m.gpu_energy.empty() || !m.cpu_energy.empty() ||
                                  !m.dram_energy.empty() || m.soc_energy.has_value();
  if (!measured_something && !f.allow_empty) {
    fmt::print(stderr,
               "zeus: error: no device could be read at the end of the window, so nothing was "
               "measured (the reasons are above)\n");
    if (exit_code == 0) exit_code = zeus::kExitFailure;
  }
  zeus::cli::set_exit_code(exit_code);
}

struct PowerFlags {
  DeviceFlags devices;
  zeus::cli::PacingFlags pacing;
  std::string domain = "instant";
  bool json = false;
  bool csv = false;
  bool telemetry = false;
};

// One GPU's telemetry as a JSON object; a value the GPU cannot give is left
// out (docs/measuring.md lists them). null when the read itself failed.
nlohmann::json telemetry_json(zeus::device::Gpu& gpu) {
  zeus::device::GpuTelemetry t;
  try {
    t = gpu.telemetry();
  } catch (const zeus::Error&) {
    return nullptr;
  }
  nlohmann::json j = nlohmann::json::object();
  if (t.gpu_utilization) j["gpu_utilization_pct"] = t.gpu_utilization->value();
  if (t.memory_utilization) j["memory_utilization_pct"] = t.memory_utilization->value();
  if (t.sm_clock) j["sm_clock_mhz"] = t.sm_clock->value();
  if (t.memory_clock) j["memory_clock_mhz"] = t.memory_clock->value();
  if (t.clock_event_reasons) {
    j["clock_event_reasons"] = *t.clock_event_reasons;
    auto names = nlohmann::json::array();
    zeus::device::for_each_clock_event_reason(
        *t.clock_event_reasons, [&](std::string_view n) { names.push_back(n); },
        [&](std::uint64_t bit) { names.push_back(fmt::format("unknown_{:#x}", bit)); });
    j["clock_event_reason_names"] = std::move(names);
  }
  if (t.memory_used) j["memory_used_bytes"] = t.memory_used->value();
  if (t.memory_free) j["memory_free_bytes"] = t.memory_free->value();
  if (t.memory_total) j["memory_total_bytes"] = t.memory_total->value();
  if (t.temperature) j["temperature_c"] = t.temperature->value();
  return j;
}

zeus::device::PowerDomain parse_domain(const std::string& d) {
  if (d == "average") return zeus::device::PowerDomain::kDeviceAverage;
  if (d == "memory") return zeus::device::PowerDomain::kMemoryAverage;
  return zeus::device::PowerDomain::kDeviceInstant;
}

std::string energy_cell(const std::optional<zeus::Joules>& e) {
  return e ? fmt::format("{:.3f} J", e->value()) : std::string("- (no samples)");
}

// The devices to monitor; refused when there is none.
zeus::device::DeviceSelection select_power_devices(const DeviceFlags& flags,
                                                   const zeus::device::DeviceInventory& devices) {
  auto selection =
      zeus::device::select_devices(devices, zeus::cli::parse_device_indices(flags.gpus, "--gpus"),
                                   zeus::cli::parse_device_indices(flags.cpus, "--cpus"));
  if (selection.gpus.empty() && selection.cpus.empty()) {
    if (flags.verbose) announce(devices, true);
    const auto why = zeus::device::nothing_to_measure(devices, selection);
    throw zeus::Error(zeus::ErrorCode::kNotFound,
                      why ? *why : "no GPU or readable CPU package to monitor");
  }
  return selection;
}

void print_power_csv_header(const zeus::device::DeviceSelection& selection) {
  std::string header = "time_s";
  for (int i : selection.gpu_indices) header += fmt::format(",gpu{}_w", i);
  for (int i : selection.cpu_indices) header += fmt::format(",cpu{}_w", i);
  fmt::print("{}\n", header);
}

// One line of `zeus monitor power`: the latest power of every device at `t`.
void print_power_line(const PowerFlags& f, const zeus::monitor::PowerMonitor& pm,
                      const zeus::device::DeviceSelection& selection,
                      zeus::device::PowerDomain domain, Seconds t) {
  nlohmann::json line = {{"time_s", t.count()}};
  std::string csv = fmt::format("{:.3f}", t.count());
  std::string text = fmt::format("{:8.3f} s", t.count());
  for (int i : selection.gpu_indices) {
    const auto p = pm.latest_gpu_power(i, domain);
    line["gpu_w"][std::to_string(i)] = p ? nlohmann::json(p->value()) : nlohmann::json(nullptr);
    csv += p ? fmt::format(",{:.3f}", p->value()) : ",";
    text +=
        p ? fmt::format("  GPU{} {:8.2f} W", i, p->value()) : fmt::format("  GPU{}        - W", i);
  }
  if (f.telemetry) {
    for (std::size_t k = 0; k < selection.gpus.size(); ++k) {
      line["gpu_telemetry"][std::to_string(selection.gpu_indices[k])] =
          telemetry_json(*selection.gpus[k]);
    }
  }
  for (int i : selection.cpu_indices) {
    const auto tl = pm.cpu_timeline(i);
    if (tl.empty()) {
      line["cpu_w"][std::to_string(i)] = nullptr;
      csv += ",";
      text += fmt::format("  CPU{}        - W", i);
      continue;
    }
    const double p = tl.back().power.value();
    line["cpu_w"][std::to_string(i)] = p;
    csv += fmt::format(",{:.3f}", p);
    text += fmt::format("  CPU{} {:8.2f} W", i, p);
  }
  if (f.json) {
    std::cout << line.dump() << std::endl;
  } else {
    fmt::print("{}\n", f.csv ? csv : text);
    std::fflush(stdout);
  }
}

// The energy of every device over [start, end], integrated from the samples.
void print_power_totals(const PowerFlags& f, const zeus::monitor::PowerMonitor& pm,
                        const zeus::device::DeviceSelection& selection,
                        zeus::device::PowerDomain domain, Seconds start, Seconds end) {
  nlohmann::json totals = {{"total_time_s", (end - start).count()}};
  std::string text = fmt::format("Total time: {:.3f} s\n", (end - start).count());
  double gpu_sum = 0, sum = 0;
  for (int i : selection.gpu_indices) {
    const auto e = pm.gpu_energy(i, domain, start, end);
    totals["gpu_energy_j"][std::to_string(i)] =
        e ? nlohmann::json(e->value()) : nlohmann::json(nullptr);
    if (e) gpu_sum += e->value();
    text += fmt::format("GPU {} energy: {}\n", i, energy_cell(e));
  }
  sum = gpu_sum;
  for (std::size_t k = 0; k < selection.cpu_indices.size(); ++k) {
    const int i = selection.cpu_indices[k];
    for (const bool dram : {false, true}) {
      if (dram && !selection.cpus[k]->has_dram()) continue;
      const auto e = pm.cpu_energy(i, dram, start, end);
      totals[dram ? "dram_energy_j" : "cpu_energy_j"][std::to_string(i)] =
          e ? nlohmann::json(e->value()) : nlohmann::json(nullptr);
      if (e) sum += e->value();
      text += fmt::format("{} {} energy: {}\n", dram ? "DRAM" : "CPU package", i, energy_cell(e));
    }
  }
  totals["total_gpu_energy_j"] = gpu_sum;
  totals["total_energy_j"] = sum;
  if (!selection.gpu_indices.empty()) {
    text += fmt::format("Total GPU energy: {:.3f} J ({} power, integrated)\n", gpu_sum, f.domain);
  }
  text += fmt::format("Total energy: {:.3f} J\n", sum);
  if (f.json) {
    std::cout << totals.dump() << std::endl;
  } else if (f.csv) {
    fmt::print(stderr, "{}", text);
  } else {
    fmt::print("{}", text);
  }
}

void run_power(const PowerFlags& f, bool domain_given, bool duration_given) {
  const zeus::cli::Pacing pacing = zeus::cli::parse_pacing(f.pacing, duration_given);
  const auto devices = zeus::device::discover_devices();
  const auto selection = select_power_devices(f.devices, devices);
  announce(devices, f.devices.verbose);
  if (domain_given && selection.gpus.empty()) {
    fmt::print(stderr, "zeus: note: --domain applies to GPUs; no GPU is monitored\n");
  }
  const zeus::device::PowerDomain domain = parse_domain(f.domain);
  zeus::monitor::PowerMonitorOptions options;
  options.interval = pacing.interval;
  options.start_thread = false;  // this loop samples once per printed line
  if (!selection.gpus.empty()) options.domains = {domain};
  zeus::monitor::PowerMonitor pm(selection.gpus, selection.gpu_indices, selection.cpus,
                                 selection.cpu_indices, options);

  zeus::cli::LinePacer pacer(pacing);
  if (f.csv) print_power_csv_header(selection);
  while (pacer.wait_next()) {
    pm.sample_now();
    print_power_line(f, pm, selection, domain, pacer.elapsed());
  }
  const Seconds start = pacer.start();
  const Seconds end = pacer.now();
  print_power_totals(f, pm, selection, domain, start, end);
}

void setup(CLI::App& root) {
  auto* monitor = root.add_subcommand("monitor", "Measure energy and power");
  monitor->require_subcommand(1);

  auto ef = std::make_shared<EnergyFlags>();
  auto* energy = monitor->add_subcommand(
      "energy", "Measure the time and energy of a command (or until Ctrl-C)");
  add_device_flags(energy, ef->devices);
  energy->add_flag("--json", ef->json, "Print one JSON object");
  energy->add_flag("--allow-empty", ef->allow_empty,
                   "Run and report even when no device can be measured (the total is then "
                   "empty, not a measured 0 J); without it that is an error (exit 2)");
  zeus::cli::add_pricing_flags(energy, ef->pricing);
  energy->add_option("--log", ef->log,
                     "Also append the window to this CSV log file (header written to a new or "
                     "empty file; a file with other columns is refused)");
  energy->add_option("command", ef->command,
                     "Command to run and measure, after `--` (its exit code is passed on; "
                     "SIGINT/SIGTERM are forwarded to it)");
  energy->footer(
      "A device that fails to read at the end is reported as not measured (with why); the "
      "others are still reported and the command's exit code is still passed on.\n"
      "Example: zeus monitor energy --gpus 0 -- python train.py --epochs 1\n"
      "Carbon and cost: --carbon-intensity 350 --price 0.15, or hourly rates from\n"
      "--carbon-provider electricitymaps:37.87,-122.26 ($ELECTRICITYMAPS_API_TOKEN) and\n"
      "--price-provider openei:37.87,-122.26,LABEL ($OPENEI_API_KEY); the window is split at\n"
      "UTC hours and each hour's energy is priced at that hour's rate (docs/measuring.md).");
  energy->callback([ef] { run_energy(*ef); });

  auto pf = std::make_shared<PowerFlags>();
  auto* power = monitor->add_subcommand("power", "Print power per device every interval");
  add_device_flags(power, pf->devices);
  zeus::cli::add_interval_flag(power, pf->pacing);
  auto* domain =
      power->add_option("--domain", pf->domain, "GPU power domain: instant, average or memory")
          ->check(CLI::IsMember({"instant", "average", "memory"}));
  auto* duration = zeus::cli::add_duration_flag(power, pf->pacing);
  auto* json_flag = power->add_flag("--json", pf->json, "JSON lines, then a totals object");
  auto* csv_flag = power->add_flag("--csv", pf->csv, "CSV rows (totals go to stderr)");
  json_flag->excludes(csv_flag);
  power
      ->add_flag("--telemetry", pf->telemetry,
                 "With --json: add each GPU's utilization, SM and memory clocks, clock event "
                 "(throttle) reasons, memory use and temperature to every line under "
                 "\"gpu_telemetry\" (about six more driver calls per GPU per line)")
      ->needs(json_flag);
  power->footer(
      "The totals integrate the sampled power of every device: GPUs, CPU packages and DRAM.\n"
      "--telemetry leaves out what a GPU cannot report (e.g. utilization under MIG); the "
      "fields are in docs/measuring.md.");
  power->callback(
      [pf, domain, duration] { run_power(*pf, domain->count() > 0, duration->count() > 0); });
}

const bool registered = zeus::cli::register_command(20, &setup);

}  // namespace
}  // namespace zeus::cli::monitor_command
