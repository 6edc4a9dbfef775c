// Cost of the attribution ledger (docs/attribution.md). Goal: one ledger
// step for 8 GPUs × 64 processes (the split of every GPU's interval and its
// booking) <= 50 us. Also the pure split of a GPU's samples, and zeusd's
// rendering of the ledger's families for a scrape.
//   build/bin/bench_attribution
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_support.h"

#include "zeus/monitor/attribution/gpu_split.h"
#include "zeus/monitor/attribution/ledger.h"

namespace {

using namespace zeus::attribution;

WorkloadLabels labels(int i) {
  WorkloadLabels l;
  l.cgroup = "/kubepods/pod" + std::to_string(i / 4) + "/container" + std::to_string(i);
  return l;
}

// One poll of `gpus` GPUs with `processes` processes each weighing in on
// every GPU: the steady state (no new consumer), as zeusd runs it.
void BM_LedgerStep(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const int processes = static_cast<int>(state.range(1));
  Ledger ledger;
  std::vector<DeviceIndex> devices;
  for (int g = 0; g < gpus; ++g) devices.push_back(ledger.add_device("GPU"));
  std::vector<Use> uses;
  for (int p = 0; p < processes; ++p) {
    const auto w = ledger.workload(labels(p), 0);
    uses.push_back({ledger.process(static_cast<std::uint32_t>(1000 + p), 7, "python", w, 0),
                    kNoIndex, 10.0 + p});
  }
  std::int64_t counter = 1'000'000;
  double now = 0;
  for (int g = 0; g < gpus; ++g) {
    ledger.record({devices[g], zeus::Millijoules(counter), zeus::Millijoules(0), Method::kNone, {}},
                  now);
  }
  for (auto _ : state) {
    now += 1;
    counter += 300'000;
    for (int g = 0; g < gpus; ++g) {
      ledger.record({devices[g], zeus::Millijoules(counter), zeus::Millijoules(60'000),
                     Method::kProcessUtilization, uses},
                    now);
    }
    ledger.expire(now);
  }
  state.counters["uses"] = static_cast<double>(gpus * processes);
}
BENCHMARK(BM_LedgerStep)->Args({1, 8})->Args({8, 64});

// The whole step the goal is about: every GPU's second of samples (six per
// process) into weights, then booked.
void BM_SplitAndBook(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const int processes = static_cast<int>(state.range(1));
  Ledger ledger;
  std::vector<DeviceIndex> devices;
  for (int g = 0; g < gpus; ++g) devices.push_back(ledger.add_device("GPU"));
  std::vector<ProcessIndex> index_of_pid(static_cast<std::size_t>(processes));
  std::vector<zeus::device::GpuProcessSample> samples;
  for (int p = 0; p < processes; ++p) {
    const auto w = ledger.workload(labels(p), 0);
    index_of_pid[static_cast<std::size_t>(p)] =
        ledger.process(static_cast<std::uint32_t>(p), 7, "python", w, 0);
    for (int k = 0; k < 6; ++k) {
      samples.push_back({static_cast<std::uint32_t>(p), static_cast<std::uint64_t>(k),
                         static_cast<unsigned>(1 + p % 99), 3});
    }
  }
  std::int64_t counter = 1'000'000;
  double now = 0;
  for (int g = 0; g < gpus; ++g) {
    ledger.record({devices[g], zeus::Millijoules(counter), zeus::Millijoules(0), Method::kNone, {}},
                  now);
  }
  std::vector<Use> uses;
  for (auto _ : state) {
    now += 1;
    counter += 300'000;
    for (int g = 0; g < gpus; ++g) {
      const GpuSplit split = split_from_samples(samples);
      uses.clear();
      for (const auto& w : split.weights) uses.push_back({index_of_pid[w.pid], kNoIndex, w.weight});
      ledger.record(
          {devices[g], zeus::Millijoules(counter), zeus::Millijoules(60'000), split.method, uses},
          now);
    }
    ledger.expire(now);
  }
}
BENCHMARK(BM_SplitAndBook)->Args({1, 8})->Args({8, 64});

// The samples of one GPU's second (six per process) into weights.
void BM_SplitFromSamples(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  std::vector<zeus::device::GpuProcessSample> samples;
  for (int k = 0; k < 6; ++k) {
    for (int p = 0; p < processes; ++p) {
      samples.push_back({static_cast<std::uint32_t>(1000 + p), static_cast<std::uint64_t>(k),
                         static_cast<unsigned>(p % 100), 0});
    }
  }
  for (auto _ : state) {
    auto split = split_from_samples(samples);
    benchmark::DoNotOptimize(split);
  }
}
BENCHMARK(BM_SplitFromSamples)->Arg(8)->Arg(64);

}  // namespace
ZEUS_QUIET_BENCHMARK_MAIN()
