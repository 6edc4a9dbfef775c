// zeusd's attribution ledger: the split families add up to the energy
// counters of the same scrape to the mJ, GET /attribution, the job registry
// and who may name which processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "support/sleeper.h"
#include "support/temp_dir.h"
#include "zeus/monitor/attribution/node_attributor.h"
#include "zeusd/attribution.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using zeus::testing::Sleeper;

// The tests that fork a child (Sleeper, a client as another user) are in the
// suite ZeusdAttributionChildProcess, which the ThreadSanitizer run skips
// (the Makefile's TSAN_SKIP: TSan does not support fork in a threaded
// process; a poll after such a fork hung there).

using ::testing::HasSubstr;
using ::testing::Not;

// name{labels} value, in integer millijoules.
std::map<std::string, std::int64_t> samples_mj(const std::string& text, const std::string& family) {
  std::map<std::string, std::int64_t> out;
  const std::regex line("^" + family + R"(\{([^}]*)\} (\S+)$)");
  std::smatch m;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (std::regex_match(l, m, line)) out[m[1]] = std::llround(std::stod(m[2]) * 1000);
  }
  return out;
}

std::int64_t share_of(const std::map<std::string, std::int64_t>& split, const std::string& device,
                      const std::string& share) {
  return split.at(device + ",share=\"" + share + "\"");
}

DaemonOptions fast_ledger() {
  DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  o.num_workers = 2;
  o.attribution_interval_s = 0.05;
  o.gpu_idle_w[0] = 50;
  o.pod_resources_socket = "";
  return o;
}

