// The library as a zeusd client: discovery with ZEUSD_SOCK_PATH gives GPUs
// and CPUs whose settings (and, without a local driver, readings) go through
// the daemon under a lease; a power-limit optimizer whose own GPUs refuse
// every setter (as NVML does for an ordinary user) still works through
// zeusd; show-env reports the daemon.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "device/environment_report_json.h"
#include "monitor/selftest.h"
#include "unit/device/nvml/nvml_fixture.h"
#include "unit/optimizer/power_limit/test_support.h"
#include "zeus/device/zeusd_backend.h"
#include "zeus/optimizer/pipeline_frequency/client/frequency_controller.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/zeusd/jwt.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using zeus::testing::ScopedEnv;
using namespace std::chrono_literals;

DaemonOptions with_workers(int n, std::string key_path = {}) {
  DaemonOptions o;
  o.num_workers = n;
  o.signing_key_path = std::move(key_path);
  return o;
}
device::DiscoveryOptions discovery(const char* backend) {
  device::DiscoveryOptions o;
  o.gpu_backend = backend;
  o.cpus = false;
  return o;
}

TEST(ZeusdClientBackend, DiscoveryRoutesThroughTheDaemon) {
  FakeNode node;
  RunningDaemon d(with_workers(2), node.devices);
  const std::string empty_powercap = make_temp_dir("zeusd_nopowercap");
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv backend("ZEUS_GPU_BACKEND", "zeusd");
  {
    device::DiscoveryOptions o;
    o.powercap_root = empty_powercap;  // no local RAPL: CPUs come from zeusd
    device::DeviceInventory inv = device::discover_devices(o);
    EXPECT_EQ(inv.gpu_backend, "zeusd");
    ASSERT_EQ(inv.gpus.size(), 2u);
    EXPECT_EQ(inv.gpus[0]->name(), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(inv.gpus[1]->power_limit(), Milliwatts(700000));
    EXPECT_EQ(inv.gpus[1]->power_limit_constraints().min, Milliwatts(200000));
    node.nvml.set_energy_mj(0, 4000);
    EXPECT_DOUBLE_EQ(inv.gpus[0]->total_energy().value(), 4.0);
    EXPECT_DOUBLE_EQ(inv.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 120.0);
    EXPECT_THROW(inv.gpus[0]->temperature(), Error);  // not in the zeusd API: unsupported, not 0
    inv.gpus[1]->set_power_limit(Milliwatts(250000));
    EXPECT_EQ(node.nvml.power_limit_mw(1), 250000u);
    inv.gpus[0]->set_persistence_mode(true);
    EXPECT_TRUE(node.nvml.persistence(0));
    EXPECT_EQ(d.daemon->active_leases(), 1u);
    ASSERT_EQ(inv.cpus.size(), 2u);
    EXPECT_TRUE(inv.cpus[0]->has_dram());
    EXPECT_DOUBLE_EQ(inv.cpus[0]->total_energy().package.value(), 1.0);
    EXPECT_DOUBLE_EQ(inv.cpus[0]->total_energy().dram->value(), 0.5);
    ASSERT_TRUE(inv.zeusd);
    EXPECT_EQ(inv.zeusd->enabled_api_groups,
              (std::vector<std::string>{"gpu-control", "gpu-read", "cpu-read"}));
    const auto report = device::environment_report(inv);
    EXPECT_EQ(report["zeusd"]["endpoint"], d.dir + "/zeusd.sock");
    EXPECT_EQ(report["zeusd"]["auth_required"], false);
    EXPECT_THAT(report["notes"].dump(), HasSubstr("RAPL energy is read through zeusd"));
  }
  // This process's connection is gone: its lease ends and zeusd restores.
  // Each GPU's restore runs on its own worker, so wait for both.
  for (int i = 0; i < 400 && (node.nvml.power_limit_mw(1) != 700000u || node.nvml.persistence(0));
       ++i)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(node.nvml.power_limit_mw(1), 700000u);
  EXPECT_FALSE(node.nvml.persistence(0));
  std::filesystem::remove_all(empty_powercap);
}

// Issue 20: with no local driver, automatic discovery said "continuing without
// GPUs" while zeusd's GPUs were in use. One note per fact, true for the backend.
TEST(ZeusdClientBackend, AutomaticDiscoveryOfTheDaemonsGpusSaysSoOnce) {
  FakeNode node;
  RunningDaemon d(with_workers(1), node.devices);
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv backend("ZEUS_GPU_BACKEND", "auto");
  device::DiscoveryOptions o;
  o.nvml_library = d.dir + "/no-libnvidia-ml.so.1";
  o.amdsmi_library = d.dir + "/no-libamd_smi.so";
  o.cpus = false;
  const device::DeviceInventory inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "zeusd");
  EXPECT_EQ(inv.gpus.size(), 2u);
  const std::string notes = nlohmann::json(inv.notes).dump();
  EXPECT_THAT(notes, Not(HasSubstr("continuing without GPUs"))) << notes;
  EXPECT_THAT(notes, HasSubstr("measuring the 2 GPU(s) of zeusd at")) << notes;
}

