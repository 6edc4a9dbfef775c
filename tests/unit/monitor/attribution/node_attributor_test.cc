// The node ledger end to end: the real NVML backend on the fake
// libnvidia-ml.so.1 (per-process samples with NVML's lastSeen semantics),
// real processes in /proc, the real RAPL backend on a fake powercap tree and
// real cgroups with CPU burners. Conservation is checked to the mJ.
#include "zeus/monitor/attribution/node_attributor.h"
#include "support/sleeper.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "fakes/nvml/fake_nvml_control.h"
#include "fakes/powercap/fake_powercap.h"
#include "support/temp_dir.h"
#include "unit/monitor/attribution/real_cgroups.h"
#include "zeus/device/nvml.h"
#include "zeus/device/rapl.h"
#include "zeus/util/clock.h"

namespace zeus::attribution {
namespace {

using zeus::testing::FakeNvml;
using zeus::testing::FakePowercap;
using zeus::testing::Sleeper;

void expect_conserved(const NodeAttributor& node) {
  node.visit([](const Ledger& ledger, std::span<const DeviceInfo> infos) {
    for (std::size_t d = 0; d < infos.size(); ++d) {
      const auto& t = ledger.device(static_cast<DeviceIndex>(d));
      EXPECT_EQ((t.before_start + t.idle + t.attributed + t.unattributed).value(),
                t.measured.value())
          << "device " << d;
      std::int64_t workloads = 0;
      ledger.for_each_workload(
          [&](const Ledger::WorkloadView& w) { workloads += w.energy[d].total.value(); });
      EXPECT_EQ(workloads + t.retired.value(), t.attributed.value()) << "device " << d;
    }
  });
}

std::map<unsigned, std::int64_t> process_energy(const NodeAttributor& node) {
  std::map<unsigned, std::int64_t> out;
  node.visit([&](const Ledger& ledger, std::span<const DeviceInfo>) {
    ledger.for_each_process(
        [&](const Ledger::ProcessView& p) { out[p.pid] += p.energy[0].total.value(); });
  });
  return out;
}

class NodeAttributorGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.reset();
    fake_.set_device_count(1);
    fake_.set_energy_mj(0, 1'000'000);
  }
  std::vector<std::shared_ptr<device::Gpu>> open_gpus() {
    device::NvmlOptions options;
    options.library_path = fake_.path();
    auto set = device::open_nvml_gpus(options);
    std::vector<std::shared_ptr<device::Gpu>> gpus;
    for (auto& g : set.gpus) gpus.push_back(std::move(g));
    return gpus;
  }
  // One second of the fake driver: six samples per process, energy for
  // `idle_w` plus 2 W per SM percent of the processes.
  void second(const std::vector<std::pair<unsigned, unsigned>>& sm, double idle_w) {
    unsigned total = 0;
    for (int k = 1; k <= 6; ++k) {
      t_us_ += 1'000'000 / 6;
      for (const auto& [pid, percent] : sm) fake_.add_process_sample(0, pid, t_us_, percent, 0);
    }
    for (const auto& [pid, percent] : sm) total += percent;
    fake_.advance_energy_mj(0, static_cast<unsigned long long>(idle_w * 1000 + 2 * total * 1000));
    clock_.advance(Seconds(1));
  }

  FakeNvml fake_;
  ManualClock clock_{Seconds(0)};
  unsigned long long t_us_ = 5'000'000;
};

