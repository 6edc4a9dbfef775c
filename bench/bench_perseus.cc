// Perseus planner: full frontier solves on the SOSP'24 emulation profiles.
// Reproduce: build/bin/bench_perseus --benchmark_filter=Solve
// (profiles are read from the project's data/perseus-sosp24-emulation).
#include <benchmark/benchmark.h>

#include <string>

#include "bench_smoke.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"

namespace {

using namespace zeus::pipeline_frequency;

std::string profile_path(const std::string& name) {
  return std::string(ZEUS_SOURCE_DIR) + "/data/perseus-sosp24-emulation/stage_profile/" + name +
         "_bf16.csv";
}

void solve_case(benchmark::State& state, const std::string& profile, int microbatches, double tau,
                double pb, CostModelKind model) {
  const auto p = StageProfile::read_file(profile_path(profile));
  PlannerOptions o;
  // The short version: two microbatches at a coarse time unit (a few steps).
  using zeus::bench::full_or_smoke;
  o.microbatches = full_or_smoke(microbatches, 2);
  o.unit_time = zeus::Seconds(full_or_smoke(tau, 0.01));
  o.p_blocking = zeus::Watts(pb);
  o.cost_model = model;
  std::size_t steps = 0;
  for (auto _ : state) {
    const auto sol = solve_pipeline(p, o);
    steps = sol.points().size() - 1;
    benchmark::DoNotOptimize(sol.points().back().energy);
  }
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["us_per_step"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_SolveGpt3A100M96(benchmark::State& s) {
  solve_case(s, "gpt3-175b+a100_sxm", 96, 0.001, 83.64, CostModelKind::kExponential);
}
void BM_SolveGpt3A40M12(benchmark::State& s) {
  solve_case(s, "gpt3-175b+a40", 12, 0.0001, 70.38, CostModelKind::kExponential);
}
void BM_SolveGpt3A100M96Convex(benchmark::State& s) {
  solve_case(s, "gpt3-175b+a100_sxm", 96, 0.001, 83.64, CostModelKind::kConvex);
}
void BM_SolveBloomA100M12(benchmark::State& s) {
  solve_case(s, "bloom+a100_sxm", 12, 0.001, 83.64, CostModelKind::kExponential);
}
void BM_SolveGpt3A100M48(benchmark::State& s) {
  solve_case(s, "gpt3-175b+a100_sxm", 48, 0.001, 83.64, CostModelKind::kExponential);
}

const int kRepeats = zeus::bench::full_or_smoke(3, 1);
BENCHMARK(BM_SolveGpt3A100M96)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(kRepeats);
BENCHMARK(BM_SolveGpt3A40M12)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(kRepeats);
BENCHMARK(BM_SolveGpt3A100M96Convex)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SolveBloomA100M12)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(zeus::bench::full_or_smoke(3, 1));
BENCHMARK(BM_SolveGpt3A100M48)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
