// Leases: settings changed under a lease come back when the lease ends,
// whichever way it ends (its connection closes, even because its process was
// SIGKILLed; its heartbeat stops; it is released; zeusd stops), within a
// second; one lease per setting; requests without a lease behave as upstream.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using SteadyTime = std::chrono::steady_clock;

// Waits up to `limit` for `pred`; returns how long it took (or limit + 1 s).
template <class P>
std::chrono::milliseconds wait_for(P pred, std::chrono::milliseconds limit = 3000ms) {
  const auto t0 = SteadyTime::now();
  while (SteadyTime::now() - t0 < limit) {
    if (pred()) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyTime::now() - t0);
    }
    std::this_thread::sleep_for(2ms);
  }
  return limit + 1000ms;
}

class Leases : public ::testing::Test {
 protected:
  FakeNode node;
  std::unique_ptr<RunningDaemon> d;
  void SetUp() override {
    DaemonOptions o;
    o.num_workers = 2;
    d = std::make_unique<RunningDaemon>(o, node.devices);
  }
  void TearDown() override { d.reset(); }
  std::string acquire(http::Client& c, const std::string& query = "") {
    const auto r = post(c, "/lease/acquire" + query);
    EXPECT_EQ(r.status, 200) << r.body;
    return json_of(r)["lease_id"].get<std::string>();
  }
};

