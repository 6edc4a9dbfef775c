// The Pushgateway metric classes against a real Pushgateway (Debian's
// prometheus-pushgateway, started here on loopback and stopped afterwards):
// what our EnergyHistogram, EnergyCumulativeCounter and PowerGauge push must
// look, to the gateway, exactly like what the Python Zeus classes push
// (prometheus_client with the same declarations, run alongside): same metric
// names, types and label names; and the values must be the simulated
// devices' energies.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "fakes/powercap/fake_powercap.h"
#include "util/process.h"
#include "zeus/device/rapl.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/http/client.h"
#include "zeus/metric/pushgateway.h"
#include "zeus/util/error.h"

namespace zeus::metric {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using zeus::Error;

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

class Gateway {
 public:
  Gateway() : port_(free_port()) {
    pid_ = spawn_process(
        {"prometheus-pushgateway", "--web.listen-address=127.0.0.1:" + std::to_string(port_),
         "--log.level=warn"},
        true);
    for (int i = 0; i < 400; ++i) {
      try {
        if (http::Client(url()).get("/-/ready").status == 200) return;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(25ms);
    }
  }
  ~Gateway() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Every sample line the gateway exposes for `job`, as name{labels} -> value.
  std::map<std::string, double> samples(const std::string& job) const {
    const auto r = http::Client(url()).get("/metrics");
    std::map<std::string, double> out;
    std::istringstream in(r.body);
    std::string line;
    const std::string needle = "job=\"" + job + "\"";
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || line.find(needle) == std::string::npos) continue;
      const auto space = line.rfind(' ');
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return out;
  }
  // name -> (TYPE, label names without job/instance) for `job`'s samples.
  std::map<std::string, std::set<std::string>> shape(const std::string& job) const {
    std::map<std::string, std::set<std::string>> out;
    for (const auto& [series, value] : samples(job)) {
      const auto brace = series.find('{');
      std::set<std::string> labels;
      static const std::regex label(R"re(([a-zA-Z_]+)=")re");
      const std::string inside = series.substr(brace);
      for (auto it = std::sregex_iterator(inside.begin(), inside.end(), label);
           it != std::sregex_iterator(); ++it) {
        const std::string name = (*it)[1];
        if (name != "job" && name != "instance") labels.insert(name);
      }
      out[series.substr(0, brace)].insert(labels.begin(), labels.end());
    }
    return out;
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

int run_python_peer(const std::string& gateway, const std::string& job, double gpu, double cpu,
                    double dram, double power) {
  const std::string script =
      std::string(ZEUS_SOURCE_DIR) + "/tests/unit/metric/python_metrics_peer.py";
  const pid_t pid =
      spawn_process({"/usr/bin/python3", script, gateway, job, std::to_string(gpu),
                     std::to_string(cpu), std::to_string(dram), std::to_string(power)},
                    true);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Node {
  Node() {
    powercap.add_zone("intel-rapl:0", "package-0", 0);
    powercap.add_zone("intel-rapl:0:0", "dram", 0, zeus::testing::kIntelDramRangeUj);
    device::RaplOptions r;
    r.root = powercap.root();
    for (auto& c : device::open_rapl_cpus(r).cpus) inv.cpus.push_back(std::move(c));
  }
  void add_gpus(Clock& clock, int n) {
    for (int i = 0; i < n; ++i) {
      sims.push_back(std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock, i));
      inv.gpus.push_back(sims.back());
      inv.gpu_physical_indices.push_back(static_cast<unsigned>(i));
    }
    inv.gpu_backend = "sim";
  }
  zeus::testing::FakePowercap powercap;
  std::vector<std::shared_ptr<device::SimGpu>> sims;
  device::DeviceInventory inv;
};

TEST(Pushgateway, HistogramMatchesThePythonClassesAndTheModel) {
  Gateway gw;
  Node node;
  ManualClock clock;
  node.add_gpus(clock, 1);
  EnergyHistogram h(node.inv, {0}, {0}, gw.url(), "cpp_histogram", {50, 100, 200, 500, 1000},
                    {10, 50, 100, 500, 1000}, {5, 10, 20, 50, 150}, &clock);
  h.begin_window("w");
  clock.advance(Seconds(1.0));  // 300 W for 1 s on the default model
  node.powercap.advance_energy("intel-rapl:0", 40'000'000);
  node.powercap.advance_energy("intel-rapl:0:0", 7'000'000);
  const monitor::Measurement m = h.end_window("w");
  EXPECT_DOUBLE_EQ(m.gpu_energy.at(0).value(), 300.0);
  const auto ours = gw.samples("cpp_histogram");
  EXPECT_DOUBLE_EQ(
      ours.at(
          R"(energy_monitor_gpu_energy_joules_sum{index="0",instance="",job="cpp_histogram",window="w"})"),
      300.0);
  EXPECT_DOUBLE_EQ(
      ours.at(
          R"(energy_monitor_gpu_energy_joules_bucket{index="0",instance="",job="cpp_histogram",window="w",le="200"})"),
      0.0);
  EXPECT_DOUBLE_EQ(
      ours.at(
          R"(energy_monitor_gpu_energy_joules_bucket{index="0",instance="",job="cpp_histogram",window="w",le="500"})"),
      1.0);
  EXPECT_DOUBLE_EQ(
      ours.at(
          R"(energy_monitor_cpu_energy_joules_sum{index="0",instance="",job="cpp_histogram",window="w"})"),
      40.0);
  EXPECT_DOUBLE_EQ(
      ours.at(
          R"(energy_monitor_dram_energy_joules_sum{index="0",instance="",job="cpp_histogram",window="w"})"),
      7.0);
  ASSERT_EQ(run_python_peer(gw.url(), "py", 300, 40, 7, 300), 0);
  EXPECT_EQ(gw.shape("cpp_histogram"), gw.shape("py_histogram"));
  EXPECT_FALSE(gw.shape("py_histogram").empty());
}

TEST(Pushgateway, CounterAndGaugeMatchThePythonClasses) {
  Gateway gw;
  Node node;
  node.add_gpus(SteadyClock::instance(), 1);
  {
    EnergyCumulativeCounter c(node.inv, {0}, {0}, Seconds(0.1), gw.url(), "cpp_counter");
    PowerGauge g(node.inv, {0}, Seconds(0.1), gw.url(), "cpp_gauge");
    c.begin_window("w");
    g.begin_window("w");
    EXPECT_THROW(g.begin_window("w"), Error);
    std::this_thread::sleep_for(350ms);
    c.end_window("w");
    g.end_window("w");
    EXPECT_THROW(c.end_window("w"), Error);
  }
  const auto ours = gw.samples("cpp_counter");
  const double joules = ours.at(
      R"(energy_monitor_gpu_energy_joules_total{index="0",instance="",job="cpp_counter",window="w"})");
  EXPECT_GT(joules, 300.0 * 0.3);  // 300 W for ~0.35 s
  EXPECT_LT(joules, 300.0 * 1.0);
  EXPECT_DOUBLE_EQ(
      gw.samples("cpp_gauge")
          .at(R"(power_monitor_gpu_power_watts{index="0",instance="",job="cpp_gauge",window="w"})"),
      300.0);
  ASSERT_EQ(run_python_peer(gw.url(), "py", joules, 1, 1, 300), 0);
  // The counter without DRAM traffic has every family the Python one has.
  EXPECT_EQ(gw.shape("cpp_counter"), gw.shape("py_counter"));
  EXPECT_EQ(gw.shape("cpp_gauge"), gw.shape("py_gauge"));
}

TEST(Pushgateway, BadInputsAndAnUnreachableGateway) {
  Node node;
  ManualClock clock;
  node.add_gpus(clock, 1);
  EXPECT_THROW(EnergyHistogram(node.inv, {}, {0}, "http://127.0.0.1:1", "j", {}), Error);
  EnergyHistogram h(node.inv, {}, {0}, "127.0.0.1:1", "j", {50}, {10}, {5}, &clock);
  h.begin_window("w");
  try {
    h.end_window("w");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_THAT(e.what(), HasSubstr("Pushgateway at http://127.0.0.1:1"));
  }
}

}  // namespace
}  // namespace zeus::metric
