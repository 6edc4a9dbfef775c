// zeusd's performance goals (docs/benchmarks.md, "zeusd"):
//   * GET /gpu/get_power for 8 GPUs over the Unix socket: p50 < 50 us;
//   * a set command: < 100 us beyond the device call;
//   * 8 GPUs streamed at 20 Hz to 100 SSE subscribers: < 5% of a core;
//   * a /metrics scrape for 8 GPUs + 2 packages: < 1 ms, no allocation per
//     scrape beyond the response text.
// GPUs are the fake NVML (through the real NVML backend), CPUs a fake
// powercap tree. Latency benchmarks report p50/p99 counters next to the mean.
#include <benchmark/benchmark.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <thread>

#include "bench_support.h"
#include "fakes/powercap/fake_powercap.h"
#include "zeus/device/rapl.h"
#include "zeus/http/client.h"
#include "zeus/zeusd/daemon.h"
#include "zeus/zeusd/metrics.h"

// Allocation counter for the scrape benchmark (counts only while armed). The
// replacement operators pair malloc with free, which GCC cannot see through
// once they are inlined into library templates.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<bool> g_count_allocs{false};
std::atomic<std::size_t> g_allocs{0};
}  // namespace
void* operator new(std::size_t n) {
  if (g_count_allocs.load(std::memory_order_relaxed))
    g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's buffer comes from them): left to
// the runtime, their blocks reached the free() below, which AddressSanitizer
// reports as an alloc-dealloc mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_count_allocs.load(std::memory_order_relaxed))
    g_allocs.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace zeus::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() /
                   ("zeusd_bench_" + std::to_string(::getpid()) + "_XXXXXX"))
                      .string();
  if (::mkdtemp(t.data()) == nullptr) std::abort();
  return t;
}

// A daemon on a Unix socket over `gpus` fake NVML GPUs and two RAPL packages.
struct Node {
  explicit Node(int gpus, zeusd::DaemonOptions o = {}) : dir(temp_dir()) {
    auto inv = fake_nvml_gpus(fake, gpus);
    powercap.add_zone("intel-rapl:0", "package-0", 1'000'000);
    powercap.add_zone("intel-rapl:0:0", "dram", 1'000'000, testing::kIntelDramRangeUj);
    powercap.add_zone("intel-rapl:1", "package-1", 1'000'000);
    device::RaplOptions r;
    r.root = powercap.root();
    auto cpus = device::open_rapl_cpus(r);
    devices.gpus = inv.gpus;
    for (auto& c : cpus.cpus) devices.cpus.push_back(std::move(c));
    o.socket_path = dir + "/zeusd.sock";
    if (o.num_workers == 0) o.num_workers = 2;
    daemon = std::make_unique<zeusd::Daemon>(o, devices);
    daemon->start();
  }
  ~Node() {
    daemon.reset();
    devices = {};
    std::filesystem::remove_all(dir);
  }
  testing::FakeNvml fake;
  testing::FakePowercap powercap;
  std::string dir;
  zeusd::DaemonDevices devices;
  std::unique_ptr<zeusd::Daemon> daemon;
};

void report_percentiles(benchmark::State& state, std::vector<double>& us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[us.size() * 99 / 100];
}

void BM_ZeusdGetPower8GpusUds(benchmark::State& state) {
  Node node(8);
  http::Client c(node.daemon->api_url());
  std::vector<double> us;
  us.reserve(1 << 20);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const auto r = c.get("/gpu/get_power");
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (r.status != 200) state.SkipWithError("status");
    benchmark::DoNotOptimize(r);
  }
  report_percentiles(state, us);
}
BENCHMARK(BM_ZeusdGetPower8GpusUds)->UseRealTime()->MinTime(zeus::bench::full_or_smoke(2.0, 0.01));

// The device call alone (what a set command costs without zeusd).
void BM_DeviceSetPowerLimit(benchmark::State& state) {
  testing::FakeNvml fake;
  auto inv = fake_nvml_gpus(fake, 8);
  std::int64_t mw = 300000;
  std::vector<double> us;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    inv.gpus[0]->set_power_limit(Milliwatts(mw));
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    mw = mw == 300000 ? 310000 : 300000;
  }
  report_percentiles(state, us);
}
BENCHMARK(BM_DeviceSetPowerLimit)->UseRealTime()->MinTime(zeus::bench::full_or_smoke(1.0, 0.01));

// The same set through zeusd (block=true): the difference is zeusd's cost.
void BM_ZeusdSetPowerLimitUds(benchmark::State& state) {
  Node node(8);
  http::Client c(node.daemon->api_url());
  std::int64_t mw = 300000;
  std::vector<double> us;
  us.reserve(1 << 20);
  for (auto _ : state) {
    const std::string target =
        "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + std::to_string(mw) + "&block=true";
    const auto t0 = Clock::now();
    const auto r = c.request(http::Method::kPost, target);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (r.status != 200) state.SkipWithError("status");
    mw = mw == 300000 ? 310000 : 300000;
  }
  report_percentiles(state, us);
}
BENCHMARK(BM_ZeusdSetPowerLimitUds)->UseRealTime()->MinTime(zeus::bench::full_or_smoke(2.0, 0.01));

