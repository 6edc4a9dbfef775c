// Full evaluation matrix of the trace-driven simulator (4 GPUs x 6 workloads x
// {zeus, default, grid} x 10 seeds, eta 0.5, beta 2), with and without the
// trace loading. Run: build/bin/bench_simulator
#include <benchmark/benchmark.h>

#include "bench_smoke.h"
#include "zeus/sim/sweep.h"
#include "zeus/sim/trace.h"

namespace {

const std::string kTraces = std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces";

zeus::sim::SweepSpec full_matrix() {
  zeus::sim::SweepSpec s;
  s.gpus = zeus::sim::trace_gpus();
  s.workloads = zeus::sim::paper_workloads();
  s.seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  if (zeus::bench::smoke()) s.seeds = {1};  // the short version: one seed
  return s;
}

void BM_FullMatrixIncludingTraceLoad(benchmark::State& state) {
  const auto spec = full_matrix();
  for (auto _ : state) {
    const auto traces = zeus::sim::TraceSet::load(kTraces, spec.gpus);
    auto rows = zeus::sim::run_sweep(zeus::sim::sweep_traces(&traces, spec), spec,
                                     static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(rows);
  }
}
BENCHMARK(BM_FullMatrixIncludingTraceLoad)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_FullMatrixReplayOnly(benchmark::State& state) {
  const auto spec = full_matrix();
  const auto traces = zeus::sim::TraceSet::load(kTraces, spec.gpus);
  const auto work = zeus::sim::sweep_traces(&traces, spec);
  for (auto _ : state) {
    auto rows = zeus::sim::run_sweep(work, spec, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(rows);
  }
}
BENCHMARK(BM_FullMatrixReplayOnly)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_TraceLoad(benchmark::State& state) {
  for (auto _ : state) {
    auto t = zeus::sim::TraceSet::load(kTraces, zeus::sim::trace_gpus());
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_TraceLoad)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
