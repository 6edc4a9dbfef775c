// A training loop with the GlobalPowerLimitOptimizer: profiles every candidate
// power limit during the first steps, then keeps the one the selector picks.
// By default it trains on simulated GPUs under a ManualClock, so a whole run
// takes well under a second. With a real GPU backend it never changes a
// setting unless --allow-setting-changes is given (dry run: measure only).
//
//   example_power_limit [--selector zeus-cost:0.5] [--gpus 2] [--json]
//   example_power_limit --gpu-backend nvml            # read-only, dry run
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit_selector.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace {

// A fraction as a percentage; "n/a" when it is not a number (a counter that
// never moved, as on a fake or idle GPU, makes the reference energy 0).
std::string percent(double fraction, bool sign) {
  if (!std::isfinite(fraction)) return "n/a";
  return sign ? fmt::format("{:+.1f}%", 100.0 * fraction)
              : fmt::format("{:.1f}%", 100.0 * fraction);
}

struct Args {
  std::string selector = "zeus-cost:0.5";
  std::string profile_path;
  bool dry_run = false;
  bool observe = false;
  bool json = false;
  std::string gpu_backend = "sim";
  bool allow_setting_changes = false;
  int gpus = 1;
  std::string sim_model;
  int epochs = 5;
  int steps_per_epoch = 200;
  int wait_steps = 1;
  int warmup_steps = 10;
  int profile_steps = 40;
  double pl_step_w = 25.0;
  double work_per_step = 50.0;
  double step_seconds = 0.05;
  bool verbose = false;
  bool steps_given = false;  // --warmup-steps/--profile-steps/--pl-step on the command line
};

double watts(zeus::Milliwatts mw) { return zeus::to_watts(mw).value(); }

// "zeus-cost:ETA" without a world size gets the number of GPUs whose energy the
// measurements sum, so MaxPower is right for several GPUs.
std::string with_world_size(const std::string& spec, int gpus) {
  if (!spec.starts_with("zeus-cost:") || gpus <= 1) return spec;
  if (spec.find(':', 10) != std::string::npos) return spec;
  return fmt::format("{}:{}", spec, gpus);
}

struct SelectorResult {
  std::string spec;
  std::string name;
  zeus::Milliwatts chosen;
  const zeus::PowerLimitMeasurement* at_chosen;
};

int run(const Args& args) {
  if (!args.verbose && std::getenv("ZEUS_LOG_LEVEL") == nullptr) {
    zeus::log::set_level(zeus::log::Level::kWarn);
  }
  const std::string user_spec = with_world_size(args.selector, args.gpus);
  std::shared_ptr<const zeus::PowerLimitSelector> selector =
      zeus::make_power_limit_selector(user_spec);

  zeus::ManualClock manual_clock;
  zeus::DiscoveryOptions discovery;
  discovery.gpu_backend = args.gpu_backend;
  discovery.cpus = false;
  const bool simulated_request = args.gpu_backend == "sim";
  if (simulated_request) {
    discovery.clock = &manual_clock;
    discovery.sim_gpus = args.gpus;
    if (!args.sim_model.empty()) discovery.sim_model_path = args.sim_model;
  }
  const zeus::DeviceInventory devices = zeus::discover_devices(discovery);
  if (devices.gpus.empty()) {
    std::string notes;
    for (const auto& n : devices.notes) notes += "; " + n;
    zeus::throw_error(zeus::ErrorCode::kNotFound,
                      fmt::format("no GPUs found with --gpu-backend {}{}; use --gpu-backend sim "
                                  "for simulated GPUs",
                                  args.gpu_backend, notes));
  }
  const bool simulated = devices.gpu_backend == "sim";
  bool dry_run = args.dry_run;
  if (!simulated && !args.allow_setting_changes && !dry_run) {
    dry_run = true;
    std::cerr << "note: real GPUs (" << devices.gpu_backend
              << "): running in dry-run mode, no setting will change; pass "
                 "--allow-setting-changes to let the optimizer set power limits\n";
  }
  int warmup_steps = args.warmup_steps, profile_steps = args.profile_steps;
  double pl_step_w = args.pl_step_w;
  if (!simulated && !args.steps_given) {
    // Real steps take real time: a shorter profile by default (about 7 s).
    warmup_steps = 2;
    profile_steps = 10;
    pl_step_w = 50.0;
  }
  std::vector<zeus::SimGpu*> sims;
  for (const auto& g : devices.gpus) {
    if (auto* s = dynamic_cast<zeus::SimGpu*>(g.get())) sims.push_back(s);
  }

  zeus::EnergyMonitorOptions monitor_options;
  monitor_options.cpu_indices = std::vector<int>{};
  if (simulated) monitor_options.clock = &manual_clock;
  zeus::EnergyMonitor monitor(devices, monitor_options);
  zeus::Clock& clock = monitor.clock();

  zeus::GlobalPowerLimitOptimizerOptions options;
  options.selector = selector;
  options.wait_steps = args.wait_steps;
  options.warmup_steps = warmup_steps;
  options.profile_steps = profile_steps;
  options.pl_step = zeus::Watts(pl_step_w);
  options.profile_path = args.profile_path;
  options.dry_run = dry_run;
  options.observer_mode = args.observe;
  zeus::GlobalPowerLimitOptimizer optimizer(monitor, options);
  const bool profile_loaded = optimizer.done();

  // The training loop. A step on simulated GPUs: all GPUs run `work` units
  // concurrently (data parallel), so time moves by the slowest GPU's time.
  // On real GPUs this example has no kernels to run; a step just waits.
  const zeus::Seconds start = clock.now();
  int steps = 0;
  optimizer.on_train_begin();
  for (int epoch = 0; epoch < args.epochs && !optimizer.done(); ++epoch) {
    optimizer.on_epoch_begin();
    for (int step = 0; step < args.steps_per_epoch && !optimizer.done(); ++step) {
      optimizer.on_step_begin();
      if (!sims.empty()) {
        double rate = sims[0]->throughput();
        for (auto* s : sims) rate = std::min(rate, s->throughput());
        manual_clock.advance(zeus::Seconds(args.work_per_step / rate));
      } else {
        clock.sleep_for(zeus::Seconds(args.step_seconds));
      }
      optimizer.on_step_end();
      ++steps;
    }
    optimizer.on_epoch_end();
  }
  optimizer.on_train_end();
  const double elapsed = (clock.now() - start).count();
  if (!optimizer.done()) {
    zeus::throw_error(
        zeus::ErrorCode::kFailedPrecondition,
        fmt::format("profiling did not finish in {} epochs of {} steps ({} "
                    "candidate limits x {} steps each); raise --epochs",
                    args.epochs, args.steps_per_epoch, optimizer.candidate_limits().size(),
                    warmup_steps + profile_steps));
  }

  // Every selector from the same measurements.
  const auto& ms = optimizer.measurements();
  auto find = [&](zeus::Milliwatts l) -> const zeus::PowerLimitMeasurement* {
    for (const auto& m : ms) {
      if (m.power_limit == l) return &m;
    }
    return nullptr;
  };
  const zeus::PowerLimitMeasurement* at_max = find(optimizer.candidate_limits().front());
  std::vector<std::string> specs = {"time", "energy", with_world_size("zeus-cost:0.5", args.gpus),
                                    "max-slowdown:1.1"};
  if (std::find(specs.begin(), specs.end(), user_spec) == specs.end()) {
    specs.push_back(user_spec);
  }
  std::vector<SelectorResult> results;
  for (const auto& spec : specs) {
    const auto s = zeus::make_power_limit_selector(spec);
    const zeus::Milliwatts chosen = s->select(ms);
    results.push_back({spec, s->name(), chosen, find(chosen)});
  }
  const zeus::Milliwatts chosen = *optimizer.optimal_power_limit();
  const auto saving = optimizer.saving();

  if (args.json) {
    nlohmann::ordered_json out;
    out["backend"] = devices.gpu_backend;
    out["gpus"] = devices.gpus.size();
    out["gpu_name"] = devices.gpus[0]->name();
    out["dry_run"] = dry_run;
    out["observe"] = args.observe;
    out["profile_loaded"] = profile_loaded;
    out["selector"] = optimizer.selector().name();
    out["chosen_power_limit_w"] = watts(chosen);
    out["applied_power_limit_w"] = watts(optimizer.applied_power_limit());
    out["max_power_limit_w"] = watts(optimizer.candidate_limits().front());
    out["profile_steps"] = profile_steps;
    out["measurements"] = nlohmann::ordered_json::array();
    for (const auto& m : ms) {
      out["measurements"].push_back({{"power_limit_w", watts(m.power_limit)},
                                     {"energy_j", m.energy.value()},
                                     {"time_s", m.time.count()}});
    }
    out["selectors"] = nlohmann::ordered_json::array();
    for (const auto& r : results) {
      nlohmann::ordered_json item = {
          {"spec", r.spec}, {"name", r.name}, {"chosen_power_limit_w", watts(r.chosen)}};
      if (at_max != nullptr && r.at_chosen != nullptr) {
        item["energy_saving_fraction"] = 1.0 - r.at_chosen->energy / at_max->energy;
        item["time_change_fraction"] = r.at_chosen->time / at_max->time - 1.0;
      }
      out["selectors"].push_back(std::move(item));
    }
    out["steps"] = steps;
    out["elapsed_s"] = elapsed;
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  std::cout << fmt::format("Power-limit optimizer on {} x {} ({} backend{}{})\n",
                           devices.gpus.size(), devices.gpus[0]->name(), devices.gpu_backend,
                           dry_run ? ", dry run" : "", args.observe ? ", observer mode" : "");
  if (profile_loaded) {
    std::cout << fmt::format("Profile loaded from {}: no profiling this run.\n", args.profile_path);
  } else {
    std::cout << fmt::format(
        "Profiled {} limits x {} steps ({} warm-up steps each) in {} steps, "
        "{:.1f} {} s.\n",
        ms.size(), profile_steps, warmup_steps, steps, elapsed,
        simulated ? "simulated" : "wall-clock");
  }
  if (dry_run) {
    std::cout << "Dry run: every candidate ran at the GPUs' current limit, so differences below "
                 "are run-to-run variation.\n";
  }
  std::cout << fmt::format("\n{:>10} {:>10} {:>12} {:>10} {:>12}\n", "limit (W)", "time (s)",
                           "energy (J)", "avg W", "vs max E");
  for (const auto& m : ms) {
    const std::string vs =
        at_max != nullptr ? percent(m.energy / at_max->energy - 1.0, /*sign=*/true) : "-";
    std::cout << fmt::format("{:>10g} {:>10.3f} {:>12.1f} {:>10.1f} {:>12}\n", watts(m.power_limit),
                             m.time.count(), m.energy.value(), (m.energy / m.time).value(), vs);
  }
  std::cout << fmt::format("\n{:<34} {:>10} {:>14} {:>12}\n", "selector", "limit (W)",
                           "energy saved", "time change");
  for (const auto& r : results) {
    std::string e = "-", t = "-";
    if (at_max != nullptr && r.at_chosen != nullptr) {
      e = percent(1.0 - r.at_chosen->energy / at_max->energy, /*sign=*/false);
      t = percent(r.at_chosen->time / at_max->time - 1.0, /*sign=*/true);
    }
    std::cout << fmt::format("{:<34} {:>10g} {:>14} {:>12}\n", r.name, watts(r.chosen), e, t);
  }
  std::cout << fmt::format("\nChosen ({}): {:g} W", optimizer.selector().name(), watts(chosen));
  if (saving) {
    std::cout << fmt::format(", {} less energy and {} time than the maximum {:g} W",
                             percent(saving->energy_saving_fraction(), /*sign=*/false),
                             percent(saving->time_change_fraction(), /*sign=*/true),
                             watts(saving->maximum));
  }
  std::cout << ".\n";
  if (args.observe) {
    std::cout << fmt::format("Observer mode: the GPUs stay at {:g} W.\n",
                             watts(optimizer.applied_power_limit()));
  } else if (dry_run) {
    std::cout << "Dry run: no setting was changed.\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{
      "Trains a (simulated) model with the Zeus GlobalPowerLimitOptimizer and reports the time "
      "and energy per candidate power limit and the limit each selector chooses."};
  app.add_option("--selector", args.selector,
                 "time | energy | zeus-cost:ETA[:WORLD] | max-slowdown:FACTOR")
      ->capture_default_str();
  app.add_option("--profile-path", args.profile_path,
                 "JSON profile: applied at once if it exists, written when profiling ends");
  app.add_flag("--dry-run", args.dry_run, "never change a GPU setting; report the would-be choice");
  app.add_flag("--observe", args.observe,
               "observer mode: profile, then stay at the maximum limit and report the choice");
  app.add_flag("--json", args.json, "print one JSON object instead of tables");
  app.add_option("--gpu-backend", args.gpu_backend, "sim | nvml | auto")
      ->check(CLI::IsMember({"sim", "nvml", "auto"}))
      ->capture_default_str();
  app.add_flag("--allow-setting-changes", args.allow_setting_changes,
               "with a real GPU backend, let the optimizer set power limits (needs "
               "CAP_SYS_ADMIN); without it real GPUs run in dry-run mode");
  app.add_option("--gpus", args.gpus, "simulated GPUs")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--sim-model", args.sim_model, "JSON model file for the simulated GPUs");
  app.add_option("--epochs", args.epochs, "maximum epochs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--steps-per-epoch", args.steps_per_epoch)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--wait-steps", args.wait_steps)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--warmup-steps", args.warmup_steps,
                 "unmeasured steps per limit (real GPUs: 2 unless given)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--profile-steps", args.profile_steps,
                 "measured steps per limit (real GPUs: 10 unless given)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--pl-step", args.pl_step_w,
                 "watts between candidate limits (real GPUs: 50 unless given)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--work-per-step", args.work_per_step, "simulated work units per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--step-seconds", args.step_seconds, "length of a step on real GPUs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--verbose", args.verbose, "show the optimizer's log (also ZEUS_LOG_LEVEL)");
  CLI11_PARSE(app, argc, argv);
  args.steps_given =
      app.count("--warmup-steps") + app.count("--profile-steps") + app.count("--pl-step") > 0;
  try {
    return run(args);
  } catch (const zeus::Error& e) {
    std::cerr << "example_power_limit: error: " << e.what() << "\n";
    return zeus::exit_code_for(e.code());
  }
}
