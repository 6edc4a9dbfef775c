// main() for benchmarks whose windows read static fake counters: those would
// warn about zero-energy windows, and the cost is what is measured here.
#pragma once

#include <benchmark/benchmark.h>

#include "zeus/util/log.h"

#define ZEUS_QUIET_BENCHMARK_MAIN()                                   \
  int main(int argc, char** argv) {                                   \
    zeus::log::set_level(zeus::log::Level::kError);                   \
    benchmark::Initialize(&argc, argv);                               \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1; \
    benchmark::RunSpecifiedBenchmarks();                              \
    benchmark::Shutdown();                                            \
    return 0;                                                         \
  }
