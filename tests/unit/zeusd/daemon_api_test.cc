// The upstream zeusd API end to end over a Unix socket: discovery, GPU
// control and reads over the fake NVML, CPU energy and power over a fake
// powercap tree, status codes and error shapes, API groups, power streams.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class DaemonApi : public ::testing::Test {
 protected:
  FakeNode node;
  std::unique_ptr<RunningDaemon> d;
  void start(DaemonOptions o = {}) {
    o.num_workers = 2;
    d = std::make_unique<RunningDaemon>(o, node.devices);
  }
  void TearDown() override { d.reset(); }
};

TEST_F(DaemonApi, DiscoverListsDevicesGroupsAndAuth) {
  node.nvml.set_architecture(1, zeus::testing::nvml_arch::kPascal);
  start();
  auto c = d->client();
  const auto r = c.get("/discover");
  ASSERT_EQ(r.status, 200);
  const auto j = json_of(r);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["id"], 0);
  EXPECT_EQ(j["gpus"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["gpus"][0]["pci_address"], "00000000:18:00.0");  // NVML's busId
  EXPECT_EQ(j["gpus"][1]["pci_address"], "00000000:38:00.0");
  EXPECT_EQ(j["gpus"][0]["cumulative_energy_available"], true);
  EXPECT_EQ(j["gpus"][1]["cumulative_energy_available"], false);  // Pascal
  ASSERT_EQ(j["cpus"].size(), 2u);
  EXPECT_EQ(j["cpus"][0]["dram_available"], true);
  EXPECT_EQ(j["cpus"][1]["dram_available"], false);
  EXPECT_EQ(j["enabled_api_groups"], nlohmann::json({"gpu-control", "gpu-read", "cpu-read"}));
  EXPECT_EQ(j["auth_required"], false);
  const auto t = json_of(c.get("/time"));
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  EXPECT_NEAR(t["timestamp_ms"].get<double>(), static_cast<double>(now_ms), 5000.0);
}

