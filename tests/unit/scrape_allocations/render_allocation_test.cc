// A Prometheus scrape allocates nothing beyond the response buffer: with the
// buffer reserved, rendering 8 GPUs and 2 packages makes no heap allocation.
// Its own binary, because it replaces the global operator new to count.
// Fails for a renderer that formats labels or numbers through temporary
// strings, or reads devices through an allocating path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <new>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "unit/zeusd/zeusd_test_helpers.h"
#include "zeus/monitor/attribution/node_attributor.h"
#include "zeus/util/clock.h"
#include "zeus/zeusd/metrics.h"
#include "zeusd/attribution.h"

// The replacement operators pair malloc with free, which GCC cannot see
// through once they are inlined into library templates.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {

thread_local bool t_counting = false;
thread_local std::size_t t_allocations = 0;

}  // namespace

// Every unaligned form is replaced, so each allocation and its release go
// through malloc/free together (the library's temporary buffers use the
// nothrow form, and ASan checks that the pairs match).
namespace {
void* counted_malloc(std::size_t n) noexcept {
  if (t_counting) ++t_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* counted_or_throw(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n) { return counted_or_throw(n); }
void* operator new[](std::size_t n) { return counted_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace zeus::zeusd::testing {
namespace {

std::size_t allocations_during(const std::function<void()>& work) {
  t_allocations = 0;
  t_counting = true;
  work();
  t_counting = false;
  return t_allocations;
}

TEST(ScrapeAllocations, TheCounterSeesAnAllocation) {
  // Proof that the counting operator new is the one in use.
  EXPECT_GE(allocations_during([] { auto p = std::make_unique<std::string>(64, 'x'); }), 1U);
}

TEST(ScrapeAllocations, RenderingIntoAReservedBufferAllocatesNothing) {
  FakeNode node(8);
  std::vector<std::shared_ptr<device::Gpu>> gpus(node.devices.gpus.begin(),
                                                 node.devices.gpus.end());
  MetricsRenderer m(gpus, node.devices.cpus);
  std::string out;
  m.render(out);  // first scrape: resolves each GPU's power scope once
  out.reserve(out.size() * 2);
  const std::size_t lines = static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
  for (int scrape = 0; scrape < 3; ++scrape) {
    EXPECT_EQ(allocations_during([&] {
                out.clear();
                m.render(out);
              }),
              0U)
        << "scrape " << scrape;
    EXPECT_EQ(static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n')), lines);
  }
  EXPECT_NE(out.find("zeus_gpu_power_watts{gpu=\"7\""), std::string::npos);
  EXPECT_NE(out.find("zeus_cpu_dram_energy_joules_total{package=\"0\""), std::string::npos);
}

// The attribution ledger's families (zeusd's extra lines) in the steady
// state: workloads, processes and devices already known, the buffer
// reserved. Fails for label text built through temporary strings.
TEST(ScrapeAllocations, TheAttributionFamiliesAllocateNothing) {
  FakeNode node(8);
  std::vector<std::shared_ptr<device::Gpu>> gpus(node.devices.gpus.begin(),
                                                 node.devices.gpus.end());
  ManualClock clock(Seconds(0));
  attribution::AttributorOptions options;
  options.gpu_idle[0] = Watts(40);
  attribution::NodeAttributor ledger(gpus, node.devices.cpus, options, clock);
  ledger.poll();
  const auto self = static_cast<unsigned>(::getpid());  // a real process for the samples
  for (unsigned g = 0; g < 8; ++g) {
    node.nvml.add_process_sample(g, self, 2'000'000 + g, 50, 10);
    node.nvml.advance_energy_mj(g, 150'000);
  }
  node.powercap.advance_energy("intel-rapl:0", 20'000'000);
  clock.advance(Seconds(1));
  ledger.poll();
  std::vector<std::string> labels;
  ledger.visit([&](const attribution::Ledger&, std::span<const attribution::DeviceInfo> infos) {
    for (const auto& info : infos) labels.push_back("gpu=\"" + std::to_string(info.index) + "\"");
  });
  std::string out;
  render_attribution(ledger, labels, true, out);
  out.reserve(out.size() * 2);
  for (int scrape = 0; scrape < 3; ++scrape) {
    EXPECT_EQ(allocations_during([&] {
                out.clear();
                render_attribution(ledger, labels, true, out);
              }),
              0U)
        << "scrape " << scrape;
  }
  EXPECT_NE(out.find("zeus_workload_gpu_energy_joules_total{cgroup="), std::string::npos) << out;
  EXPECT_NE(out.find("zeus_process_gpu_energy_joules_total{pid=\"" + std::to_string(self)),
            std::string::npos);
  EXPECT_NE(out.find("zeus_gpu_energy_split_joules_total{gpu=\"7\",share=\"attributed\"}"),
            std::string::npos);
}

}  // namespace
}  // namespace zeus::zeusd::testing