TEST_F(NodeAttributorGpu, DutySplitOfSeventyFiveTwentyFiveGetsThatShareOfActiveEnergyExactly) {
  Sleeper a, b;
  AttributorOptions options;
  options.gpu_idle[0] = Watts(50);
  options.split_cpu = false;
  NodeAttributor node(open_gpus(), {}, options, clock_);
  node.poll();  // baseline
  for (int i = 0; i < 10; ++i) {
    second({{a.pid(), 75}, {b.pid(), 25}}, 50);
    node.poll();
  }
  const auto energy = process_energy(node);
  // Active = 10 s × 2 W × 100 % = 2000 J: 1500 and 500.
  EXPECT_EQ(energy.at(a.pid()), 1'500'000);
  EXPECT_EQ(energy.at(b.pid()), 500'000);
  expect_conserved(node);
  node.visit([](const Ledger& ledger, std::span<const DeviceInfo> infos) {
    EXPECT_EQ(ledger.device(0).idle.value(), 500'000);
    EXPECT_EQ(ledger.device(0).before_start.value(), 1'000'000);
    EXPECT_EQ(ledger.device(0).method, Method::kProcessUtilization);
    EXPECT_EQ(infos[0].idle_source, IdleSource::kConfigured);
  });
}

TEST_F(NodeAttributorGpu, ALoneProcessGetsMeasuredMinusIdleAndExitedProcessesStillCount) {
  AttributorOptions options;
  options.gpu_idle[0] = Watts(40);
  options.split_cpu = false;
  NodeAttributor node(open_gpus(), {}, options, clock_);
  unsigned gone_pid = 0;
  {
    Sleeper lone;
    gone_pid = lone.pid();
    node.poll();
    second({{lone.pid(), 60}}, 40);
    node.poll();
    second({{lone.pid(), 60}}, 40);
  }  // exited before the next poll: its samples of that second still count
  node.poll();
  const auto energy = process_energy(node);
  EXPECT_EQ(energy.at(gone_pid), 2 * 120'000);
  expect_conserved(node);
}

TEST_F(NodeAttributorGpu, IdleIsLearnedWhileNobodyRunsAndKeptAcrossRestarts) {
  zeus::testing::TempDir dir;
  AttributorOptions options;
  options.split_cpu = false;
  options.idle_quiet_polls = 3;
  options.idle_state_path = (dir / "idle.json").string();
  {
    NodeAttributor node(open_gpus(), {}, options, clock_);
    node.poll();
    for (int i = 0; i < 3; ++i) {
      second({}, 61);
      node.poll();
    }
    node.visit([](const Ledger&, std::span<const DeviceInfo> infos) {
      EXPECT_EQ(infos[0].idle_source, IdleSource::kLearned);
      EXPECT_DOUBLE_EQ(infos[0].idle_power.value(), 61);
    });
  }
  NodeAttributor restarted(open_gpus(), {}, options, clock_);
  restarted.visit([](const Ledger&, std::span<const DeviceInfo> infos) {
    EXPECT_EQ(infos[0].idle_source, IdleSource::kLearned);
    EXPECT_DOUBLE_EQ(infos[0].idle_power.value(), 61);
  });
}

TEST_F(NodeAttributorGpu, AProcessThatIsNotInProcCountsUnderAnUnknownCgroupAndJsonSaysSo) {
  AttributorOptions options;
  options.split_cpu = false;
  NodeAttributor node(open_gpus(), {}, options, clock_);
  node.poll();
  second({{4'000'000'000U, 50}}, 0);  // no such process in /proc
  node.poll();
  const auto body = nlohmann::json::parse(node.json(true));
  ASSERT_EQ(body.at("processes").size(), 1u);
  EXPECT_EQ(body["processes"][0]["pid"], 4'000'000'000U);
  EXPECT_EQ(body["workloads"][0]["cgroup"], "");
  EXPECT_EQ(body["devices"][0]["method"], "process_utilization");
  EXPECT_DOUBLE_EQ(body["devices"][0]["attributed_j"].get<double>(), 100.0);
  expect_conserved(node);
}

// Two burners in two real cgroups with 75 % and 25 % duty, a fake RAPL
// package whose counter advances: the cgroups' CPU energy follows their CPU
// time within 10 %, and every zone is conserved exactly.
TEST(NodeAttributorCpu, TwoCgroupsSharesFollowTheirCpuTimeOnRealCgroups) {
  std::string why;
  const std::string hierarchy = testing::counter_hierarchy();
  if (hierarchy.empty()) GTEST_SKIP() << "no cgroup CPU counters on this machine";
  const std::string tag = std::to_string(::getpid());
  auto heavy = testing::RealCgroup::create(hierarchy, "zeus-attr-heavy-" + tag, why);
  if (!heavy) GTEST_SKIP() << why;
  auto light = testing::RealCgroup::create(hierarchy, "zeus-attr-light-" + tag, why);
  if (!light) GTEST_SKIP() << why;
  testing::Burner hot(0.75, std::chrono::milliseconds(10), 120);
  testing::Burner cool(0.25, std::chrono::milliseconds(10), 120);
  heavy->add(hot.pid());
  light->add(cool.pid());

  FakePowercap powercap;
  powercap.add_zone("intel-rapl:0", "package-0", 0, 262143328850ULL);
  device::RaplOptions rapl;
  rapl.root = powercap.root();
  auto set = device::open_rapl_cpus(rapl);
  ASSERT_EQ(set.cpus.size(), 1u);
  std::vector<std::shared_ptr<device::Cpu>> cpus;
  cpus.push_back(std::move(set.cpus[0]));
  AttributorOptions options;
  options.cpu_idle[0] = Watts(10);
  NodeAttributor node({}, cpus, options);
  node.poll();
  std::atomic<bool> done{false};
  std::thread meter([&] {  // 100 W, in 10 ms steps
    while (!done) {
      powercap.advance_energy("intel-rapl:0", 1'000'000);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  hot.start();
  cool.start();
  const bool finished =
      hot.wait_done(std::chrono::seconds(30)) && cool.wait_done(std::chrono::seconds(30));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  node.poll();
  done = true;
  meter.join();
  ASSERT_TRUE(finished);
  std::map<std::string, std::int64_t> by_cgroup;
  node.visit([&](const Ledger& ledger, std::span<const DeviceInfo>) {
    ledger.for_each_workload([&](const Ledger::WorkloadView& w) {
      by_cgroup[w.labels.cgroup] = w.energy[0].total.value();
    });
  });
  const double h = static_cast<double>(by_cgroup[heavy->path()]);
  const double l = static_cast<double>(by_cgroup[light->path()]);
  ASSERT_GT(l, 0);
  EXPECT_NEAR(h / l, 3.0, 0.3) << "heavy " << h << " mJ, light " << l << " mJ";
  expect_conserved(node);
}

}  // namespace
}  // namespace zeus::attribution