TEST_F(DaemonApi, SocketHasTheConfiguredModeAndOwner) {
  DaemonOptions o;
  o.socket_permissions = 0660;
  if (::geteuid() == 0) {
    o.socket_uid = 65534;
    o.socket_gid = 65534;
  }
  start(o);
  struct stat st {};
  ASSERT_EQ(::stat((d->dir + "/zeusd.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  if (::geteuid() == 0) {
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
  }
  // A second daemon on the same live socket is refused.
  DaemonOptions again;
  again.socket_path = d->dir + "/zeusd.sock";
  Daemon second(again, node.devices);
  try {
    second.start();
    FAIL() << "a live socket must not be taken over";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
  }
}

TEST_F(DaemonApi, TcpModeBindsLoopbackByDefault) {
  DaemonOptions o;
  EXPECT_EQ(o.tcp_bind_address, "127.0.0.1:4938");
  o.mode = TransportMode::kTcp;
  o.tcp_bind_address = "127.0.0.1:0";
  start(o);
  EXPECT_THAT(d->daemon->api_url(), HasSubstr("http://127.0.0.1:"));
  auto c = d->client();
  EXPECT_EQ(c.get("/discover").status, 200);
}

TEST_F(DaemonApi, SetPowerLimitBlockingReachesTheDevice) {
  start();
  auto c = d->client();
  auto r = post(c, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=300000&block=true");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(node.nvml.power_limit_mw(0), 300000u);
  EXPECT_EQ(node.nvml.power_limit_mw(1), 300000u);
  const auto j = json_of(c.get("/gpu/get_power_limit"));
  EXPECT_EQ(j["0"]["power_limit_mw"], 300000);
  EXPECT_EQ(j["1"]["power_limit_mw"], 300000);
  const auto k = json_of(c.get("/gpu/get_power_limit_constraints?gpu_ids=1"));
  EXPECT_EQ(k.size(), 1u);
  EXPECT_EQ(k["1"]["min_power_limit_mw"], 200000);
  EXPECT_EQ(k["1"]["max_power_limit_mw"], 700000);
}

TEST_F(DaemonApi, NonBlockingCommandIsAppliedLater) {
  start();
  auto c = d->client();
  EXPECT_EQ(post(c, "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=250000&block=false").status,
            200);
  for (int i = 0; i < 200 && node.nvml.power_limit_mw(1) != 250000u; ++i)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(node.nvml.power_limit_mw(1), 250000u);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
}

TEST_F(DaemonApi, PersistenceAndLockedClocks) {
  start();
  auto c = d->client();
  EXPECT_EQ(post(c, "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true").status, 200);
  EXPECT_TRUE(node.nvml.persistence(0));
  EXPECT_EQ(json_of(c.get("/gpu/get_persistence_mode?gpu_ids=0"))["0"]["enabled"], true);
  EXPECT_EQ(
      post(c,
           "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=800&max_clock_mhz=1200&block=true")
          .status,
      200);
  unsigned lo = 0, hi = 0;
  EXPECT_TRUE(node.nvml.locked_clocks(0, false, lo, hi));
  EXPECT_EQ(lo, 800u);
  EXPECT_EQ(hi, 1200u);
  EXPECT_EQ(
      post(c,
           "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=1593&max_clock_mhz=2619&block=true")
          .status,
      200);
  EXPECT_TRUE(node.nvml.locked_clocks(0, true, lo, hi));
  EXPECT_EQ(post(c, "/gpu/reset_locked_clocks?gpu_ids=0&block=true").status, 200);
  EXPECT_FALSE(node.nvml.locked_clocks(0, false, lo, hi));
  EXPECT_FALSE(node.nvml.locked_clocks(0, true, lo, hi));
  EXPECT_EQ(
      post(c,
           "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=800&max_clock_mhz=1200&block=true")
          .status,
      200);
  EXPECT_EQ(post(c, "/gpu/reset_gpu_locked_clocks?gpu_ids=0&block=true").status, 200);
  EXPECT_FALSE(node.nvml.locked_clocks(0, false, lo, hi));
  EXPECT_EQ(post(c, "/gpu/reset_mem_locked_clocks?gpu_ids=0&block=true").status, 200);
}

TEST_F(DaemonApi, BadQueriesAre400WithAnErrorField) {
  start();
  auto c = d->client();
  struct Case {
    const char* target;
    const char* needle;
  } cases[] = {
      {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1&block=true&extra=1",
       "unknown field `extra`"},
      {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1", "missing field `block`"},
      {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=-5&block=true", "power_limit_mw"},
      {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=abc&block=true", "power_limit_mw"},
      {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=99999999999&block=true", "power_limit_mw"},
      {"/gpu/set_power_limit?gpu_ids=&power_limit_mw=1&block=true", "at least one GPU index"},
      {"/gpu/set_power_limit?gpu_ids=0,,1&power_limit_mw=1&block=true", "empty GPU index"},
      {"/gpu/set_power_limit?gpu_ids=x&power_limit_mw=1&block=true", "Invalid GPU index: x"},
      {"/gpu/set_persistence_mode?gpu_ids=0&enabled=yes&block=true", "true or false"},
      {"/gpu/set_power_limit?gpu_ids=0&gpu_ids=1&power_limit_mw=1&block=true", "duplicate field"},
  };
  for (const auto& k : cases) {
    const auto r = post(c, k.target);
    EXPECT_EQ(r.status, 400) << k.target;
    const auto j = json_of(r);
    ASSERT_TRUE(j.contains("error")) << r.body;
    EXPECT_THAT(j["error"].get<std::string>(), HasSubstr(k.needle)) << k.target;
  }
  EXPECT_EQ(get(c, "/gpu/get_power?gpu_ids=0&foo=1").status, 400);
  EXPECT_EQ(get(c, "/cpu/get_cumulative_energy?cpu=true").status, 400);  // dram required
  EXPECT_EQ(get(c, "/discover?x=1").status, 400);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);  // nothing was applied
}

TEST_F(DaemonApi, PerGpuErrorsAreCombinedWithTheWorstStatus) {
  start();
  auto c = d->client();
  // One unknown id: nothing is changed, and the answer says so (the class:
  // partial effects behind an answer that names only the bad part).
  auto r = post(c, "/gpu/set_power_limit?gpu_ids=0,1,7&power_limit_mw=300000&block=true");
  EXPECT_EQ(r.status, 400);
  auto j = json_of(r);
  ASSERT_TRUE(j.contains("errors")) << r.body;
  EXPECT_EQ(j["errors"].size(), 1u);
  EXPECT_THAT(j["errors"]["7"].get<std::string>(), HasSubstr("not found"));
  EXPECT_THAT(j["errors"]["7"].get<std::string>(), HasSubstr("no GPU was changed"));
  EXPECT_EQ(j["applied"], nlohmann::json::array());
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
  EXPECT_EQ(node.nvml.power_limit_mw(1), 700000u);
  EXPECT_EQ(post(c, "/gpu/set_power_limit?gpu_ids=3&power_limit_mw=300000&block=false").status,
            400);
  // Out of range for the device: NVML answers INVALID_ARGUMENT -> 400.
  r = post(c, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=900000&block=true");
  EXPECT_EQ(r.status, 400);
  j = json_of(r);
  EXPECT_EQ(j["errors"].size(), 2u);
  EXPECT_EQ(j["applied"], nlohmann::json::array());
  // No permission -> 403, and it wins over 400.
  node.nvml.set_permission_denied(true);
  r = post(c, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=300000&block=true");
  EXPECT_EQ(r.status, 403) << r.body;
  j = json_of(r);
  EXPECT_TRUE(j["errors"].contains("0"));
  EXPECT_TRUE(j["errors"].contains("1"));
  node.nvml.set_permission_denied(false);
  // A driver failure on one of two GPUs -> 500, naming the one that was
  // changed all the same.
  node.nvml.fail_next("nvmlDeviceSetPowerManagementLimit", zeus::testing::nvml_rc::kUnknown);
  r = post(c, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=300000&block=true");
  EXPECT_EQ(r.status, 500) << r.body;
  j = json_of(r);
  ASSERT_EQ(j["errors"].size(), 1u) << r.body;
  ASSERT_EQ(j["applied"].size(), 1u) << r.body;
  const int changed = j["applied"][0].get<int>();
  EXPECT_FALSE(j["errors"].contains(std::to_string(changed)));
  EXPECT_EQ(node.nvml.power_limit_mw(changed), 300000u);
  EXPECT_EQ(node.nvml.power_limit_mw(1 - changed), 700000u);
}

TEST_F(DaemonApi, GpuReads) {
  node.nvml.set_architecture(1, zeus::testing::nvml_arch::kPascal);
  node.nvml.set_energy_mj(0, 123456);
  node.nvml.set_power_mw(0, 150000, 140000, 20000);
  start();
  auto c = d->client();
  auto r = c.get("/gpu/get_cumulative_energy?gpu_ids=0");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json_of(r)["0"]["energy_mj"], 123456);
  r = c.get("/gpu/get_cumulative_energy?gpu_ids=1");
  EXPECT_EQ(r.status, 400);  // pre-Volta: no counter
  EXPECT_TRUE(json_of(r).contains("errors"));
  r = c.get("/gpu/get_power");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = json_of(r);
  EXPECT_EQ(j["power_mw"]["0"], 150000);
  EXPECT_TRUE(j["power_mw"].contains("1"));
  EXPECT_GT(j["timestamp_ms"].get<std::int64_t>(), 1'600'000'000'000);
  EXPECT_EQ(c.get("/gpu/get_power?gpu_ids=5").status, 400);
}

TEST_F(DaemonApi, CpuEnergyAndPower) {
  start();
  auto c = d->client();
  auto r = c.get("/cpu/get_cumulative_energy?cpu_ids=0,1&cpu=true&dram=true");
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = json_of(r);
  EXPECT_EQ(j["0"]["cpu_energy_uj"], 1'000'000);
  EXPECT_EQ(j["0"]["dram_energy_uj"], 500'000);
  EXPECT_EQ(j["1"]["cpu_energy_uj"], 2'000'000);
  EXPECT_TRUE(j["1"]["dram_energy_uj"].is_null());
  j = json_of(c.get("/cpu/get_cumulative_energy?cpu=false&dram=true"));
  EXPECT_TRUE(j["0"]["cpu_energy_uj"].is_null());
  EXPECT_EQ(j["0"]["dram_energy_uj"], 500'000);
  EXPECT_EQ(c.get("/cpu/get_cumulative_energy?cpu_ids=4&cpu=true&dram=true").status, 400);
  // Power: two readings 100 ms apart; advance the counters in between.
  std::thread t([&] {
    std::this_thread::sleep_for(30ms);
    node.powercap.advance_energy("intel-rapl:0", 10'000'000);  // 10 J in ~0.1 s: ~100 W
  });
  r = c.get("/cpu/get_power?cpu_ids=0");
  t.join();
  ASSERT_EQ(r.status, 200) << r.body;
  j = json_of(r);
  const double mw = j["power_mw"]["0"]["cpu_mw"].get<double>();
  EXPECT_GT(mw, 40'000);   // 10 J over at most 0.25 s
  EXPECT_LT(mw, 110'000);  // over at least 0.1 s
  EXPECT_EQ(j["power_mw"]["0"]["dram_mw"], 0);
}

TEST_F(DaemonApi, DisabledGroupsAre404) {
  DaemonOptions o;
  o.enabled = {ApiGroup::kGpuRead};
  start(o);
  auto c = d->client();
  auto r = post(c, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(json_of(r)["error"].get<std::string>(), HasSubstr("'gpu-control' is not enabled"));
  EXPECT_EQ(c.get("/cpu/get_cumulative_energy?cpu=true&dram=true").status, 404);
  EXPECT_EQ(c.get("/gpu/get_power").status, 200);
  EXPECT_EQ(c.get("/auth/whoami").status, 404);  // auth is off
  EXPECT_EQ(json_of(c.get("/discover"))["enabled_api_groups"], nlohmann::json({"gpu-read"}));
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
}

TEST_F(DaemonApi, GpuPowerStreamIsLazyAndSendsChanges) {
  DaemonOptions o;
  o.gpu_power_poll_hz = 50;
  start(o);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(d->daemon->gpu_stream_polls(0), 0u);  // nobody listens: no polling
  node.nvml.set_power_mw(1, 111000, 100000, 20000);
  auto c = d->client();
  std::vector<nlohmann::json> events;
  std::thread changer([&] {
    std::this_thread::sleep_for(150ms);
    node.nvml.set_power_mw(1, 222000, 100000, 20000);
  });
  c.stream_events("/gpu/stream_power?gpu_ids=1", [&](const http::Event& e) {
    events.push_back(nlohmann::json::parse(e.data));
    return events.size() < 2;
  });
  changer.join();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["gpu_id"], 1);
  EXPECT_EQ(events[0]["power_mw"], 111000);
  EXPECT_EQ(events[1]["power_mw"], 222000);  // unchanged samples in between were not sent
  EXPECT_TRUE(events[0].contains("timestamp_ms"));
  EXPECT_EQ(d->daemon->gpu_stream_polls(0), 0u);  // only the subscribed GPU was polled
  EXPECT_GT(d->daemon->gpu_stream_polls(1), 3u);
  // The client left: polling stops.
  for (int i = 0; i < 100 && d->daemon->stream_subscribers() > 0; ++i)
    std::this_thread::sleep_for(10ms);
  const auto polls = d->daemon->gpu_stream_polls(1);
  std::this_thread::sleep_for(150ms);
  EXPECT_LE(d->daemon->gpu_stream_polls(1), polls + 1);
  EXPECT_EQ(c.get("/gpu/stream_power?gpu_ids=9").status, 400);
}

TEST_F(DaemonApi, CpuPowerStreamSendsFirstSampleAndChanges) {
  DaemonOptions o;
  o.cpu_power_poll_hz = 20;
  start(o);
  auto c = d->client();
  std::vector<nlohmann::json> events;
  std::atomic<bool> stop{false};
  std::thread feeder([&] {
    while (!stop) {
      node.powercap.advance_energy("intel-rapl:0", 1'000'000);
      std::this_thread::sleep_for(20ms);
    }
  });
  c.stream_events("/cpu/stream_power?cpu_ids=0", [&](const http::Event& e) {
    events.push_back(nlohmann::json::parse(e.data));
    return events.size() < 3;
  });
  stop = true;
  feeder.join();
  ASSERT_EQ(events.size(), 3u);
  for (const auto& e : events) {
    EXPECT_EQ(e["cpu_id"], 0);
    EXPECT_TRUE(e.contains("cpu_mw"));
    EXPECT_TRUE(e.contains("dram_mw"));
    EXPECT_TRUE(e.contains("timestamp_ms"));
  }
  EXPECT_EQ(d->daemon->cpu_stream_polls(1), 0u);
}

TEST(DaemonPrivileges, GroupsThatNeedRootAreRefusedForOthers) {
  DaemonOptions o;
  EXPECT_NO_THROW(check_privileges(o, 0));
  try {
    check_privileges(o, 1000);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
    EXPECT_THAT(e.what(), HasSubstr("gpu-control, cpu-read"));
  }
  o.enabled = {ApiGroup::kGpuRead};
  EXPECT_NO_THROW(check_privileges(o, 1000));
  o.enabled = {ApiGroup::kGpuControl};
  o.gpu_command_overrides = "/etc/zeusd/overrides.toml";
  EXPECT_NO_THROW(check_privileges(o, 1000));
}

}  // namespace
}  // namespace zeus::zeusd::testing
