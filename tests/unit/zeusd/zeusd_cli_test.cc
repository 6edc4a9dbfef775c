// The zeusd program: token issue, serve on a Unix socket with simulated GPUs
// and a fake RAPL tree until SIGTERM, exit codes for bad flags and for groups
// that need root.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "fakes/amdsmi/fake_amdsmi_control.h"
#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/zeusd/jwt.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

const std::string kZeusd = std::string(ZEUS_BINARY_DIR) + "/bin/zeusd";

// Runs a shell command line, returns (exit status, stdout+stderr).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) out += buf.data();
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(ZeusdCli, TokenIssuePrintsAVerifiableToken) {
  const std::string dir = make_temp_dir("zeusd_cli");
  const std::string key = "k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y";
  write_signing_key(dir, key);
  auto [rc, out] = run(kZeusd + " token issue --signing-key-path " + dir +
                       "/key --user alice --scope gpu-read,cpu-read --expires 1h");
  ASSERT_EQ(rc, 0) << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  const auto claims = verify_token(key, out, static_cast<std::int64_t>(std::time(nullptr)));
  EXPECT_EQ(claims.sub, "alice");
  EXPECT_EQ(claims.scopes, (std::vector<ApiGroup>{ApiGroup::kGpuRead, ApiGroup::kCpuRead}));
  ASSERT_TRUE(claims.exp);
  EXPECT_NEAR(static_cast<double>(*claims.exp), static_cast<double>(std::time(nullptr) + 3600), 10);
  std::tie(rc, out) = run(kZeusd + " token issue --signing-key-path " + dir +
                          "/key --user a --scope gpu-write --expires 1h");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("unknown API group 'gpu-write'"));
  std::tie(rc, out) = run(kZeusd + " token issue --signing-key-path " + dir +
                          "/key --user a --scope gpu-read --expires soon");
  EXPECT_EQ(rc, 2);
  std::tie(rc, out) = run(kZeusd + " token issue --signing-key-path " + dir +
                          "/missing --user a --scope gpu-read --expires never");
  EXPECT_NE(rc, 0);
  std::filesystem::remove_all(dir);
}

TEST(ZeusdCli, ServesUntilSigterm) {
  const std::string dir = make_temp_dir("zeusd_cli");
  FakePowercap powercap;
  powercap.add_zone("intel-rapl:0", "package-0", 5'000'000);
  const std::string sock = dir + "/zeusd.sock";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("ZEUS_SIM_GPUS", "3", 1);
    ::setenv("ZEUS_POWERCAP_ROOT", powercap.root().c_str(), 1);
    ::setenv("ZEUS_LOG_LEVEL", "warn", 1);
    ::execl(kZeusd.c_str(), "zeusd", "serve", "--socket-path", sock.c_str(), "--gpu-backend", "sim",
            "--socket-permissions", "600", nullptr);
    ::_exit(127);
  }
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    up = std::filesystem::exists(sock);
    if (!up) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(up);
  http::Client c("unix:" + sock);
  const auto j = json_of(c.get("/discover"));
  EXPECT_EQ(j["gpus"].size(), 3u);
  EXPECT_EQ(j["cpus"].size(), 1u);
  EXPECT_EQ(j["enabled_api_groups"], nlohmann::json({"gpu-control", "gpu-read", "cpu-read"}));
  EXPECT_EQ(post(c, "/gpu/set_power_limit?gpu_ids=2&power_limit_mw=150000&block=true").status, 200);
  EXPECT_EQ(json_of(c.get("/gpu/get_power_limit?gpu_ids=2"))["2"]["power_limit_mw"], 150000);
  EXPECT_EQ((std::filesystem::status(sock).permissions() & std::filesystem::perms::all),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  c.close();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(std::filesystem::exists(sock));
  std::filesystem::remove_all(dir);
}

// zeusd serves AMD GPUs through AMD SMI (here the fake libamd_smi.so.26) and
// gives /discover their PCI addresses.
TEST(ZeusdCli, ServesAmdGpusThroughAmdSmi) {
  zeus::testing::FakeAmdSmi amd(26);
  amd.reset();
  const std::string dir = make_temp_dir("zeusd_amd");
  const std::string sock = dir + "/zeusd.sock";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("ZEUS_AMDSMI_LIBRARY", amd.path().c_str(), 1);
    ::setenv("ZEUS_POWERCAP_ROOT", "/nonexistent/powercap", 1);
    ::setenv("ZEUS_LOG_LEVEL", "warn", 1);
    ::execl(kZeusd.c_str(), "zeusd", "serve", "--socket-path", sock.c_str(), "--gpu-backend",
            "amdsmi", "--enable", "gpu-read", nullptr);
    ::_exit(127);
  }
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    up = std::filesystem::exists(sock);
    if (!up) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(up);
  http::Client c("unix:" + sock);
  const auto j = json_of(c.get("/discover"));
  ASSERT_EQ(j["gpus"].size(), 2u) << j.dump();
  EXPECT_EQ(j["gpus"][0]["name"], "AMD Instinct MI300X");
  EXPECT_EQ(j["gpus"][0]["pci_address"], "0000:c1:00.0");
  EXPECT_EQ(j["gpus"][1]["pci_address"], "0000:c2:00.0");
  EXPECT_EQ(j["gpus"][1]["cumulative_energy_available"], true);
  // 2e6 counts at 15.3 uJ each: GPU 1's counter, read through the AMD backend.
  const auto energy = json_of(c.get("/gpu/get_cumulative_energy?gpu_ids=1"));
  EXPECT_NEAR(energy["1"]["energy_mj"].get<double>(), 2e6 * 15.3e-3, 1e-6) << energy.dump();
  c.close();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(dir);
}