void wait_polls(http::Client& c, int polls) {
  for (int i = 0; i < 400; ++i) {
    auto body = json_of(get(c, "/attribution"));
    if (body.at("polls").get<int>() >= polls) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL() << "the ledger did not poll";
}

TEST(ZeusdAttributionChildProcess, SplitFamiliesAddUpToTheCountersOfTheSameScrapeExactly) {
  FakeNode node;
  Sleeper worker;
  RunningDaemon d(fast_ledger(), node.devices);
  auto c = d.client();
  wait_polls(c, 2);
  unsigned long long t_us = 1'000'000;
  for (int i = 0; i < 20; ++i) {
    for (int k = 0; k < 3; ++k)
      node.nvml.add_process_sample(0, worker.pid(), t_us += 16'667, 80, 5);
    node.nvml.advance_energy_mj(0, 9'001);  // odd amounts: rounding must still add up
    node.nvml.advance_energy_mj(1, 3'333);
    node.powercap.advance_energy("intel-rapl:0", 1'234'567);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  wait_polls(c, json_of(get(c, "/attribution")).at("polls").get<int>() + 2);
  http::Client m(d.daemon->metrics_url());
  const std::string text = m.get("/metrics").body;
  const auto energy = samples_mj(text, "zeus_gpu_energy_joules_total");
  const auto split = samples_mj(text, "zeus_gpu_energy_split_joules_total");
  const auto workloads = samples_mj(text, "zeus_workload_gpu_energy_joules_total");
  for (const std::string gpu : {"0", "1"}) {
    std::string key;
    for (const auto& [labels, v] : energy) {
      if (labels.starts_with("gpu=\"" + gpu + "\"")) key = labels;
    }
    ASSERT_FALSE(key.empty()) << text;
    const std::string device = key.substr(0, key.find(",model_name"));
    EXPECT_EQ(share_of(split, device, "idle") + share_of(split, device, "attributed") +
                  share_of(split, device, "unattributed"),
              energy.at(key))
        << device;
    std::int64_t by_workload = 0;
    for (const auto& [labels, v] : workloads) {
      if (labels.ends_with(device)) by_workload += v;
    }
    EXPECT_EQ(by_workload, share_of(split, device, "attributed")) << device;
  }
  // The worker's samples weighed on GPU 0: it got energy, and the method says how.
  EXPECT_GT(
      share_of(split, R"(gpu="0",uuid="GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000")", "attributed"),
      0);
  // The last interval had no samples left: its method says nobody weighed.
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(zeus_attribution_method_info{gpu="0",uuid="GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000",method="none",estimate="false"} 1)"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(zeus_attribution_idle_power_watts{gpu="0",uuid="GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000",source="configured"} 50)"));
  // CPU zones too.
  const auto package = samples_mj(text, "zeus_cpu_package_energy_joules_total");
  const auto cpu_split = samples_mj(text, "zeus_cpu_energy_split_joules_total");
  const std::string zone = R"(package="0",zone="package-0")";
  EXPECT_EQ(share_of(cpu_split, zone, "idle") + share_of(cpu_split, zone, "attributed") +
                share_of(cpu_split, zone, "unattributed"),
            package.at(zone));
}

TEST(ZeusdAttribution, JsonViewAndItsQuery) {
  FakeNode node(1);
  RunningDaemon d(fast_ledger(), node.devices);
  auto c = d.client();
  wait_polls(c, 1);
  auto r = get(c, "/attribution?processes=true");
  ASSERT_EQ(r.status, 200);
  const auto body = json_of(r);
  EXPECT_TRUE(body.contains("processes"));
  EXPECT_EQ(body.at("devices").at(0).at("kind"), "gpu");
  EXPECT_EQ(body.at("devices").at(0).at("idle_source"), "configured");
  EXPECT_EQ(get(c, "/attribution?bogus=1").status, 400);
  EXPECT_EQ(get(c, "/attribution?processes=maybe").status, 400);
}

TEST(ZeusdAttribution, OffMeansNoLedgerNoFamiliesAndA404) {
  FakeNode node(1);
  DaemonOptions o = fast_ledger();
  o.attribution = false;
  RunningDaemon d(o, node.devices);
  auto c = d.client();
  const auto r = get(c, "/attribution");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("--no-attribution"));
  http::Client m(d.daemon->metrics_url());
  EXPECT_THAT(m.get("/metrics").body, Not(HasSubstr("zeus_gpu_energy_split_joules_total")));
}

TEST(ZeusdAttributionChildProcess, AJobStepsRecordCoversItsProcessesAndEndsOnce) {
  FakeNode node(1);
  Sleeper task;
  RunningDaemon d(fast_ledger(), node.devices);
  auto c = d.client();
  wait_polls(c, 2);
  auto r = post(
      c, "/attribution/jobs/start?job=42&step=0&pids=" + std::to_string(task.pid()) + "&gpus=0");
  ASSERT_EQ(r.status, 200) << r.body;
  unsigned long long t_us = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    node.nvml.add_process_sample(0, task.pid(), t_us += 50'000, 60, 0);
    node.nvml.advance_energy_mj(0, 10'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto running = json_of(get(c, "/attribution/jobs"));
  ASSERT_EQ(running.at("steps").size(), 1u);
  r = post(c, "/attribution/jobs/end?job=42&step=0");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto record = json_of(r);
  EXPECT_EQ(record.at("job"), "42");
  EXPECT_EQ(record.at("step"), "0");
  EXPECT_GT(record.at("gpu_j").get<double>(), 0.0);
  // The step held GPU 0: it gets a share of the GPU's idle, and the method
  // that split its energy, though the end's own poll saw no samples.
  EXPECT_GT(record.at("idle_j").get<double>(), 0.0);
  EXPECT_EQ(record.at("method"), "process_utilization");
  EXPECT_EQ(record.at("gpus").at(0), "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000");
  EXPECT_TRUE(record.contains("end"));
  EXPECT_EQ(post(c, "/attribution/jobs/end?job=42&step=0").status, 404);
  // The step's workload carries the job label in the metrics.
  http::Client m(d.daemon->metrics_url());
  EXPECT_THAT(
      m.get("/metrics").body,
      HasSubstr(R"(cgroup="slurm:42.0",namespace="",pod="",container="",hpc_job="42",gpu="0")"));
}

TEST(ZeusdAttribution, BadJobRequestsAreClearFourHundreds) {
  FakeNode node(1);
  RunningDaemon d(fast_ledger(), node.devices);
  auto c = d.client();
  EXPECT_EQ(post(c, "/attribution/jobs/start?job=4%202&step=0&pids=1").status, 400);
  EXPECT_EQ(post(c, "/attribution/jobs/start?job=42&step=0&pids=0").status, 400);
  EXPECT_EQ(post(c, "/attribution/jobs/start?job=42&step=0&pids=x").status, 400);
  EXPECT_EQ(post(c, "/attribution/jobs/start?job=42&step=0").status, 400);
  const auto r = post(c, "/attribution/jobs/start?job=42&step=0&pids=1&gpus=7");
  ASSERT_EQ(r.status, 200) << r.body;  // accepted; the record says GPU 7 is missing
  const auto record = json_of(post(c, "/attribution/jobs/end?job=42&step=0"));
  EXPECT_THAT(record.at("missing").dump(), HasSubstr("GPU 7"));
}

// A raw HTTP request from a child that runs as `uid` (no threads there).
int status_as_user(const std::string& socket_path, uid_t uid, const std::string& target) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(uid) != 0) ::_exit(101);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) ::_exit(102);
    const std::string req = "POST " + target +
                            " HTTP/1.1\r\nHost: zeusd\r\nContent-Length: 0\r\n"
                            "Connection: close\r\n\r\n";
    if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) ::_exit(103);
    char buf[64] = {};
    const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    if (n < 12) ::_exit(104);
    ::_exit(std::atoi(buf + 9) / 100);  // 4 for 4xx, 2 for 2xx
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ZeusdAttributionChildProcess, AUserCannotRegisterAnotherUsersProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  FakeNode node(1);
  Sleeper roots_process;  // owned by root
  RunningDaemon d(fast_ledger(), node.devices);
  const std::string socket = d.dir + "/zeusd.sock";
  ::chmod(d.dir.c_str(), 0755);
  EXPECT_EQ(status_as_user(
                socket, 65534,
                "/attribution/jobs/start?job=7&step=0&pids=" + std::to_string(roots_process.pid())),
            4);
  auto c = d.client();
  EXPECT_TRUE(json_of(get(c, "/attribution/jobs")).at("steps").empty());
  // Root may.
  EXPECT_EQ(
      post(c, "/attribution/jobs/start?job=7&step=0&pids=" + std::to_string(roots_process.pid()))
          .status,
      200);
}