// `zeus selftest` through zeusd: whether settings could be changed is the
// daemon's gpu-control group and the token's scopes, and --write says why not.
TEST(ZeusdClientBackend, SelftestSaysWhetherZeusdLetsThisUserChangeSettings) {
  FakeNode node;
  const std::string keydir = make_temp_dir("zeusd_cb_selftest");
  const std::string key = "key-key-key-key-key-key-key-key-key-key";
  RunningDaemon d(with_workers(1, write_signing_key(keydir, key)), node.devices);
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv backend("ZEUS_GPU_BACKEND", "zeusd");
  monitor::SelftestOptions o;
  o.window = Seconds(0.05);
  o.call_repetitions = 2;
  o.write = true;
  device::DiscoveryOptions discovery;
  discovery.cpus = false;
  const auto verdict_of = [](const monitor::SelftestReport& r, const std::string& device,
                             const std::string& name) {
    for (const auto& c : r.checks) {
      if (c.device == device && c.name == name) return c;
    }
    return monitor::SelftestCheck{};
  };
  {
    ScopedEnv token("ZEUSD_TOKEN",
                    issue_token(key, {"bob", {ApiGroup::kGpuRead}, std::nullopt}).c_str());
    const auto report = monitor::run_selftest(device::discover_devices(discovery), o);
    const auto host = verdict_of(report, "host", "settings could be changed");
    EXPECT_EQ(host.verdict, monitor::SelftestVerdict::kWarn);
    EXPECT_THAT(host.detail, HasSubstr("gives this token no gpu-control scope"));
    const auto write = verdict_of(report, "GPU 0", "power limit set and restored");
    EXPECT_EQ(write.verdict, monitor::SelftestVerdict::kFail);
    EXPECT_THAT(write.detail, HasSubstr("lacks required scope 'gpu-control'"));
    EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
  }
  {
    ScopedEnv token(
        "ZEUSD_TOKEN",
        issue_token(key, {"carol", {ApiGroup::kGpuRead, ApiGroup::kGpuControl}, std::nullopt})
            .c_str());
    const auto report = monitor::run_selftest(device::discover_devices(discovery), o);
    const auto host = verdict_of(report, "host", "settings could be changed");
    EXPECT_EQ(host.verdict, monitor::SelftestVerdict::kPass);
    EXPECT_THAT(host.detail, HasSubstr("through zeusd at " + d.dir + "/zeusd.sock"));
    EXPECT_EQ(verdict_of(report, "GPU 1", "power limit set and restored").verdict,
              monitor::SelftestVerdict::kPass);
  }
  EXPECT_EQ(node.nvml.power_limit_mw(1), 700000u);
  std::filesystem::remove_all(keydir);
}

TEST(ZeusdClientBackend, AuthScopesAndErrorsCarryTheDaemonsWords) {
  FakeNode node;
  const std::string keydir = make_temp_dir("zeusd_cb_key");
  const std::string key = "key-key-key-key-key-key-key-key-key-key";
  RunningDaemon d(with_workers(1, write_signing_key(keydir, key)), node.devices);
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv backend("ZEUS_GPU_BACKEND", "zeusd");
  ScopedEnv token("ZEUSD_TOKEN",
                  issue_token(key, {"bob", {ApiGroup::kGpuRead}, std::nullopt}).c_str());
  device::DiscoveryOptions o;
  o.cpus = false;
  device::DeviceInventory inv = device::discover_devices(o);
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(inv.zeusd->user, "bob");
  EXPECT_EQ(inv.zeusd->scopes, std::vector<std::string>{"gpu-read"});
  try {
    inv.gpus[0]->set_power_limit(Milliwatts(300000));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
    EXPECT_THAT(e.what(), HasSubstr("lacks required scope 'gpu-control'"));
  }
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
  std::filesystem::remove_all(keydir);
}

