// The zeusd unit's effective device policy. systemd closes a service's device
// policy when the unit sets PrivateDevices=, DevicePolicy=closed|strict, any
// DeviceAllow=, or (on systemd versions users still run, e.g. Ubuntu 22.04's
// 249) ProtectClock=, which implies DeviceAllow=char-rtc. Closed, zeusd sees
// no /dev/nvidia*, /dev/kfd or /dev/dri unless DeviceAllow= names them, and
// NVML/AMD SMI then fail as if there were no GPU. The check runs on the unit
// file itself, so it holds for every systemd version, not just this machine's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace zeus::zeusd::testing {
namespace {

const std::string kUnitIn = std::string(ZEUS_SOURCE_DIR) + "/packaging/zeusd/zeusd.service.in";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// [Service] settings, each key's assignments in order; an empty assignment
// resets a list setting (as systemd does for DeviceAllow=).
std::map<std::string, std::vector<std::string>> service_section(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(text);
  std::string section, line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    const auto eq = line.find('=');
    if (section != "[Service]" || eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    if (value.empty()) {
      out[key].clear();
    } else {
      out[key].push_back(value);
    }
  }
  return out;
}

bool truthy(const std::string& v) { return v == "yes" || v == "true" || v == "on" || v == "1"; }

std::string last(const std::map<std::string, std::vector<std::string>>& s, const std::string& k) {
  const auto it = s.find(k);
  return it == s.end() || it->second.empty() ? "" : it->second.back();
}

// What is wrong with a unit's device policy for zeusd ("" : nothing).
std::string device_policy_problems(const std::string& unit_text) {
  const auto s = service_section(unit_text);
  // A private /dev has no GPU nodes at all, whatever DeviceAllow= says.
  if (truthy(last(s, "PrivateDevices"))) return "PrivateDevices= hides every GPU node";
  const std::string policy = last(s, "DevicePolicy");
  const bool allow_list = s.contains("DeviceAllow") && !s.at("DeviceAllow").empty();
  const bool closed =
      policy == "closed" || policy == "strict" || allow_list || truthy(last(s, "ProtectClock"));
  if (!closed) return "";
  // The devices NVML and AMD SMI open read-write, and the DeviceAllow=
  // entries that grant each (a node, or its major's name in /proc/devices).
  const std::vector<std::pair<std::string, std::vector<std::string>>> needed = {
      {"/dev/nvidia<N>", {"char-nvidia-frontend"}},
      {"/dev/nvidiactl", {"/dev/nvidiactl", "char-nvidia-frontend"}},
      {"/dev/nvidia-uvm", {"/dev/nvidia-uvm", "char-nvidia-uvm"}},
      {"/dev/kfd", {"/dev/kfd", "char-kfd"}},
      {"/dev/dri", {"char-drm"}},
  };
  std::string problems;
  for (const auto& [device, grants] : needed) {
    bool granted = false;
    for (const auto& entry : allow_list ? s.at("DeviceAllow") : std::vector<std::string>{}) {
      std::istringstream fields(entry);
      std::string spec, access;
      fields >> spec >> access;
      if (access.empty()) access = "rwm";  // systemd's default
      const bool rw =
          access.find('r') != std::string::npos && access.find('w') != std::string::npos;
      for (const auto& g : grants) granted = granted || (spec == g && rw);
    }
    if (!granted) problems += "no read-write DeviceAllow= for " + device + "; ";
  }
  return problems;
}

TEST(SystemdUnit, DevicePolicyLeavesTheGpusVisible) {
  const std::string unit = read_text(kUnitIn);
  ASSERT_FALSE(unit.empty()) << kUnitIn;
  EXPECT_EQ(device_policy_problems(unit), "");
  // Another part's settings in the same unit stay (the attribution ledger's state).
  const auto s = service_section(unit);
  EXPECT_EQ(last(s, "StateDirectory"), "zeusd");
  EXPECT_THAT(last(s, "ExecStart"), ::testing::HasSubstr("--attribution-state /var/lib/zeusd/"));
}

// The check itself: each way of closing the policy without the entries is
// caught, and the entries satisfy it.
TEST(SystemdUnit, CheckCatchesAClosedPolicyWithoutTheGpuEntries) {
  const std::string head = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n";
  EXPECT_EQ(device_policy_problems(head + "ProtectKernelModules=yes\n"), "");
  EXPECT_THAT(device_policy_problems(head + "ProtectClock=yes\n"),
              ::testing::HasSubstr("/dev/nvidia-uvm"));
  EXPECT_THAT(device_policy_problems(head + "DevicePolicy=closed\n"),
              ::testing::HasSubstr("/dev/kfd"));
  EXPECT_THAT(device_policy_problems(head + "DeviceAllow=/dev/nvidiactl rw\n"),
              ::testing::HasSubstr("/dev/nvidia<N>"));
  EXPECT_NE(device_policy_problems(head + "PrivateDevices=yes\n"), "");
  const std::string entries =
      "DeviceAllow=char-nvidia-frontend rw\nDeviceAllow=char-nvidia-uvm rw\n"
      "DeviceAllow=/dev/kfd rw\nDeviceAllow=char-drm rw\n";
  EXPECT_EQ(device_policy_problems(head + "ProtectClock=yes\n" + entries), "");
  // Read-only is not enough (NVML and AMD SMI open the nodes read-write).
  EXPECT_NE(device_policy_problems(head + "ProtectClock=yes\nDeviceAllow=char-nvidia-frontend r\n" +
                                   "DeviceAllow=char-nvidia-uvm rw\nDeviceAllow=/dev/kfd rw\n" +
                                   "DeviceAllow=char-drm rw\n"),
            "");
  // An empty assignment drops the entries before it.
  EXPECT_NE(device_policy_problems(head + "ProtectClock=yes\n" + entries + "DeviceAllow=\n"), "");
  // A [Service] key in another section does not count.
  EXPECT_EQ(device_policy_problems("[Unit]\nProtectClock=yes\n[Service]\nExecStart=/bin/true\n"),
            "");
}

// systemd's own reading of the unit as installed (this machine's systemd):
// no unknown key, no value it cannot parse.
TEST(SystemdUnit, SystemdAnalyzeVerifyIsClean) {
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "systemd-analyze is not installed";
  }
  // verify checks that ExecStart names an executable: the built zeusd, which
  // the ThreadSanitizer build does not make (it builds only its suites).
  if (!std::filesystem::exists(std::string(ZEUS_BINARY_DIR) + "/bin/zeusd")) {
    GTEST_SKIP() << "this build has no bin/zeusd for the unit's ExecStart";
  }
  std::string unit = read_text(kUnitIn);
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"@ZEUS_BINDIR@", std::string(ZEUS_BINARY_DIR) + "/bin"},
        {"@ZEUS_SYSCONFDIR@", "/etc"},
        {"@ZEUS_DOCDIR@", "/usr/share/doc/zeusd"},
        {"@ZEUSD_SOCKET@", "/run/zeusd/zeusd.sock"}}) {
    for (auto at = unit.find(from); at != std::string::npos; at = unit.find(from)) {
      unit.replace(at, from.size(), to);
    }
  }
  ASSERT_EQ(unit.find('@'), std::string::npos) << "a placeholder this test does not know";
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("zeusd_unit_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "zeusd.service";
  std::ofstream(path) << unit;
  std::string out;
  FILE* p = ::popen(("systemd-analyze verify " + path.string() + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  const int status = ::pclose(p);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "") << "systemd-analyze verify warns";
}

}  // namespace
}  // namespace zeus::zeusd::testing
