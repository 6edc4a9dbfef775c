// Shared by the benchmarks: device sets and a quiet main().
#pragma once

#include <benchmark/benchmark.h>

#include "bench_smoke.h"
#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/device/devices.h"
#include "zeus/util/log.h"

namespace zeus::bench {

// `count` simulated GPUs on the steady clock, no CPUs.
inline device::DeviceInventory sim_gpus(int count) {
  device::DiscoveryOptions options;
  options.gpu_backend = "sim";
  options.sim_gpus = count;
  options.cpus = false;
  return device::discover_devices(options);
}

// `count` GPUs of the fake NVML through the real NVML backend, no CPUs.
// `fake` must outlive the returned devices.
inline device::DeviceInventory fake_nvml_gpus(const testing::FakeNvml& fake, int count) {
  fake.reset();
  fake.set_device_count(static_cast<unsigned>(count));
  device::DiscoveryOptions options;
  options.gpu_backend = "nvml";
  options.nvml_library = fake.path();
  options.cpus = false;
  return device::discover_devices(options);
}

}  // namespace zeus::bench

// main() for benchmarks whose windows read static fake counters: those would
// warn about zero-energy windows, and the cost is what is measured here.
#define ZEUS_QUIET_BENCHMARK_MAIN()                                   \
  int main(int argc, char** argv) {                                   \
    zeus::log::set_level(zeus::log::Level::kError);                   \
    benchmark::Initialize(&argc, argv);                               \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1; \
    benchmark::RunSpecifiedBenchmarks();                              \
    benchmark::Shutdown();                                            \
    return 0;                                                         \
  }
