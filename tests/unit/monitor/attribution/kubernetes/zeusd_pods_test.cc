// Pod labels end to end: zeusd reads a real gRPC kubelet (the fake one,
// speaking the v1 PodResources proto on a Unix socket) and labels the
// workloads of the processes on each pod's GPU; per-pod energy adds up to
// the GPU's attributed share in the same scrape.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "fakes/kubelet/fake_kubelet.h"
#include "support/sleeper.h"
#include "unit/monitor/attribution/real_cgroups.h"
#include "unit/zeusd/zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using zeus::testing::Sleeper;

using ::testing::HasSubstr;

attribution::PodResources pod(const std::string& ns, const std::string& name,
                              const std::string& container, const std::string& device) {
  attribution::PodResources p;
  p.name = name;
  p.namespace_ = ns;
  attribution::ContainerResources c;
  c.name = container;
  c.devices.push_back({"nvidia.com/gpu", {device}});
  p.containers.push_back(c);
  return p;
}

// The value of name{labels} lines whose labels contain `part`, summed, in mJ.
std::int64_t sum_mj(const std::string& text, const std::string& family, const std::string& part) {
  std::int64_t total = 0;
  const std::regex line("^" + family + R"(\{([^}]*)\} (\S+)$)");
  std::smatch m;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (std::regex_match(l, m, line) && m[1].str().find(part) != std::string::npos) {
      total += std::llround(std::stod(m[2]) * 1000);
    }
  }
  return total;
}

TEST(ZeusdPods, WorkloadsOnAPodsGpuCarryItsLabelsAndAddUpToTheAttributedShare) {
  FakeNode node(2);
  const std::string dir = make_temp_dir("kubelet");
  zeus::testing::FakeKubelet kubelet(dir + "/kubelet.sock");
  kubelet.set_pods({pod("ml", "trainer-0", "main", "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000"),
                    pod("web", "serve-1", "api", "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000001")});
  // Each pod's container is a cgroup of its own, as on a real node.
  std::string why;
  const std::string hierarchy = attribution::testing::counter_hierarchy();
  if (hierarchy.empty()) GTEST_SKIP() << "no cgroup CPU counters on this machine";
  const std::string tag = std::to_string(::getpid());
  auto trainer_cgroup =
      attribution::testing::RealCgroup::create(hierarchy, "zeus-pod-trainer-" + tag, why);
  if (!trainer_cgroup) GTEST_SKIP() << why;
  auto server_cgroup =
      attribution::testing::RealCgroup::create(hierarchy, "zeus-pod-server-" + tag, why);
  if (!server_cgroup) GTEST_SKIP() << why;
  Sleeper trainer, server;
  trainer_cgroup->add(static_cast<pid_t>(trainer.pid()));
  server_cgroup->add(static_cast<pid_t>(server.pid()));
  DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  o.num_workers = 1;
  o.attribution_interval_s = 0.05;
  o.pod_resources_socket = kubelet.socket_path();
  RunningDaemon d(o, node.devices);
  auto c = d.client();
  unsigned long long t_us = 1'000'000;
  for (int i = 0; i < 20; ++i) {
    node.nvml.add_process_sample(0, trainer.pid(), t_us += 10'000, 90, 0);
    node.nvml.add_process_sample(1, server.pid(), t_us += 10'000, 30, 0);
    node.nvml.advance_energy_mj(0, 20'003);
    node.nvml.advance_energy_mj(1, 7'001);
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  EXPECT_GE(kubelet.calls(), 1);
  http::Client m(d.daemon->metrics_url());
  const std::string text = m.get("/metrics").body;
  EXPECT_THAT(text,
              HasSubstr(R"(namespace="ml",pod="trainer-0",container="main",hpc_job="",gpu="0")"));
  EXPECT_THAT(text,
              HasSubstr(R"(namespace="web",pod="serve-1",container="api",hpc_job="",gpu="1")"));
  for (const std::string gpu : {"0", "1"}) {
    const std::string device = "gpu=\"" + gpu + "\"";
    const auto attributed = sum_mj(text, "zeus_gpu_energy_split_joules_total",
                                   device + R"(,uuid="GPU-1a2b3c4d-5e6f-4a1b-8c2d-00000000000)" +
                                       gpu + R"(",share="attributed")");
    EXPECT_GT(attributed, 0);
    EXPECT_EQ(sum_mj(text, "zeus_workload_gpu_energy_joules_total", device), attributed) << gpu;
  }
  std::filesystem::remove_all(dir);
}

TEST(ZeusdPods, AKubeletThatGoesAwayKeepsTheLabelsAndTheDaemonRuns) {
  FakeNode node(1);
  const std::string dir = make_temp_dir("kubelet");
  auto kubelet = std::make_unique<zeus::testing::FakeKubelet>(dir + "/kubelet.sock");
  kubelet->set_pods({pod("ml", "trainer-0", "main", "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000")});
  Sleeper trainer;
  DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  o.num_workers = 1;
  o.attribution_interval_s = 0.05;
  o.pod_resources_socket = kubelet->socket_path();
  o.pod_resources_refresh_s = 0.05;  // every poll: the failures below are really met
  RunningDaemon d(o, node.devices);
  node.nvml.add_process_sample(0, trainer.pid(), 2'000'000, 90, 0);
  node.nvml.advance_energy_mj(0, 5'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int calls = kubelet->calls();
  EXPECT_GE(calls, 2);
  kubelet.reset();  // the kubelet exits: its socket is gone
  node.nvml.add_process_sample(0, trainer.pid(), 3'000'000, 90, 0);
  node.nvml.advance_energy_mj(0, 5'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  http::Client m(d.daemon->metrics_url());
  EXPECT_THAT(m.get("/metrics").body, HasSubstr(R"(pod="trainer-0")"));
  auto c = d.client();
  EXPECT_EQ(get(c, "/attribution").status, 200);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::zeusd::testing
