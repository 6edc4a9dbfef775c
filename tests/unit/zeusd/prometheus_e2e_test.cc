// End to end with a real Prometheus (Debian's `prometheus`, started here on
// loopback with a temp dir and stopped afterwards): it scrapes zeusd's
// /metrics for simulated GPUs and a fake RAPL package, and the series read
// back through Prometheus's HTTP query API match the simulated GPUs' model.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "util/process.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/util/files.h"
#include "zeus/zeusd/metrics.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using namespace std::chrono_literals;

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

// A Prometheus server for the length of a test.
class Prometheus {
 public:
  Prometheus(const std::string& dir, const std::string& target) {
    port_ = free_port();
    const std::string config = dir + "/prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                             "scrape_configs:\n  - job_name: zeusd\n    static_configs:\n"
                             "      - targets: ['"
                          << target << "']\n";
    pid_ = spawn_process(
        {"prometheus", "--config.file=" + config, "--storage.tsdb.path=" + dir + "/data",
         "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        /*quiet=*/true);
  }
  ~Prometheus() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  // The instant vector of `promql`, or an empty array while unavailable.
  nlohmann::json query(const std::string& promql) {
    try {
      http::Client c("http://127.0.0.1:" + std::to_string(port_));
      const auto r = c.get("/api/v1/query?query=" + http::url_encode(promql));
      if (r.status != 200) return nlohmann::json::array();
      return nlohmann::json::parse(r.body)["data"]["result"];
    } catch (const std::exception&) {
      return nlohmann::json::array();
    }
  }
  nlohmann::json wait_for(const std::string& promql, std::size_t series,
                          std::chrono::seconds limit = 60s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      auto v = query(promql);
      if (v.size() >= series || std::chrono::steady_clock::now() - t0 > limit) return v;
      std::this_thread::sleep_for(250ms);
    }
  }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
};

double value_of(const nlohmann::json& vector, const std::string& label, const std::string& want) {
  for (const auto& s : vector) {
    if (s["metric"].value(label, "") == want) return std::stod(s["value"][1].get<std::string>());
  }
  ADD_FAILURE() << "no series with " << label << "=" << want << " in " << vector.dump();
  return -1;
}

TEST(PrometheusEndToEnd, ScrapedSeriesMatchTheSimulatedGpus) {
  const std::string dir = make_temp_dir("zeusd_prom");
  device::SimGpuModel model;  // 90 W idle, 300 W busy, limits 100..300 W
  std::vector<std::shared_ptr<device::SimGpu>> sims;
  DaemonDevices devices;
  for (int i = 0; i < 2; ++i) {
    sims.push_back(std::make_shared<device::SimGpu>(model, SteadyClock::instance(), i));
    devices.gpus.push_back(sims.back());
  }
  FakePowercap powercap;
  powercap.add_zone("intel-rapl:0", "package-0", 42'000'000);
  powercap.add_zone("intel-rapl:0:0", "dram", 3'000'000, zeus::testing::kIntelDramRangeUj);
  device::RaplOptions r;
  r.root = powercap.root();
  for (auto& c : device::open_rapl_cpus(r).cpus) devices.cpus.push_back(std::move(c));

  DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  o.num_workers = 1;
  RunningDaemon d(o, devices);
  // GPU 1 under a 200 W cap, through the API like any client.
  auto c = d.client();
  ASSERT_EQ(post(c, "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=200000&block=true").status, 200);

  const std::string target = d.daemon->metrics_url().substr(std::string("http://").size());
  Prometheus prom(dir, target);
  const auto limits = prom.wait_for("zeus_gpu_power_limit_watts", 2);
  ASSERT_EQ(limits.size(), 2u) << "Prometheus did not scrape zeusd in time";
  EXPECT_EQ(value_of(limits, "gpu", "0"), 300.0);
  EXPECT_EQ(value_of(limits, "gpu", "1"), 200.0);
  EXPECT_EQ(limits[0]["metric"]["job"], "zeusd");
  EXPECT_EQ(limits[0]["metric"]["model_name"], model.name);

  const auto power = prom.query("zeus_gpu_power_watts");
  EXPECT_NEAR(value_of(power, "gpu", "0"), model.power_at(Milliwatts(300000)).value(), 1e-6);
  EXPECT_NEAR(value_of(power, "gpu", "1"), model.power_at(Milliwatts(200000)).value(), 1e-6);

  // The DCGM exporter's names and labels, as its dashboards query them: the
  // capped GPU runs slower and says the power cap is why.
  const auto sm = prom.query("DCGM_FI_DEV_SM_CLOCK");
  ASSERT_EQ(sm.size(), 2u);
  EXPECT_EQ(value_of(sm, "gpu", "0"), 1410.0);
  EXPECT_EQ(value_of(sm, "gpu", "1"),
            std::round(model.clock_fraction_at(Milliwatts(200000)) * 1410.0));
  EXPECT_EQ(sm[0]["metric"]["modelName"], model.name);
  EXPECT_TRUE(sm[0]["metric"].contains("UUID"));
  EXPECT_EQ(sm[0]["metric"]["hostname"], zeus::zeusd::host_name());  // dcgm-exporter's new name
  EXPECT_FALSE(sm[0]["metric"].contains("Hostname"));
  const auto reasons = prom.query("DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
  EXPECT_EQ(value_of(reasons, "gpu", "0"), 0.0);
  EXPECT_EQ(value_of(reasons, "gpu", "1"), 4.0);  // sw_power_cap
  EXPECT_EQ(value_of(prom.query("DCGM_FI_DEV_GPU_UTIL"), "gpu", "0"), 100.0);

  // The energy counter grows at the model's power: the slope between the
  // first and last stored samples (raw, so no extrapolation is involved).
  const auto samples = prom.wait_for("count_over_time(zeus_gpu_energy_joules_total[1m]) >= 4", 2);
  ASSERT_EQ(samples.size(), 2u);
  const auto series = prom.query("zeus_gpu_energy_joules_total[1m]");
  ASSERT_EQ(series.size(), 2u);
  for (const auto& s : series) {
    const auto& v = s["values"];
    ASSERT_GE(v.size(), 4u);
    const double slope =
        (std::stod(v.back()[1].get<std::string>()) - std::stod(v.front()[1].get<std::string>())) /
        (v.back()[0].get<double>() - v.front()[0].get<double>());
    const Milliwatts limit(s["metric"]["gpu"] == "0" ? 300000 : 200000);
    // Scrape timestamps are taken when a scrape starts, not when the GPU is read.
    EXPECT_NEAR(slope, model.power_at(limit).value(), 0.05 * model.power_at(limit).value());
  }
  // ... and its value is the simulator's own energy count.
  const auto energy = prom.query("zeus_gpu_energy_joules_total");
  EXPECT_LE(value_of(energy, "gpu", "0"), sims[0]->total_energy().value());
  EXPECT_GT(value_of(energy, "gpu", "0"), sims[0]->total_energy().value() - 300.0 * 10);

  const auto cpu = prom.query("zeus_cpu_package_energy_joules_total");
  EXPECT_EQ(value_of(cpu, "zone", "package-0"), 42.0);
  EXPECT_EQ(value_of(prom.query("zeus_cpu_dram_energy_joules_total"), "zone", "package-0"), 3.0);

  // Every query of the Grafana dashboard in docs/ is valid PromQL that finds data.
  const auto dash = nlohmann::json::parse(
      read_file(std::string(ZEUS_SOURCE_DIR) + "/docs/grafana/zeus-node.json"));
  int checked = 0;
  for (const auto& panel : dash["panels"]) {
    for (const auto& t : panel["targets"]) {
      std::string expr = t["expr"];
      for (const auto& [from, to] : {std::pair<std::string, std::string>{"$instance", ".*"},
                                     {"$hostname", zeus::zeusd::host_name()},
                                     {"$__range", "1m"}}) {
        for (auto at = expr.find(from); at != std::string::npos; at = expr.find(from)) {
          expr.replace(at, from.size(), to);
        }
      }
      // Pushgateway panels need a job pushing; workload panels need a process
      // on a GPU (simulated GPUs name none) or a RAPL counter that moves.
      const bool may_be_empty = expr.find("energy_monitor_") != std::string::npos ||
                                expr.find("zeus_workload_") != std::string::npos;
      const auto v = prom.query(expr);
      if (!may_be_empty) {
        EXPECT_FALSE(v.empty()) << panel["title"] << ": " << expr;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 14);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::zeusd::testing
