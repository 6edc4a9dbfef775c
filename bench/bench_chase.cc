// Chase (carbon/price-aware power limits, docs/chase.md): one period decision
// (forecast + argmin over the profiled limits), an SVR fit on 48 points (the
// released code's 24 h of 30-min data), and a full-year start sweep (ResNet-50
// on an A40 against the GB 2022 carbon year: 5 policies x 8,760 starts).
// Run: build/bin/bench_chase
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_smoke.h"
#include "zeus/optimizer/power_limit/carbon_aware/chase.h"
#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/sim/carbon_aware/sweep.h"
#include "zeus/sim/trace.h"

namespace {

const std::string kRoot = std::string(ZEUS_SOURCE_DIR);

// `n` limits from 300 W down in 5 W steps with a convex time/power shape.
std::vector<zeus::power_limit::PowerLimitMeasurement> profile(int n) {
  std::vector<zeus::power_limit::PowerLimitMeasurement> m;
  for (int i = 0; i < n; ++i) {
    const double w = 300.0 - 5.0 * i;
    const double t = 3700.0 * (1.0 + 0.00004 * i * i * i);
    m.push_back({zeus::Milliwatts(static_cast<std::int64_t>(w * 1000)), zeus::Joules(0.8 * w * t),
                 zeus::Seconds(t)});
  }
  return m;
}

// One decision as the controller makes it: forecast, then choose.
template <class F>
void decision(benchmark::State& state, F& forecaster) {
  const auto m = profile(static_cast<int>(state.range(0)));
  const zeus::carbon_aware::ChasePolicy policy(0.25, 750.0);
  std::int64_t slot = 1'704'067'200;
  double seen = 600.0;
  for (auto _ : state) {
    const double f = forecaster.predict(slot, seen);
    auto choice = policy.choose(m, f);
    benchmark::DoNotOptimize(choice);
    slot += 1800;
    seen = 500.0 + static_cast<double>(slot % 7) * 20.0;
  }
}

const zeus::carbon_aware::GridSignal& miso() {
  static const zeus::carbon_aware::GridSignal s = zeus::carbon_aware::read_signal_csv(
      kRoot + "/data/grid-signals/miso-carbon-intensity-2022-10-chase.csv");
  return s;
}

void BM_DecisionPersistence(benchmark::State& state) {
  zeus::carbon_aware::PersistenceForecaster f;
  decision(state, f);
}
BENCHMARK(BM_DecisionPersistence)->Arg(9)->Arg(50);

void BM_DecisionSvr(benchmark::State& state) {
  if (!zeus::carbon_aware::SvrForecaster::available()) {
    state.SkipWithError("built without libsvm");
    return;
  }
  zeus::carbon_aware::SvrForecaster f;
  f.fit(miso().values().subspan(12, 48), miso().sample_start(12), 1800);
  decision(state, f);
}
BENCHMARK(BM_DecisionSvr)->Arg(9)->Arg(50);

void BM_SvrFit48(benchmark::State& state) {
  if (!zeus::carbon_aware::SvrForecaster::available()) {
    state.SkipWithError("built without libsvm");
    return;
  }
  zeus::carbon_aware::SvrForecaster f;
  for (auto _ : state) {
    f.fit(miso().values().subspan(12, 48), miso().sample_start(12), 1800);
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_SvrFit48)->Unit(benchmark::kMicrosecond);

void BM_LinearFit48(benchmark::State& state) {
  zeus::carbon_aware::LinearForecaster f;
  for (auto _ : state) {
    f.fit(miso().values().subspan(12, 48), miso().sample_start(12), 1800);
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_LinearFit48)->Unit(benchmark::kMicrosecond);

// 1 workload x 5 policies x 8,760 hourly starts (the year wrapped, as
// `zeus simulate chase --wrap`), ResNet-50 batch 128 on the A40 for its
// median 32 epochs; range(0) threads.
void BM_FullYearSweep(benchmark::State& state) {
  using namespace zeus::sim;
  const auto signal = zeus::carbon_aware::read_signal_csv(
      kRoot + "/data/grid-signals/gb-carbon-intensity-2022-hourly.csv");
  const auto wrapped = signal.periodic_extension();
  const TraceSet traces = TraceSet::load(kRoot + "/data/zeus-traces", {"a40"});
  // The trace by value first: workload() returns a temporary, and a
  // reference into it (`traces.workload(...).batch(128)`, as this was) dangled
  // and crashed. WorkloadTrace::batch no longer compiles on a temporary.
  const WorkloadTrace trace = traces.workload("a40", find_workload("imagenet/resnet50"));
  const auto& b = trace.batch(128);
  carbon_aware::JobProfile p;
  for (const auto& x : b.limits)
    p.per_epoch.push_back({x.power_limit, x.energy_per_epoch, x.time_per_epoch});
  carbon_aware::ReplayOptions o;
  o.epochs = 32;
  const carbon_aware::Replayer rp(p, wrapped, o);
  std::vector<carbon_aware::Policy> policies;
  for (const char* s : {"max", "zeus-cost:0.25", "max-slowdown:1.05", "chase:0.25", "chase:0.3"}) {
    policies.push_back(carbon_aware::parse_policy(s));
  }
  // The short version sweeps the first week's starts.
  using zeus::bench::full_or_smoke;
  const std::int64_t end = full_or_smoke(signal.end_utc(), signal.start_utc() + 7 * 86'400);
  for (auto _ : state) {
    auto r = carbon_aware::sweep_starts(rp, policies, signal.start_utc(), end, 3600,
                                        static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_FullYearSweep)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(zeus::bench::full_or_smoke(3, 1));

}  // namespace

BENCHMARK_MAIN();
