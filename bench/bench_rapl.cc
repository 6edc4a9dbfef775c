// Cost of reading a RAPL package (and its DRAM zone) through the backend, on a
// fake powercap tree: the library's own overhead (pread, parse, wrap
// bookkeeping), not the kernel's MSR read behind real sysfs.
//   build/bin/bench_rapl
#include <benchmark/benchmark.h>

#include "fakes/powercap/fake_powercap.h"
#include "zeus/device/rapl.h"

namespace {

void BM_RaplTotalEnergy(benchmark::State& state) {
  zeus::testing::FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1000, zeus::testing::kIntelPackageRangeUj);
  if (state.range(0) == 1)
    fake.add_zone("intel-rapl:0:0", "dram", 10, zeus::testing::kIntelDramRangeUj);
  zeus::device::RaplOptions options;
  options.root = fake.root();
  options.keepalive_period = zeus::Seconds(-1);
  auto set = zeus::device::open_rapl_cpus(options);
  for (auto _ : state) benchmark::DoNotOptimize(set.cpus.at(0)->total_energy());
  state.SetLabel(state.range(0) == 1 ? "package+dram" : "package");
}
BENCHMARK(BM_RaplTotalEnergy)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
