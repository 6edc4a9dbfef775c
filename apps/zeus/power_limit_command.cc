// `zeus power-limit`: profiles a workload's GPU power limits with the
// GlobalPowerLimitOptimizer and reports the time and energy per limit and the
// limit every selector chooses. A thin adapter: flags in, library calls,
// table or JSON out.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "command_registry.h"
#include "gpu_job_checks.h"
#include "optimizer/power_limit/power_limit_report_json.h"
#include "util/parse.h"
#include "util/process.h"
#include "util/text.h"
#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/power_limit_report.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::cli::power_limit_command {
namespace {

using zeus::Milliwatts;

struct Flags {
  std::string selector = "zeus-cost:0.5";
  std::string gpu_backend = "sim";
  bool allow_setting_changes = false;
  bool dry_run = false;
  bool observe = false;
  bool json = false;
  std::string gpus;
  int sim_gpus = 1;
  std::string sim_model;
  std::string work_per_step = "50";
  std::string profile_path;
  int epochs = 5;
  int steps_per_epoch = 200;
  int wait_steps = 1;
  int warmup_steps = 10;
  int profile_steps = 40;
  std::string pl_step = "25";
  bool verbose = false;
  std::vector<std::string> command;
};

double watts(Milliwatts mw) { return zeus::to_watts(mw).value(); }

std::string percent(std::optional<double> fraction, bool sign) {
  if (!fraction) return "n/a";
  return sign ? fmt::format("{:+.1f}%", 100.0 * *fraction)
              : fmt::format("{:.1f}%", 100.0 * *fraction);
}

[[noreturn]] void usage(const std::string& message) {
  zeus::throw_error(zeus::ErrorCode::kInvalidArgument, message);
}

// The flags' numbers, once the flags have been checked against each other.
struct CheckedFlags {
  bool sim = false;
  double pl_step = 0;
  double work = 0;
};

CheckedFlags check_power_limit_flags(const Flags& f, const CLI::App& cmd) {
  const bool sim = f.gpu_backend == "sim";
  // Flags that do not apply to the chosen mode are errors, not silently ignored.
  if (sim && !f.command.empty()) {
    usage("simulated GPUs run simulated steps; a workload command needs --gpu-backend nvml");
  }
  if (!sim && f.command.empty()) {
    usage(
        "give the workload after `--`: one run of it is one step, e.g. "
        "zeus power-limit --gpu-backend nvml -- ./train_one_step.sh");
  }
  if (!sim) {
    for (const char* flag : {"--sim-gpus", "--sim-model", "--work-per-step"}) {
      if (cmd.count(flag) > 0) usage(fmt::format("{} applies to --gpu-backend sim only", flag));
    }
  }
  if (f.dry_run && f.allow_setting_changes) {
    usage("--dry-run and --allow-setting-changes contradict each other; choose one");
  }
  CheckedFlags checked;
  checked.sim = sim;
  checked.pl_step = zeus::parse_double(f.pl_step, "--pl-step", 0.001, 10000.0);
  checked.work = zeus::parse_double(f.work_per_step, "--work-per-step", 1e-6, 1e9);
  (void)zeus::power_limit::make_power_limit_selector(
      f.selector);  // a bad spec fails before any work
  return checked;
}

zeus::device::DiscoveryOptions power_limit_discovery(const Flags& f, bool sim,
                                                     zeus::ManualClock& manual_clock) {
  zeus::device::DiscoveryOptions discovery;
  discovery.gpu_backend = f.gpu_backend;
  discovery.cpus = false;
  if (sim) {
    discovery.clock = &manual_clock;
    discovery.sim_gpus = f.sim_gpus;
    if (!f.sim_model.empty()) discovery.sim_model_path = f.sim_model;
  }
  return discovery;
}

std::vector<zeus::device::SimGpu*> simulated_gpus(const zeus::device::DeviceInventory& devices) {
  std::vector<zeus::device::SimGpu*> sims;
  for (const auto& g : devices.gpus) {
    if (auto* s = dynamic_cast<zeus::device::SimGpu*>(g.get())) sims.push_back(s);
  }
  return sims;
}

zeus::monitor::EnergyMonitorOptions power_limit_monitor_options(const Flags& f, bool simulated,
                                                                zeus::ManualClock& manual_clock) {
  zeus::monitor::EnergyMonitorOptions monitor_options;
  monitor_options.cpu_indices = std::vector<int>{};
  if (!f.gpus.empty())
    monitor_options.gpu_indices = zeus::parse_int_list(f.gpus, "--gpus", 0, 4095);
  if (simulated) monitor_options.clock = &manual_clock;
  return monitor_options;
}

zeus::power_limit::GlobalPowerLimitOptimizerOptions optimizer_options(const Flags& f, int gpus,
                                                                      double pl_step,
                                                                      bool dry_run) {
  zeus::power_limit::GlobalPowerLimitOptimizerOptions options;
  options.selector = zeus::power_limit::make_power_limit_selector(
      zeus::power_limit::selector_spec_for_gpus(f.selector, gpus));
  options.wait_steps = f.wait_steps;
  options.warmup_steps = f.warmup_steps;
  options.profile_steps = f.profile_steps;
  options.pl_step = zeus::Watts(pl_step);
  options.profile_path = f.profile_path;
  options.dry_run = dry_run;
  options.observer_mode = f.observe;
  return options;
}

// One step of the workload: simulated work on the simulated GPUs, or one run
// of the user's command.
void run_workload_step(const Flags& f, bool simulated,
                       const std::vector<zeus::device::SimGpu*>& sims,
                       zeus::ManualClock& manual_clock, double work) {
  if (simulated) {
    zeus::device::run_data_parallel_step(sims, manual_clock, work);
    return;
  }
  const int code = zeus::run_forwarding_signals(f.command);
  if (code != 0) {
    zeus::throw_error(zeus::ErrorCode::kFailedPrecondition,
                      fmt::format("the workload '{}' failed with exit code {}; the GPUs' "
                                  "settings were restored",
                                  zeus::printable(f.command[0]), code));
  }
}

// What the report shows besides the optimizer's own state.
struct ProfileRun {
  std::string backend;
  std::string gpu_name;
  int gpus = 0;
  bool simulated = false;
  bool dry_run = false;
  bool profile_loaded = false;
  int steps = 0;
  double elapsed = 0;
  Milliwatts maximum{0};
  Milliwatts chosen{0};
  std::vector<zeus::power_limit::SelectorChoice> choices;
  std::optional<zeus::power_limit::PowerLimitSaving> saving;
};

void print_power_limit_json(const Flags& f, const ProfileRun& r,
                            const zeus::power_limit::GlobalPowerLimitOptimizer& optimizer) {
  nlohmann::ordered_json out;
  out["backend"] = r.backend;
  out["gpus"] = r.gpus;
  out["gpu_name"] = r.gpu_name;
  out["dry_run"] = r.dry_run;
  out["observe"] = f.observe;
  out["profile_loaded"] = r.profile_loaded;
  out["selector"] = optimizer.selector().name();
  out["chosen_power_limit_w"] = watts(r.chosen);
  out["applied_power_limit_w"] = watts(optimizer.applied_power_limit());
  out["max_power_limit_w"] = watts(r.maximum);
  out["profile_steps"] = f.profile_steps;
  out["measurements"] = nlohmann::ordered_json::array();
  for (const auto& m : optimizer.measurements())
    out["measurements"].push_back(zeus::power_limit::to_json(m));
  out["selectors"] = nlohmann::ordered_json::array();
  for (const auto& c : r.choices) out["selectors"].push_back(zeus::power_limit::to_json(c));
  out["steps"] = r.steps;
  out["elapsed_s"] = r.elapsed;
  std::cout << out.dump(2) << "\n";
}

void print_power_limit_tables(const Flags& f, const ProfileRun& r,
                              const zeus::power_limit::GlobalPowerLimitOptimizer& optimizer) {
  const auto& ms = optimizer.measurements();
  fmt::print("Power-limit profile of {} x {} ({} backend{}{})\n", r.gpus, r.gpu_name, r.backend,
             r.dry_run ? ", dry run" : "", f.observe ? ", observer mode" : "");
  if (r.profile_loaded) {
    fmt::print("Profile loaded from {}: no profiling this run.\n", f.profile_path);
  } else {
    fmt::print("Profiled {} limits x {} steps ({} warm-up steps each) in {} steps, {:.1f} {} s.\n",
               ms.size(), f.profile_steps, f.warmup_steps, r.steps, r.elapsed,
               r.simulated ? "simulated" : "wall-clock");
  }
  if (r.dry_run) {
    fmt::print(
        "Dry run: every candidate ran at the GPUs' current limit, so differences below "
        "are run-to-run variation.\n");
  }
  fmt::print("\n{:>10} {:>10} {:>12} {:>10} {:>12}\n", "limit (W)", "time (s)", "energy (J)",
             "avg W", "vs max E");
  for (const auto& m : ms) {
    const auto cmp = zeus::power_limit::compare_limits(ms, m.power_limit, r.maximum);
    const auto saved = cmp ? cmp->energy_saving_fraction() : std::nullopt;
    fmt::print("{:>10g} {:>10.3f} {:>12.1f} {:>10.1f} {:>12}\n", watts(m.power_limit),
               m.time.count(), m.energy.value(), (m.energy / m.time).value(),
               percent(saved ? std::optional(-*saved) : std::nullopt, /*sign=*/true));
  }
  fmt::print("\n{:<34} {:>10} {:>14} {:>12}\n", "selector", "limit (W)", "energy saved",
             "time change");
  for (const auto& c : r.choices) {
    fmt::print("{:<34} {:>10g} {:>14} {:>12}\n", c.name, watts(c.power_limit),
               percent(c.saving ? c.saving->energy_saving_fraction() : std::nullopt, false),
               percent(c.saving ? c.saving->time_change_fraction() : std::nullopt, true));
  }
  fmt::print("\nChosen ({}): {:g} W", optimizer.selector().name(), watts(r.chosen));
  if (r.saving) {
    fmt::print(", {} less energy and {} time than the maximum {:g} W",
               percent(r.saving->energy_saving_fraction(), false),
               percent(r.saving->time_change_fraction(), true), watts(r.saving->maximum));
  }
  fmt::print(".\n");
  if (f.observe) {
    fmt::print("Observer mode: the GPUs stay at {:g} W.\n", watts(optimizer.applied_power_limit()));
  } else if (r.dry_run) {
    fmt::print("Dry run: no setting was changed.\n");
  }
}

void run(const Flags& f, const CLI::App& cmd) {
  if (!f.verbose && std::getenv("ZEUS_LOG_LEVEL") == nullptr) {
    zeus::log::set_level(zeus::log::Level::kWarn);
  }
  const CheckedFlags checked = check_power_limit_flags(f, cmd);

  zeus::ManualClock manual_clock;
  const zeus::device::DeviceInventory devices =
      zeus::device::discover_devices(power_limit_discovery(f, checked.sim, manual_clock));
  zeus::cli::require_gpus(devices, f.gpu_backend);
  ProfileRun r;
  r.backend = devices.gpu_backend;
  r.simulated = devices.gpu_backend == "sim";
  r.dry_run = zeus::cli::settings_dry_run(devices, f.dry_run, f.allow_setting_changes);
  if (r.simulated && f.allow_setting_changes) {
    fmt::print(stderr, "zeus: note: --allow-setting-changes: simulated GPUs are always changed\n");
  }
  const std::vector<zeus::device::SimGpu*> sims = simulated_gpus(devices);

  zeus::monitor::EnergyMonitor monitor(devices,
                                       power_limit_monitor_options(f, r.simulated, manual_clock));
  r.gpus = static_cast<int>(monitor.gpu_indices().size());
  zeus::power_limit::GlobalPowerLimitOptimizer optimizer(
      monitor, optimizer_options(f, r.gpus, checked.pl_step, r.dry_run));
  r.profile_loaded = optimizer.done();

  zeus::Clock& clock = monitor.clock();
  const zeus::Seconds start = clock.now();
  if (!r.profile_loaded) {
    r.steps = zeus::power_limit::run_until_profiled(optimizer, f.epochs, f.steps_per_epoch, [&] {
      run_workload_step(f, r.simulated, sims, manual_clock, checked.work);
    });
  }
  r.elapsed = (clock.now() - start).count();

  r.maximum = optimizer.candidate_limits().front();
  r.choices = zeus::power_limit::compare_selectors(optimizer.measurements(), r.maximum, r.gpus,
                                                   {f.selector});
  r.chosen = *optimizer.optimal_power_limit();
  r.saving = optimizer.saving();
  r.gpu_name = zeus::printable(devices.gpus[0]->name());

  if (f.json) {
    print_power_limit_json(f, r, optimizer);
  } else {
    print_power_limit_tables(f, r, optimizer);
  }
  if (!optimizer.profile_save_error().empty()) {
    // The results above reached stdout; the lost file is still a failure.
    zeus::throw_error(zeus::ErrorCode::kIo, optimizer.profile_save_error());
  }
}

void setup(CLI::App& root) {
  auto f = std::make_shared<Flags>();
  auto* cmd = root.add_subcommand(
      "power-limit",
      "Profile a workload's GPU power limits (Zeus GlobalPowerLimitOptimizer) and report the "
      "time and energy per limit and each selector's choice");
  cmd->add_option("--selector", f->selector,
                  "time | energy | zeus-cost:ETA[:WORLD] | max-slowdown:FACTOR")
      ->capture_default_str();
  cmd->add_option("--gpu-backend", f->gpu_backend,
                  "sim (simulated steps), nvml or auto (real GPUs: the workload after --)")
      ->check(CLI::IsMember({"sim", "nvml", "auto"}))
      ->capture_default_str();
  cmd->add_flag("--allow-setting-changes", f->allow_setting_changes,
                "real GPUs: let the optimizer set power limits (needs CAP_SYS_ADMIN); without it "
                "real GPUs are only measured (dry run)");
  cmd->add_flag("--dry-run", f->dry_run, "never change a GPU setting; report the would-be choice");
  cmd->add_flag("--observe", f->observe,
                "observer mode: profile, then stay at the maximum limit and report the choice");
  cmd->add_flag("--json", f->json, "one JSON object instead of tables");
  cmd->add_option("--gpus", f->gpus, "GPU indices to profile together (default: all)");
  cmd->add_option("--sim-gpus", f->sim_gpus, "number of simulated GPUs")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--sim-model", f->sim_model, "JSON model of the simulated GPUs");
  cmd->add_option("--work-per-step", f->work_per_step, "simulated work units per step")
      ->capture_default_str();
  cmd->add_option("--profile-path", f->profile_path,
                  "JSON profile: applied at once if it exists, written when profiling ends");
  cmd->add_option("--epochs", f->epochs, "most epochs to run")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--steps-per-epoch", f->steps_per_epoch)
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--wait-steps", f->wait_steps, "steps before profiling starts")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup-steps", f->warmup_steps, "unmeasured steps per limit")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--profile-steps", f->profile_steps, "measured steps per limit")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--pl-step", f->pl_step, "watts between candidate limits")->capture_default_str();
  cmd->add_flag("--verbose", f->verbose, "show the optimizer's log (also ZEUS_LOG_LEVEL)");
  cmd->add_option("command", f->command,
                  "real GPUs: the workload after `--`; one run of it is one step");
  cmd->footer(
      "Simulated GPUs (the default) profile in well under a second. Real GPUs are never changed "
      "without --allow-setting-changes; every changed setting is restored on exit, error and "
      "SIGINT/SIGTERM.\n"
      "Examples:\n"
      "  zeus power-limit --sim-gpus 2 --selector max-slowdown:1.05\n"
      "  zeus power-limit --gpu-backend nvml --warmup-steps 1 --profile-steps 3 -- ./step.sh");
  cmd->callback([f, cmd] { run(*f, *cmd); });
}

const bool registered = zeus::cli::register_command(25, &setup);

}  // namespace
}  // namespace zeus::cli::power_limit_command