// A node whose NVIDIA driver loads after zeusd started: zeusd serves what it
// has (no GPU), says in its own flag's words how to get simulated GPUs, keeps
// looking, and exits with status 75 once the driver is there, so systemd's
// Restart=on-failure starts it again with the GPUs.
TEST(ZeusdCli, ADriverThatLoadsLateMakesZeusdExitToBeRestarted) {
  const std::string dir = make_temp_dir("zeusd_late");
  const std::string sock = dir + "/zeusd.sock";
  const std::string nvml = dir + "/libnvidia-ml.so.1";  // not there yet
  const std::string log = dir + "/stderr";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::setenv("ZEUS_NVML_LIBRARY", nvml.c_str(), 1);
    ::setenv("ZEUS_AMDSMI_LIBRARY", (dir + "/libamd_smi.so.26").c_str(), 1);
    ::setenv("ZEUS_POWERCAP_ROOT", "/nonexistent/powercap", 1);
    ::setenv("ZEUS_LOG_LEVEL", "info", 1);
    ::execl(kZeusd.c_str(), "zeusd", "serve", "--socket-path", sock.c_str(),
            "--rediscover-interval", "0.1", nullptr);
    ::_exit(127);
  }
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    up = std::filesystem::exists(sock);
    if (!up) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(up);
  {
    http::Client c("unix:" + sock);
    EXPECT_EQ(json_of(c.get("/discover"))["gpus"].size(), 0u);
  }
  std::filesystem::copy_file(zeus::testing::fake_nvml_path(), nvml);  // the driver loads
  int status = 0;
  for (int i = 0; i < 1000; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    std::this_thread::sleep_for(10ms);
  }
  if (::waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "zeusd did not notice the GPUs that appeared";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 75);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("looking again every 0.1 s"));
  EXPECT_THAT(text, HasSubstr("2 GPU(s) appeared after zeusd started"));
  // zeusd's own flag, never the variable it ignores.
  EXPECT_THAT(text, HasSubstr("--gpu-backend sim"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("ZEUS_GPU_BACKEND")));
  std::filesystem::remove_all(dir);
}

TEST(ZeusdCli, ShowEnvOfAnOrdinaryUserReportsTheDaemon) {
  FakeNode node;
  const std::string keydir = make_temp_dir("zeusd_showenv");
  const std::string key = "k-k-k-k-k-k-k-k-k-k-k-k-k-k-k-k-k-k-k-k";
  DaemonOptions o;
  o.signing_key_path = write_signing_key(keydir, key);
  o.num_workers = 1;
  RunningDaemon d(o, node.devices);
  ASSERT_EQ(::chmod(d.dir.c_str(), 0755), 0);
  const std::string token =
      issue_token(key, {"carol", {ApiGroup::kGpuRead, ApiGroup::kGpuControl}, std::nullopt});
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(125);
    ::setenv("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str(), 1);
    ::setenv("ZEUSD_TOKEN", token.c_str(), 1);
    ::setenv("ZEUS_GPU_BACKEND", "zeusd", 1);
    ::setenv("ZEUS_POWERCAP_ROOT", "/nonexistent", 1);
    const std::string zeus = std::string(ZEUS_BINARY_DIR) + "/bin/zeus";
    ::execl(zeus.c_str(), "zeus", "show-env", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(text, HasSubstr("zeusd: " + d.dir + "/zeusd.sock (2 GPU(s), 2 CPU package(s))"));
  EXPECT_THAT(text, HasSubstr("API groups: gpu-control, gpu-read, cpu-read"));
  EXPECT_THAT(text, HasSubstr("token: user carol, scopes gpu-read, gpu-control"));
  EXPECT_THAT(text, HasSubstr("backend zeusd"));
  std::filesystem::remove_all(keydir);
}

TEST(ZeusdCli, BadFlagsAndMissingPrivileges) {
  auto [rc, out] = run(kZeusd + " serve --mode pipe");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("use uds or tcp"));
  std::tie(rc, out) = run(kZeusd + " serve --enable gpu-read,bogus");
  EXPECT_EQ(rc, 2);
  std::tie(rc, out) = run(kZeusd + " serve --socket-permissions 999");
  EXPECT_EQ(rc, 2);
  std::tie(rc, out) = run(kZeusd + " serve --gpu-backend rocm");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("'rocm' is not a backend"));
  // Checked before anything is served (timeout: a daemon that started anyway).
  std::tie(rc, out) = run("ZEUS_SIM_GPUS=1 timeout 20 " + kZeusd +
                          " serve --gpu-backend sim --enable gpu-read --socket-path "
                          "/nonexistent/zeusd.sock --dcgm-hostname-label host-name");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_THAT(out, HasSubstr("'host-name' is not a Prometheus label name"));
  std::tie(rc, out) = run(kZeusd + " --help");
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("serve"));
  if (::geteuid() == 0) {
    // As nobody, gpu-control and cpu-read are refused at startup.
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(125);
      ::setenv("ZEUS_SIM_GPUS", "1", 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 2);
      ::execl(kZeusd.c_str(), "zeusd", "serve", "--gpu-backend", "sim", "--socket-path",
              "/nonexistent/zeusd.sock", nullptr);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
  }
}

}  // namespace
}  // namespace zeus::zeusd::testing