// Cgroup paths and process names are anyone's text: a quote, a backslash or a
// newline in them must come out escaped, never as a broken or forged line.
TEST(ZeusdAttribution, OddCgroupPathsAndProcessNamesAreEscapedLabels) {
  FakeNode node(1);
  zeus::testing::TempDir proc;
  std::filesystem::create_directories(proc / "4242");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(proc / "4242" / name) << text;
  };
  write("stat", "4242 (odd) S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 777 0 0\n");
  write("comm", "we\"ird\\name\n");
  write("cgroup", "0::/pods/a \"quoted\" \\ path\n");
  ManualClock clock(Seconds(0));
  attribution::AttributorOptions options;
  options.proc_root = proc.path();
  options.cgroup_root = proc.path() + "/no-cgroups";
  options.split_cpu = false;
  std::vector<std::shared_ptr<device::Gpu>> gpus(node.devices.gpus.begin(),
                                                 node.devices.gpus.end());
  attribution::NodeAttributor ledger(gpus, {}, options, clock);
  ledger.poll();
  node.nvml.add_process_sample(0, 4242, 9'000'000, 70, 0);
  node.nvml.advance_energy_mj(0, 5'000);
  clock.advance(Seconds(1));
  ledger.poll();
  std::string out;
  render_attribution(ledger, {R"(gpu="0")"}, true, out);
  EXPECT_THAT(out, HasSubstr(R"(cgroup="/pods/a \"quoted\" \\ path")")) << out;
  EXPECT_THAT(out, HasSubstr(R"(comm="we\"ird\\name")"));
  for (std::istringstream in(out); !in.eof();) {
    std::string line;
    std::getline(in, line);
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(line.starts_with("zeus_")) << line;  // no forged line
  }
}

}  // namespace
}  // namespace zeus::zeusd::testing
