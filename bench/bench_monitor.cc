// Cost of one measurement window (begin_window + end_window): the hot path a
// training loop pays per step. Goals: <= 5 us for 1 GPU and <= 20 us for 8
// GPUs on the simulated backend; the fake-NVML variants run the real NVML
// backend (dlopen'ed fake library) end to end.
//   build/bin/bench_monitor
#include <benchmark/benchmark.h>

#include <memory>

#include "bench_support.h"
#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"

namespace {

void run_windows(benchmark::State& state, zeus::monitor::EnergyMonitor& monitor) {
  for (auto _ : state) {
    monitor.begin_window("step", /*sync=*/false);
    auto m = monitor.end_window("step", /*sync=*/false);
    benchmark::DoNotOptimize(m);
  }
  state.counters["gpus"] = static_cast<double>(monitor.gpu_indices().size());
}

void BM_WindowSim(benchmark::State& state) {
  zeus::monitor::EnergyMonitor monitor(zeus::bench::sim_gpus(static_cast<int>(state.range(0))));
  run_windows(state, monitor);
}
BENCHMARK(BM_WindowSim)->Arg(1)->Arg(8);

void BM_WindowFakeNvml(benchmark::State& state) {
  zeus::testing::FakeNvml fake;
  zeus::monitor::EnergyMonitor monitor(
      zeus::bench::fake_nvml_gpus(fake, static_cast<int>(state.range(0))));
  run_windows(state, monitor);
}
BENCHMARK(BM_WindowFakeNvml)->Arg(1)->Arg(8);

}  // namespace

ZEUS_QUIET_BENCHMARK_MAIN()
