// The GlobalPowerLimitOptimizer inside a training loop: the loop calls the
// optimizer's hooks around every step, the optimizer profiles each candidate
// power limit during the first steps and then keeps the one its selector
// picks. This trains on simulated GPUs under a ManualClock, so the whole run
// takes well under a second. `zeus power-limit` is the command-line front end
// of the same optimizer (real GPUs, dry runs, tables and JSON).
//
//   example_power_limit [--selector zeus-cost:0.5] [--gpus 2]
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/power_limit_report.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"

namespace {

int train(const std::string& selector_spec, int gpus) {
  // Simulated GPUs on a clock that moves only when a step runs.
  zeus::ManualClock clock;
  zeus::device::DiscoveryOptions discovery;
  discovery.gpu_backend = "sim";
  discovery.sim_gpus = gpus;
  discovery.clock = &clock;
  discovery.cpus = false;
  const zeus::device::DeviceInventory devices = zeus::device::discover_devices(discovery);
  std::vector<zeus::device::SimGpu*> sims;
  for (const auto& g : devices.gpus) sims.push_back(dynamic_cast<zeus::device::SimGpu*>(g.get()));

  zeus::monitor::EnergyMonitorOptions monitor_options;
  monitor_options.clock = &clock;
  zeus::monitor::EnergyMonitor monitor(devices, monitor_options);

  zeus::power_limit::GlobalPowerLimitOptimizerOptions options;
  options.selector = zeus::power_limit::make_power_limit_selector(
      zeus::power_limit::selector_spec_for_gpus(selector_spec, gpus));
  zeus::power_limit::GlobalPowerLimitOptimizer optimizer(monitor, options);

  // The training loop: 5 epochs of 200 steps; a step is 50 units of work on
  // every GPU at once (data parallel).
  optimizer.on_train_begin();
  for (int epoch = 0; epoch < 5; ++epoch) {
    optimizer.on_epoch_begin();
    for (int step = 0; step < 200; ++step) {
      optimizer.on_step_begin();
      zeus::device::run_data_parallel_step(sims, clock, 50.0);
      optimizer.on_step_end();
    }
    optimizer.on_epoch_end();
  }
  optimizer.on_train_end();

  const auto chosen = optimizer.optimal_power_limit();
  if (!chosen) {
    zeus::throw_error(zeus::ErrorCode::kFailedPrecondition, "profiling did not finish");
  }
  fmt::print("{} chose {:g} W for {} simulated GPU(s)", optimizer.selector().name(),
             zeus::to_watts(*chosen).value(), gpus);
  const auto saving = optimizer.saving();
  const auto energy = saving ? saving->energy_saving_fraction() : std::nullopt;
  if (energy) fmt::print(", saving {:.1f}% energy against the maximum limit", 100.0 * *energy);
  fmt::print(".\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Trains on simulated GPUs with the Zeus GlobalPowerLimitOptimizer"};
  std::string selector = "zeus-cost:0.5";
  int gpus = 1;
  app.add_option("--selector", selector, "time | energy | zeus-cost:ETA | max-slowdown:FACTOR")
      ->capture_default_str();
  app.add_option("--gpus", gpus, "simulated GPUs")->check(CLI::Range(1, 64))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : zeus::kExitUsage;
  }
  try {
    return train(selector, gpus);
  } catch (const zeus::Error& e) {
    fmt::print(stderr, "example_power_limit: error: {}\n", e.what());
    return zeus::exit_code_for(e.code());
  }
}
