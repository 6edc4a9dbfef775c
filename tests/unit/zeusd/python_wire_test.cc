// Wire compatibility with the Python Zeus client: tests/unit/zeusd/
// wire_check.py runs as an unprivileged user against a daemon (simulated
// GPUs, a fake RAPL package, authentication on). With ZEUS_UPSTREAM_DIR set to
// a checkout of the Python Zeus it drives that project's own ZeusdClient and
// PowerStreamingClient; otherwise its standard-library client issues the same
// requests.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "zeus/device/sim_gpu.h"
#include "zeus/zeusd/jwt.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using namespace std::chrono_literals;

TEST(PythonWire, ClientWorksUnchangedAgainstOurDaemon) {
  DaemonDevices devices;
  device::SimGpuModel model;
  for (int i = 0; i < 2; ++i) {
    devices.gpus.push_back(std::make_shared<device::SimGpu>(model, SteadyClock::instance(), i));
  }
  FakePowercap powercap;
  powercap.add_zone("intel-rapl:0", "package-0", 1'000'000);
  powercap.add_zone("intel-rapl:0:0", "dram", 1'000'000, zeus::testing::kIntelDramRangeUj);
  device::RaplOptions r;
  r.root = powercap.root();
  for (auto& c : device::open_rapl_cpus(r).cpus) devices.cpus.push_back(std::move(c));
  std::atomic<bool> stop{false};
  std::thread feeder([&] {
    while (!stop) {
      powercap.advance_energy("intel-rapl:0", 3'000'000);
      powercap.advance_energy("intel-rapl:0:0", 1'000'000);
      std::this_thread::sleep_for(20ms);
    }
  });

  const std::string keydir = make_temp_dir("zeusd_wire_key");
  const std::string key = "wire-key-wire-key-wire-key-wire-key-wire-key";
  DaemonOptions o;
  o.signing_key_path = write_signing_key(keydir, key);
  o.num_workers = 2;
  auto d = std::make_unique<RunningDaemon>(o, devices);
  ASSERT_EQ(::chmod(d->dir.c_str(), 0755), 0);
  const std::string token =
      issue_token(key, {"wire",
                        {ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead},
                        static_cast<std::int64_t>(std::time(nullptr)) + 600});
  const std::string script = std::string(ZEUS_SOURCE_DIR) + "/tests/unit/zeusd/wire_check.py";
  std::vector<std::string> args = {
      "/usr/bin/python3", script, d->dir + "/zeusd.sock", token, "2", "1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    // The client is an ordinary user: root-only settings reach the GPUs only through zeusd.
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(125);
    ::setenv("HOME", "/tmp", 1);
    ::execv("/usr/bin/python3", argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string said;
  pollfd p{out[0], POLLIN, 0};
  while (::poll(&p, 1, 60000) > 0) {
    char buf[4096];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  stop = true;
  feeder.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said;
  EXPECT_THAT(said, ::testing::HasSubstr("OK "));
  std::printf("%s", said.c_str());
  d.reset();
  std::filesystem::remove_all(keydir);
}

}  // namespace
}  // namespace zeus::zeusd::testing