TEST_F(Leases, ConnectionBoundLeaseRestoresWhenTheClientDisconnects) {
  {
    auto c = d->client();
    const std::string lease = acquire(c);
    EXPECT_EQ(lease.size(), 32u);
    auto r = post(
        c, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=300000&block=true&lease_id=" + lease);
    ASSERT_EQ(r.status, 200) << r.body;
    r = post(c, "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true&lease_id=" + lease);
    ASSERT_EQ(r.status, 200) << r.body;
    r = post(c,
             "/gpu/"
             "set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=900&max_clock_mhz=1100&block=true&"
             "lease_id=" +
                 lease);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(node.nvml.power_limit_mw(0), 300000u);
    EXPECT_TRUE(node.nvml.persistence(0));
    EXPECT_EQ(d->daemon->active_leases(), 1u);
  }  // the client closes its connection
  unsigned lo = 0, hi = 0;
  const auto took = wait_for([&] {
    return node.nvml.power_limit_mw(0) == 700000u && node.nvml.power_limit_mw(1) == 700000u &&
           !node.nvml.persistence(0) && !node.nvml.locked_clocks(1, false, lo, hi);
  });
  EXPECT_LT(took, 1000ms);
  EXPECT_EQ(d->daemon->active_leases(), 0u);
}

TEST_F(Leases, AConnectionHoldingALeaseOutlivesTheIdleTimeout) {
  // The HTTP layer closes idle keep-alive connections after idle_timeout; a
  // lease's connection is held open instead (checked through the flag the
  // server reads, since the daemon's timeout is a minute).
  auto c = d->client();
  const std::string lease = acquire(c);
  ASSERT_EQ(
      post(c, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true&lease_id=" + lease)
          .status,
      200);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 250000u);
  EXPECT_EQ(d->daemon->active_leases(), 1u);
}

TEST_F(Leases, SigkilledUnprivilegedClientIsRestoredWithinASecond) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the client as another user";
  // The client runs as nobody: it can reach the socket (mode 666) but could
  // never set a limit itself.
  ASSERT_EQ(::chmod(d->dir.c_str(), 0755), 0);
  const std::string script = std::string(ZEUS_SOURCE_DIR) + "/tests/unit/zeusd/lease_client.py";
  const std::string sock = d->dir + "/zeusd.sock";
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  std::vector<std::string> args = {"/usr/bin/python3", script, sock, "1", "333000"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(125);
    ::execv("/usr/bin/python3", argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string said;
  pollfd p{out[0], POLLIN, 0};
  while (said.find('\n') == std::string::npos && ::poll(&p, 1, 10000) > 0) {
    char buf[256];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  ASSERT_EQ(said, "ready\n");
  EXPECT_EQ(node.nvml.power_limit_mw(1), 333000u);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const auto took = wait_for([&] { return node.nvml.power_limit_mw(1) == 700000u; });
  EXPECT_LT(took, 1000ms) << "the limit of a SIGKILLed client's lease was not restored in time";
  EXPECT_EQ(d->daemon->active_leases(), 0u);
}

TEST_F(Leases, HeartbeatLeaseEndsWhenNotRenewed) {
  auto c = d->client();
  auto r = post(c, "/lease/acquire?ttl_s=0.4");
  ASSERT_EQ(r.status, 200);
  const auto j = json_of(r);
  EXPECT_EQ(j["ttl_s"], 0.4);
  EXPECT_EQ(j["bound_to_connection"], false);
  const std::string lease = j["lease_id"];
  ASSERT_EQ(
      post(c, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=400000&block=true&lease_id=" + lease)
          .status,
      200);
  // Renewed for a while: the setting stays.
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(150ms);
    ASSERT_EQ(post(c, "/lease/renew?lease_id=" + lease).status, 200);
  }
  EXPECT_EQ(node.nvml.power_limit_mw(0), 400000u);
  // The heartbeat lease survives its connection.
  c.close();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 400000u);
  // Then silence: restored within a second of the deadline.
  const auto took = wait_for([&] { return node.nvml.power_limit_mw(0) == 700000u; });
  EXPECT_LT(took, 1400ms);  // 0.4 s TTL + under a second
  auto c2 = d->client();
  r = post(c2, "/lease/renew?lease_id=" + lease);
  EXPECT_EQ(r.status, 410);
  r = post(c2, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=400000&block=true&lease_id=" + lease);
  EXPECT_EQ(r.status, 410);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
}

TEST_F(Leases, OneLeasePerSettingAndUpstreamClientsUnchanged) {
  auto a = d->client();
  auto b = d->client();
  const std::string la = acquire(a);
  const std::string lb = acquire(b);
  ASSERT_EQ(
      post(a, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true&lease_id=" + la)
          .status,
      200);
  auto r =
      post(b, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=500000&block=true&lease_id=" + lb);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_THAT(r.body, HasSubstr("held by another lease"));
  EXPECT_EQ(node.nvml.power_limit_mw(0), 300000u);
  // Other settings and GPUs are free.
  EXPECT_EQ(
      post(b, "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true&lease_id=" + lb).status,
      200);
  EXPECT_EQ(
      post(b, "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=500000&block=true&lease_id=" + lb)
          .status,
      200);
  // A lease is released explicitly: only its own settings come back.
  EXPECT_EQ(post(a, "/lease/release?lease_id=" + la).status, 200);
  EXPECT_LT(wait_for([&] { return node.nvml.power_limit_mw(0) == 700000u; }), 1000ms);
  EXPECT_EQ(node.nvml.power_limit_mw(1), 500000u);
  EXPECT_TRUE(node.nvml.persistence(0));
  // Without a lease, as upstream: the change stays after the client leaves.
  {
    auto u = d->client();
    EXPECT_EQ(post(u, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=280000&block=true").status,
              200);
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 280000u);
  // Bad lease requests.
  EXPECT_EQ(post(a, "/lease/release?lease_id=nope").status, 410);
  EXPECT_EQ(post(a, "/lease/acquire?ttl_s=-1").status, 400);
  EXPECT_EQ(post(a, "/lease/acquire?ttl_s=1e9").status, 400);
  EXPECT_EQ(post(a, "/lease/acquire?bogus=1").status, 400);
}

TEST_F(Leases, ShutdownRestoresEveryLease) {
  auto c = d->client();
  const std::string lease = acquire(c, "?ttl_s=600");
  ASSERT_EQ(post(c,
                 "/gpu/"
                 "set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=1593&max_clock_mhz=1593&block=true&"
                 "lease_id=" +
                     lease)
                .status,
            200);
  ASSERT_EQ(
      post(c, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=210000&block=true&lease_id=" + lease)
          .status,
      200);
  unsigned lo = 0, hi = 0;
  EXPECT_TRUE(node.nvml.locked_clocks(0, true, lo, hi));
  d->daemon->shutdown();
  EXPECT_FALSE(node.nvml.locked_clocks(0, true, lo, hi));
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
}

}  // namespace
}  // namespace zeus::zeusd::testing
