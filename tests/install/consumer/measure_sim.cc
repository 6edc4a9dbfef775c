// Measures a window of work on the simulated GPU through the installed
// library and prints its energy; exits 1 if the measurement is not plausible
// (a GPU that ran work used energy, and no more than its power cap allows).
#include <cstdio>
#include <exception>

#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/util/clock.h"

int main() {
  try {
    zeus::ManualClock clock;
    zeus::device::DiscoveryOptions options;
    options.gpu_backend = "sim";
    options.sim_gpus = 1;
    options.clock = &clock;
    options.cpus = false;
    const auto devices = zeus::device::discover_devices(options);
    auto* gpu = dynamic_cast<zeus::device::SimGpu*>(devices.gpus.at(0).get());
    if (gpu == nullptr) {
      std::fprintf(stderr, "consumer: GPU 0 is not the simulated GPU\n");
      return 1;
    }
    zeus::monitor::EnergyMonitorOptions monitor_options;
    monitor_options.clock = &clock;
    zeus::monitor::EnergyMonitor monitor(devices, monitor_options);
    monitor.begin_window("work");
    const zeus::Seconds busy = gpu->execute(50.0);
    const zeus::monitor::Measurement m = monitor.end_window("work");
    const double joules = m.total_gpu_energy().value();
    std::printf("consumer: %.3f s of simulated work, %.3f J on GPU 0\n", m.time.count(), joules);
    if (!(busy.count() > 0.0 && joules > 0.0 && joules <= 1000.0 * m.time.count())) {
      std::fprintf(stderr, "consumer: implausible measurement\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