TEST(ZeusdClientBackend, UnreachableDaemonIsAClearError) {
  ScopedEnv sock("ZEUSD_SOCK_PATH", "/nonexistent/zeusd.sock");
  try {
    device::discover_devices(discovery("none"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_THAT(e.what(), HasSubstr("cannot reach zeusd at /nonexistent/zeusd.sock"));
  }
  ScopedEnv unset("ZEUSD_SOCK_PATH", nullptr);
  EXPECT_THROW(device::discover_devices(discovery("zeusd")), Error);
}

TEST(ZeusdClientBackend, PowerLimitOptimizerOfAnOrdinaryUserWorksThroughZeusd) {
  zeus::testing::SimRig rig(2);
  // The daemon owns the devices; this process's own view of them refuses
  // every setter, like NVML for a user without CAP_SYS_ADMIN.
  DaemonDevices devices;
  for (auto& s : rig.sims) devices.gpus.push_back(s);
  RunningDaemon d(with_workers(2), devices);
  auto connection = std::make_shared<device::ZeusdConnection>(
      device::ZeusdConfig{"unix:" + d.dir + "/zeusd.sock", d.dir + "/zeusd.sock", ""});
  for (std::size_t i = 0; i < rig.gpus.size(); ++i) {
    rig.gpus[i]->set_deny_setters(true);
    rig.inventory.gpus[i] = device::make_zeusd_gpu(connection, static_cast<int>(i), rig.gpus[i]);
  }
  rig.make_monitor();
  power_limit::GlobalPowerLimitOptimizerOptions o;
  o.wait_steps = 1;
  o.warmup_steps = 2;
  o.profile_steps = 3;
  o.pl_step = Watts(100.0);
  {
    power_limit::GlobalPowerLimitOptimizer opt(*rig.monitor, o);
    EXPECT_TRUE(rig.sims[0]->persistence_mode());  // set through zeusd
    std::vector<std::int64_t> seen;
    for (int step = 0; step < 1000 && !opt.done(); ++step) {
      opt.on_step_begin();
      rig.step(10);
      const auto now = rig.sims[0]->power_limit().value();
      if (seen.empty() || seen.back() != now) seen.push_back(now);
    }
    ASSERT_TRUE(opt.done());
    EXPECT_EQ(seen.front(), 300000);  // profiled from the top ...
    EXPECT_THAT(seen, ::testing::Contains(100000));
    EXPECT_EQ(rig.sims[0]->power_limit(), *opt.optimal_power_limit());  // ... and chose
    EXPECT_EQ(rig.sims[1]->power_limit(), *opt.optimal_power_limit());
    EXPECT_TRUE(rig.gpus[0]->calls().empty());  // never through the local device
    EXPECT_FALSE(connection->lease_id().empty());
  }
  // The optimizer put back what it changed, through zeusd as well.
  EXPECT_EQ(rig.sims[0]->power_limit(), Milliwatts(300000));
  EXPECT_FALSE(rig.sims[0]->persistence_mode());
}

TEST(ZeusdClientBackend, PerseusFrequencyControllerOfAnOrdinaryUserLocksClocksThroughZeusd) {
  // Fails if the controller reaches the local device (which refuses, as
  // NVML does for an ordinary user), if zeusd drops or reorders its clock
  // locks, or if the controller's restore does not go through zeusd.
  zeus::testing::SimRig rig(1);
  auto daemon_side = std::make_shared<zeus::testing::ObservedGpu>(rig.sims[0]);
  DaemonDevices devices;
  devices.gpus.push_back(daemon_side);
  RunningDaemon d(with_workers(2), devices);
  auto connection = std::make_shared<device::ZeusdConnection>(
      device::ZeusdConfig{"unix:" + d.dir + "/zeusd.sock", d.dir + "/zeusd.sock", ""});
  rig.gpus[0]->set_deny_setters(true);
  std::shared_ptr<device::Gpu> gpu = device::make_zeusd_gpu(connection, 0, rig.gpus[0]);
  rig.sims[0]->set_power_limit(Milliwatts(200000));  // not the default: the controller resets it
  const auto max_sm =
      rig.sims[0]->supported_graphics_clocks(rig.sims[0]->supported_memory_clocks().front())[0];
  std::vector<Megahertz> asked;
  {
    pipeline_frequency::FrequencyController controller(gpu);
    EXPECT_EQ(controller.max_frequency(), max_sm);
    EXPECT_EQ(rig.sims[0]->power_limit(), rig.sims[0]->default_power_limit());
    for (const double mhz : {1200.0, 900.0, 1200.0}) {
      asked.emplace_back(mhz);
      controller.set_frequency(Megahertz(mhz));
      controller.flush();
      EXPECT_EQ(controller.current_frequency(), Megahertz(mhz));
    }
    EXPECT_TRUE(rig.gpus[0]->clock_calls().empty());  // never through the local device
    EXPECT_TRUE(rig.gpus[0]->calls().empty());
    EXPECT_FALSE(connection->lease_id().empty());
    EXPECT_EQ(d.daemon->active_leases(), 1u);
  }
  std::vector<std::string> sm_locks;
  for (const auto& c : daemon_side->clock_calls()) {
    if (c.rfind("G ", 0) == 0) sm_locks.push_back(c);
  }
  ASSERT_EQ(sm_locks.size(), 1 + asked.size());
  EXPECT_EQ(sm_locks[0], fmt::format("G {}-{}", max_sm.value(), max_sm.value()));
  for (std::size_t i = 0; i < asked.size(); ++i) {
    EXPECT_EQ(sm_locks[i + 1], fmt::format("G {}-{}", asked[i].value(), asked[i].value()));
  }
  // Destroying the controller restored everything, through zeusd.
  EXPECT_THAT(daemon_side->clock_calls(), ::testing::Contains("reset G"));
  EXPECT_EQ(daemon_side->clock_calls().back().rfind("reset ", 0), 0u);
  EXPECT_EQ(rig.sims[0]->power_limit(), Milliwatts(200000));
}

}  // namespace
}  // namespace zeus::zeusd::testing
