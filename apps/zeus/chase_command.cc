// `zeus chase run`: the live Chase optimizer around a workload (thin adapter
// over ChaseController; docs/chase.md). Simulated GPUs run simulated steps on
// a simulated clock that starts at --sim-start; real GPUs run the workload
// command once per step on the system clock.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.h"
#include "gpu_job_checks.h"
#include "numeric_flags.h"
#include "output_checks.h"
#include "util/iso8601.h"
#include "util/parse.h"
#include "util/process.h"
#include "util/text.h"
#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit/carbon_aware/chase_controller.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_source.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"

namespace zeus::cli::chase_command {
namespace {

struct Flags {
  std::string signal, unit;
  double eta = 0.25;
  long long period = 0;
  std::string forecaster = "persistence";
  int refit_periods = 0;
  std::optional<double> signal_max;
  std::string gpu_backend = "sim";
  bool allow_setting_changes = false;
  bool dry_run = false;
  int sim_gpus = 1;
  std::string work_per_step = "50";
  std::string sim_start;
  long long steps = 1000;
  int wait_steps = 1, warmup_steps = 10, profile_steps = 40;
  std::string pl_step = "25";
  std::string decisions;
  bool verbose = false;
  std::vector<std::string> command;
};

[[noreturn]] void usage(const std::string& message) {
  zeus::throw_error(zeus::ErrorCode::kInvalidArgument, message);
}

void run(const Flags& f) {
  using namespace zeus;
  if (!f.verbose && std::getenv("ZEUS_LOG_LEVEL") == nullptr) log::set_level(log::Level::kWarn);
  const bool sim = f.gpu_backend == "sim";
  if (sim && !f.command.empty()) {
    usage("simulated GPUs run simulated steps; a workload command needs --gpu-backend nvml");
  }
  if (!sim && f.command.empty()) {
    usage("give the workload after `--`: one run of it is one step");
  }
  if (!sim && !f.sim_start.empty()) usage("--sim-start applies to --gpu-backend sim only");
  if (f.dry_run && f.allow_setting_changes) {
    usage("--dry-run and --allow-setting-changes contradict each other; choose one");
  }
  if (f.steps < 1 || f.steps > 100'000'000) usage("--steps must be in [1, 1e8]");
  const double work = parse_double(f.work_per_step, "--work-per-step", 1e-6, 1e12);
  const double pl_step = parse_double(f.pl_step, "--pl-step", 0.001, 10000.0);
  if (!f.decisions.empty()) check_output_path(f.decisions);

  carbon_aware::SignalCsvOptions csv;
  csv.unit = f.unit;
  carbon_aware::GridSignal signal = carbon_aware::read_signal_csv(f.signal, csv);
  const std::int64_t period = f.period > 0 ? f.period : signal.resolution_s();
  if (f.period < 0 || period % signal.resolution_s() != 0) {
    usage(fmt::format("--period {} s must be a positive multiple of {}'s resolution ({} s)",
                      f.period, printable(f.signal), signal.resolution_s()));
  }
  const std::int64_t start =
      f.sim_start.empty() ? signal.start_utc() + 86'400 : parse_iso8601(f.sim_start, "--sim-start");
  carbon_aware::GridSignalSource source(std::move(signal));

  ManualClock manual_clock;
  device::DiscoveryOptions discovery;
  discovery.gpu_backend = f.gpu_backend;
  discovery.cpus = false;
  if (sim) {
    discovery.clock = &manual_clock;
    discovery.sim_gpus = f.sim_gpus;
  }
  const device::DeviceInventory devices = device::discover_devices(discovery);
  cli::require_gpus(devices, f.gpu_backend);
  const bool simulated = devices.gpu_backend == "sim";
  const bool dry_run = cli::settings_dry_run(devices, f.dry_run, f.allow_setting_changes);
  std::vector<device::SimGpu*> sims;
  for (const auto& g : devices.gpus) {
    if (auto* s = dynamic_cast<device::SimGpu*>(g.get())) sims.push_back(s);
  }
  monitor::EnergyMonitorOptions mo;
  mo.cpu_indices = std::vector<int>{};
  if (simulated) mo.clock = &manual_clock;
  monitor::EnergyMonitor monitor(devices, mo);

  power_limit::GlobalPowerLimitOptimizerOptions o;
  o.wait_steps = f.wait_steps;
  o.warmup_steps = f.warmup_steps;
  o.profile_steps = f.profile_steps;
  o.pl_step = Watts(pl_step);
  o.dry_run = dry_run;
  power_limit::GlobalPowerLimitOptimizer optimizer(monitor, o);
  carbon_aware::ChaseControllerOptions co;
  co.eta = f.eta;
  co.period_s = period;
  co.history_s = std::max<std::int64_t>(86'400, period);
  co.signal_max = f.signal_max;
  co.forecaster = f.forecaster;
  co.refit_periods = f.refit_periods;
  if (simulated) {
    co.unix_now = [&] { return static_cast<double>(start) + manual_clock.now().count(); };
  }
  carbon_aware::ChaseController chase(optimizer, source, co);
  for (long long i = 0; i < f.steps; ++i) {
    chase.on_step_begin();
    if (simulated) {
      device::run_data_parallel_step(sims, manual_clock, work);
    } else {
      const int code = run_forwarding_signals(f.command);
      if (code != 0) {
        throw_error(ErrorCode::kFailedPrecondition,
                    fmt::format("the workload '{}' failed with exit code {}; the GPUs' settings "
                                "were restored",
                                printable(f.command[0]), code));
      }
    }
  }
  const std::string csv_text = chase.decisions_csv();
  if (!f.decisions.empty()) write_file_atomically(f.decisions, csv_text);
  std::cout << csv_text;
  cli::flush_stdout();
  std::fprintf(stderr,
               "zeus chase run: %lld steps, %zu decisions, %d period(s) without a signal%s\n",
               f.steps, chase.decisions().size(), chase.failed_periods(),
               optimizer.done() ? "" : "; profiling did not finish: raise --steps");
}

void setup(CLI::App& root) {
  auto* chase = root.add_subcommand(
      "chase",
      "The live carbon/price-aware power-limit optimizer (Chase); simulated: zeus "
      "simulate chase");
  chase->require_subcommand(1);
  auto f = std::make_shared<Flags>();
  auto* cmd = chase->add_subcommand(
      "run",
      "Profile the power limits as `zeus power-limit` does, then re-pick the limit every period "
      "from a grid signal (carbon intensity or price) forecast, for --steps steps; prints the "
      "decisions as CSV (period_start_utc,signal_seen,forecast,eta_eff,power_limit_w)");
  cmd->add_option("--signal", f->signal, "Signal CSV (see zeus simulate chase --help)")->required();
  cmd->add_option("--unit", f->unit, "The signal's unit when the file does not state it");
  cmd->add_option("--eta", f->eta, "Carbon (or cost) vs time, in [0, 1]")->default_val(0.25);
  cmd->add_option("--period", f->period, "Decision period in seconds (0: the signal's resolution)")
      ->default_val(0);
  cmd->add_option("--forecaster", f->forecaster, "persistence, linear or svr")
      ->default_val("persistence");
  cmd->add_option("--refit-periods", f->refit_periods,
                  "Refit the forecaster on the trailing 24 h every N periods (0: fit once)")
      ->default_val(0);
  cmd->add_option("--signal-max", f->signal_max,
                  "Fixed normaliser; default: the maximum over the 24 h before the first decision")
      ->check(zeus::cli::positive_number());
  cmd->add_option("--gpu-backend", f->gpu_backend, "sim (default), nvml, amd, auto")
      ->default_val("sim");
  cmd->add_flag("--allow-setting-changes", f->allow_setting_changes,
                "let the optimizer change real GPUs' power limits");
  cmd->add_flag("--dry-run", f->dry_run, "never change a GPU setting");
  cmd->add_option("--sim-gpus", f->sim_gpus, "number of simulated GPUs")->default_val(1);
  cmd->add_option("--work-per-step", f->work_per_step, "simulated work units per step")
      ->default_val("50");
  cmd->add_option(
      "--sim-start", f->sim_start,
      "UTC time the simulated clock starts at (default: a day after the signal's start)");
  cmd->add_option("--steps", f->steps, "steps to run")->default_val(1000);
  cmd->add_option("--wait-steps", f->wait_steps, "steps before profiling starts")->default_val(1);
  cmd->add_option("--warmup-steps", f->warmup_steps, "unmeasured steps per limit")->default_val(10);
  cmd->add_option("--profile-steps", f->profile_steps, "measured steps per limit")->default_val(40);
  cmd->add_option("--pl-step", f->pl_step, "watts between candidate limits")->default_val("25");
  cmd->add_option("--decisions", f->decisions, "also write the decisions CSV here (atomically)");
  cmd->add_flag("--verbose", f->verbose, "show the controller's log (also ZEUS_LOG_LEVEL)");
  cmd->add_option("command", f->command, "workload command (real GPUs), after --");
  cmd->callback([f] { run(*f); });
}

const bool registered = zeus::cli::register_command(42, &setup);

}  // namespace
}  // namespace zeus::cli::chase_command
