// The background power sampler's cost: 8 GPUs sampled every 1 ms for 2 s of
// wall time while the benchmark thread sleeps. Reports the process's CPU time
// as a share of one core (goal < 2%) and the achieved sampling rate.
//   build/bin/bench_power_monitor
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "bench_support.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/power_monitor.h"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void sample_for_two_seconds(benchmark::State& state, const zeus::device::DeviceInventory& devices) {
  std::vector<int> indices;
  for (std::size_t i = 0; i < devices.gpus.size(); ++i) indices.push_back(static_cast<int>(i));
  for (auto _ : state) {
    zeus::monitor::PowerMonitorOptions options;
    options.interval = zeus::Seconds(0.001);
    const double cpu0 = cpu_seconds();
    const auto wall0 = std::chrono::steady_clock::now();
    zeus::monitor::PowerMonitor monitor(devices.gpus, indices, {}, {}, options);
    std::this_thread::sleep_for(
        zeus::bench::full_or_smoke(std::chrono::milliseconds(2000), std::chrono::milliseconds(50)));
    monitor.stop();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const double cpu = cpu_seconds() - cpu0;
    state.SetIterationTime(wall);
    state.counters["cpu_share_percent"] = 100.0 * cpu / wall;
    state.counters["gpus"] = static_cast<double>(devices.gpus.size());
  }
}

void BM_PowerMonitorSim(benchmark::State& state) {
  sample_for_two_seconds(state, zeus::bench::sim_gpus(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_PowerMonitorSim)
    ->Arg(8)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_PowerMonitorFakeNvml(benchmark::State& state) {
  zeus::testing::FakeNvml fake;
  sample_for_two_seconds(state,
                         zeus::bench::fake_nvml_gpus(fake, static_cast<int>(state.range(0))));
}
BENCHMARK(BM_PowerMonitorFakeNvml)
    ->Arg(8)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The floor: a thread that only wakes every 1 ms (condition variable with a
// deadline, as the sampler waits) and does nothing. On a VM each wake-up has a
// fixed kernel cost; the sampler's own share is the difference to this.
void BM_EmptyTimerLoop1ms(benchmark::State& state) {
  for (auto _ : state) {
    std::mutex m;
    std::condition_variable cv;
    bool stop = false;
    const double cpu0 = cpu_seconds();
    const auto wall0 = std::chrono::steady_clock::now();
    std::thread t([&] {
      auto next = std::chrono::steady_clock::now();
      std::unique_lock lock(m);
      while (!stop) {
        next += std::chrono::milliseconds(1);
        cv.wait_until(lock, next, [&] { return stop; });
      }
    });
    std::this_thread::sleep_for(
        zeus::bench::full_or_smoke(std::chrono::milliseconds(2000), std::chrono::milliseconds(50)));
    {
      std::lock_guard lock(m);
      stop = true;
    }
    cv.notify_all();
    t.join();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    state.SetIterationTime(wall);
    state.counters["cpu_share_percent"] = 100.0 * (cpu_seconds() - cpu0) / wall;
  }
}
BENCHMARK(BM_EmptyTimerLoop1ms)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// One sampling round (what the thread does every interval), without the wake-ups.
void BM_SampleNowSim(benchmark::State& state) {
  const auto devices = zeus::bench::sim_gpus(static_cast<int>(state.range(0)));
  std::vector<int> indices;
  for (std::size_t i = 0; i < devices.gpus.size(); ++i) indices.push_back(static_cast<int>(i));
  zeus::monitor::PowerMonitorOptions po;
  po.interval = zeus::Seconds(0.001);
  po.start_thread = false;
  zeus::monitor::PowerMonitor monitor(devices.gpus, indices, {}, {}, po);
  for (auto _ : state) monitor.sample_now();
}
BENCHMARK(BM_SampleNowSim)->Arg(8);

// One sampling round on the fake NVML, 8 GPUs, one domain (device_instant) or
// three (device_instant, device_average, memory_average): the round's own
// work beside the wake-up (NVML reads, recording), the part this library
// controls. With three domains a GPU is one nvmlDeviceGetFieldValues call.
void BM_SampleNowFakeNvml(benchmark::State& state) {
  zeus::testing::FakeNvml fake;
  const auto devices = zeus::bench::fake_nvml_gpus(fake, static_cast<int>(state.range(0)));
  std::vector<int> indices;
  for (std::size_t i = 0; i < devices.gpus.size(); ++i) indices.push_back(static_cast<int>(i));
  zeus::monitor::PowerMonitorOptions po;
  po.interval = zeus::Seconds(0.01);
  po.start_thread = false;
  po.domains = {zeus::device::PowerDomain::kDeviceInstant};
  if (state.range(1) == 3) {
    po.domains.push_back(zeus::device::PowerDomain::kDeviceAverage);
    po.domains.push_back(zeus::device::PowerDomain::kMemoryAverage);
  }
  zeus::monitor::PowerMonitor monitor(devices.gpus, indices, {}, {}, po);
  for (auto _ : state) monitor.sample_now();
  state.counters["domains"] = static_cast<double>(state.range(1));
}
BENCHMARK(BM_SampleNowFakeNvml)->Args({8, 1})->Args({8, 3});

}  // namespace

ZEUS_QUIET_BENCHMARK_MAIN()