// One scrape rendered into a reused buffer: time and allocations.
void BM_MetricsRender8Gpus2Packages(benchmark::State& state) {
  testing::FakeNvml fake;
  auto inv = fake_nvml_gpus(fake, 8);
  testing::FakePowercap powercap;
  powercap.add_zone("intel-rapl:0", "package-0", 1'000'000);
  powercap.add_zone("intel-rapl:0:0", "dram", 1'000'000, testing::kIntelDramRangeUj);
  powercap.add_zone("intel-rapl:1", "package-1", 1'000'000);
  device::RaplOptions r;
  r.root = powercap.root();
  auto set = device::open_rapl_cpus(r);
  std::vector<std::shared_ptr<device::Cpu>> cpus;
  for (auto& c : set.cpus) cpus.push_back(std::move(c));
  zeusd::MetricsRenderer m(inv.gpus, cpus);
  std::string out;
  m.render(out);
  out.reserve(out.size() * 2);
  std::size_t allocs = 0, scrapes = 0;
  for (auto _ : state) {
    out.clear();
    g_allocs.store(0);
    g_count_allocs.store(true);
    m.render(out);
    g_count_allocs.store(false);
    allocs += g_allocs.load();
    ++scrapes;
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["allocs_per_scrape"] = static_cast<double>(allocs) / static_cast<double>(scrapes);
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_MetricsRender8Gpus2Packages)
    ->UseRealTime()
    ->MinTime(zeus::bench::full_or_smoke(1.0, 0.01));

// The whole scrape over HTTP (a TCP GET /metrics as Prometheus does it).
void BM_MetricsScrapeHttp(benchmark::State& state) {
  zeusd::DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  Node node(8, o);
  http::Client c(node.daemon->metrics_url());
  std::vector<double> us;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const auto r = c.get("/metrics");
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (r.status != 200) state.SkipWithError("status");
  }
  report_percentiles(state, us);
}
BENCHMARK(BM_MetricsScrapeHttp)->UseRealTime()->MinTime(zeus::bench::full_or_smoke(1.0, 0.01));

// 100 SSE subscribers in a child process read /gpu/stream_power for 8 GPUs
// polled at 20 Hz; the fake's power changes before every poll so every
// sample is an event (the worst case: 16,000 events/s). Reports the daemon
// process's CPU time per wall second, minus the same run without subscribers.
double daemon_cpu_fraction(int subscribers, double seconds) {
  zeusd::DaemonOptions o;
  o.gpu_power_poll_hz = 20;
  Node node(8, o);
  const std::string sock = node.dir + "/zeusd.sock";
  pid_t child = -1;
  int ready[2];
  if (::pipe(ready) != 0) std::abort();
  if (subscribers > 0) {
    child = ::fork();
    if (child == 0) {
      std::vector<int> fds;
      for (int i = 0; i < subscribers; ++i) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", sock.c_str());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ::_exit(2);
        const char req[] = "GET /gpu/stream_power HTTP/1.1\r\nHost: x\r\n\r\n";
        if (::write(fd, req, sizeof req - 1) < 0) ::_exit(3);
        fds.push_back(fd);
      }
      if (::write(ready[1], "r", 1) < 0) ::_exit(4);
      std::vector<pollfd> p;
      for (int fd : fds) p.push_back({fd, POLLIN, 0});
      char buf[65536];
      for (;;) {
        if (::poll(p.data(), p.size(), 1000) < 0) ::_exit(5);
        for (auto& x : p) {
          if (x.revents & POLLIN) {
            if (::read(x.fd, buf, sizeof buf) <= 0) ::_exit(0);
          }
        }
      }
    }
    char c;
    if (::read(ready[0], &c, 1) != 1) std::abort();
  }
  std::atomic<bool> stop{false};
  std::thread changer([&] {
    unsigned k = 0;
    while (!stop) {
      ++k;
      for (unsigned g = 0; g < 8; ++g)
        node.fake.set_power_mw(g, 100000 + (k % 1000) + g, 100000, 20000);
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // subscribers connected
  rusage r0{}, r1{};
  ::getrusage(RUSAGE_SELF, &r0);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  ::getrusage(RUSAGE_SELF, &r1);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  changer.join();
  const auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6;
  };
  const double cpu = secs(r1.ru_utime) - secs(r0.ru_utime) + secs(r1.ru_stime) - secs(r0.ru_stime);
  if (child > 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  ::close(ready[0]);
  ::close(ready[1]);
  return cpu / wall;
}

void BM_ZeusdStream8Gpus20HzTo100Subscribers(benchmark::State& state) {
  for (auto _ : state) {
    using zeus::bench::full_or_smoke;
    const double seconds = full_or_smoke(5.0, 0.2);
    const double base = daemon_cpu_fraction(0, seconds);
    const double with = daemon_cpu_fraction(full_or_smoke(100, 5), seconds);
    state.counters["core_percent"] = 100.0 * (with - base);
    state.counters["baseline_core_percent"] = 100.0 * base;
  }
}
BENCHMARK(BM_ZeusdStream8Gpus20HzTo100Subscribers)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace zeus::bench

ZEUS_QUIET_BENCHMARK_MAIN();
