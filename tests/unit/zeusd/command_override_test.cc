// GPU command overrides: the TOML subset, placeholders, trust rules for the
// file, and running commands without a shell (timeouts kill the whole process
// group, error patterns, first failure stops the sequence); then the daemon
// routing a control endpoint through them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "zeus/util/files.h"
#include "zeusd/command_override.h"
#include "zeusd/toml_subset.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class Overrides : public ::testing::Test {
 protected:
  void SetUp() override { dir = make_temp_dir("zeusd_ovr"); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    const std::string p = dir + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
  std::string dir;
};

TEST_F(Overrides, ParsesTheSubset) {
  const auto o = CommandOverrides::parse(R"(# comment
[set_power_limit]
commands = [
  ["tool", "-i", "{gpu_id}", "-pl", "{power_limit_w}"],  # trailing comment
  ['literal', "esc\"aped\u00e9", "{power_limit_mw}"],
]
error_pattern = "(?i)error"
timeout_s = 5

[reset_locked_clocks]
commands = [["tool", "reset", "{gpu_id}"]]
)",
                                         "o.toml");
  EXPECT_EQ(o.operation_names(),
            (std::vector<std::string>{"set_power_limit", "reset_locked_clocks"}));
  const auto* s = o.spec(GpuOp::kSetPowerLimit);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->commands.size(), 2u);
  EXPECT_EQ(s->commands[1][1], "esc\"aped\xc3\xa9");
  EXPECT_EQ(s->timeout, Seconds(5.0));
  EXPECT_TRUE(s->error_pattern);
  EXPECT_FALSE(o.has(GpuOp::kSetPersistenceMode));
}

TEST_F(Overrides, RefusesWhatItDoesNotUnderstand) {
  const std::pair<const char*, const char*> bad[] = {
      {"[set_power_limit]\ncommands = [[\"t\", \"{min_clock_mhz}\"]]\n",
       "not available in set_power_limit"},
      {"[set_fan_speed]\ncommands = [[\"t\"]]\n", "unknown table"},
      {"[set_power_limit]\ncommand = [[\"t\"]]\n", "unknown key"},
      {"[set_power_limit]\ncommands = [\"t\"]\n", "array of strings"},
      {"[set_power_limit]\ncommands = []\n", "non-empty"},
      {"[set_power_limit]\ntimeout_s = 5\n", "has no commands"},
      {"[set_power_limit]\ncommands = [[\"t\"]]\ntimeout_s = 1.5\n", "whole numbers"},
      {"[set_power_limit]\ncommands = [[\"t\"]]\ntimeout_s = 0\n", "timeout_s"},
      {"[set_power_limit]\ncommands = [[\"t\"]]\nerror_pattern = \"(\"\n", "regular expression"},
      {"[set_power_limit]\ncommands = [[\"t\"]]\n[set_power_limit]\ncommands = [[\"t\"]]\n",
       "twice"},
      {"commands = [[\"t\"]]\n", "outside of any"},
      {"[set_power_limit]\ncommands = [[\"t\"]] x\n", "unexpected"},
      {"[set_power_limit]\ncommands = [[\"unterminated]]\n", "unterminated"},
      {"[set_power_limit]\ncommands = {a = 1}\n", "inline tables"},
  };
  for (const auto& [text, needle] : bad) {
    try {
      CommandOverrides::parse(text, "o.toml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParse) << text;
      EXPECT_THAT(e.what(), HasSubstr(needle)) << text;
      EXPECT_THAT(e.what(), HasSubstr("o.toml:")) << text;
    }
  }
}

TEST_F(Overrides, RefusesUntrustedFiles) {
  const std::string text = "[set_power_limit]\ncommands = [[\"true\"]]\n";
  EXPECT_NO_THROW(CommandOverrides::load(write("ok.toml", text, 0644)));
  try {
    CommandOverrides::load(write("ww.toml", text, 0666));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
    EXPECT_THAT(e.what(), HasSubstr("world-writable"));
  }
  if (::geteuid() == 0) {
    const std::string p = write("foreign.toml", text, 0644);
    ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
    try {
      CommandOverrides::load(p);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
      EXPECT_THAT(e.what(), HasSubstr("owned by uid 65534"));
    }
  }
}

// Whoever may replace the file through its folder, or write it through a
// non-root group, could make the root daemon run their commands.
TEST_F(Overrides, RefusesFilesOthersCanReplaceOrWriteThroughAGroup) {
  const std::string text = "[set_power_limit]\ncommands = [[\"true\"]]\n";
  const std::string p = write("o.toml", text, 0644);
  const auto refused = [&](const std::string& needle) {
    try {
      CommandOverrides::load(p);
      ADD_FAILURE() << "accepted; expected: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
      EXPECT_THAT(e.what(), HasSubstr(needle));
    }
  };
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  refused("its directory " + dir + " is world-writable without the sticky bit");
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);  // like /tmp: others cannot replace it
  EXPECT_NO_THROW(CommandOverrides::load(p));
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  if (::geteuid() != 0) GTEST_SKIP() << "the group and owner cases need root to chown";
  ASSERT_EQ(::chmod(p.c_str(), 0664), 0);
  EXPECT_NO_THROW(CommandOverrides::load(p));  // root's group may write
  ASSERT_EQ(::chown(p.c_str(), 0, 1234), 0);
  refused("it is writable by group gid 1234");
  ASSERT_EQ(::chmod(p.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0775), 0);
  ASSERT_EQ(::chown(dir.c_str(), 0, 1234), 0);
  refused("its directory " + dir + " is writable by group gid 1234");
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 0), 0);
  refused("its directory " + dir + " is owned by uid 65534");
  ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
  EXPECT_NO_THROW(CommandOverrides::load(p));
}

TEST_F(Overrides, RunsCommandsWithPlaceholdersAndNoShell) {
  const std::string log = dir + "/log";
  const auto o = CommandOverrides::parse(
      "[set_power_limit]\ncommands = [[\"sh\", \"-c\", \"echo $0 $1 >> " + log +
          "\", \"{gpu_id}\", \"{power_limit_w}\"], [\"sh\", \"-c\", \"echo second {power_limit_mw} "
          ">> " +
          log +
          "\"]]\n"
          "[set_persistence_mode]\ncommands = [[\"sh\", \"-c\", \"echo 'a;b' {enabled} >> " +
          log + "\"]]\n",
      "o.toml");
  o.run(GpuOp::kSetPowerLimit, {.gpu_id = 3, .power_limit_mw = 250500});
  o.run(GpuOp::kSetPersistenceMode, {.gpu_id = 0, .enabled = true});
  EXPECT_EQ(read_file(log), "3 250\nsecond 250500\na;b 1\n");
  // An argument is one argv entry: shell syntax in it is not interpreted.
  const auto lit = CommandOverrides::parse(
      "[reset_locked_clocks]\ncommands = [[\"touch\", \"" + dir + "/x;touch y\"]]\n", "o.toml");
  lit.run(GpuOp::kResetLockedClocks, {.gpu_id = 0});
  EXPECT_TRUE(std::filesystem::exists(dir + "/x;touch y"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/x"));
}

TEST_F(Overrides, FailuresStopTheSequence) {
  const std::string marker = dir + "/ran";
  const auto o = CommandOverrides::parse(
      "[set_power_limit]\ncommands = [[\"sh\", \"-c\", \"echo boom >&2; exit 3\"], [\"touch\", \"" +
          marker +
          "\"]]\n"
          "[set_persistence_mode]\ncommands = [[\"echo\", \"ERROR: no device\"]]\n"
          "error_pattern = \"(?i)error\"\n"
          "[reset_locked_clocks]\ncommands = [[\"/no/such/tool\"]]\n",
      "o.toml");
  try {
    o.run(GpuOp::kSetPowerLimit, {.gpu_id = 1, .power_limit_mw = 1000});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("status 3"));
    EXPECT_THAT(e.what(), HasSubstr("boom"));
  }
  EXPECT_FALSE(std::filesystem::exists(marker));
  try {
    o.run(GpuOp::kSetPersistenceMode, {.gpu_id = 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("error_pattern"));
  }
  EXPECT_THROW(o.run(GpuOp::kResetLockedClocks, {.gpu_id = 0}), Error);
}

// Issue 20: the daemon runs as root and must not crash on its own
// configuration. A recursive regex engine searching one long line of output
// overflowed the stack (SIGSEGV: leases never restored, socket left behind).
TEST_F(Overrides, AnErrorPatternOverALongLineCannotCrashTheDaemon) {
  const auto o = CommandOverrides::parse(
      "[set_power_limit]\ncommands = [[\"sh\", \"-c\", \"head -c 65536 /dev/zero | tr '\\\\0' "
      "a\"]]\n"
      "error_pattern = \"(a|b)*c\"\n"
      "[set_persistence_mode]\ncommands = [[\"sh\", \"-c\", \"head -c 60000 /dev/zero | tr "
      "'\\\\0' a; printf '\\\\nfatal: abc\\\\n'\"]]\n"
      "error_pattern = \"fatal: (a|b)*c\"\n",
      "o.toml");
  EXPECT_NO_THROW(o.run(GpuOp::kSetPowerLimit, {.gpu_id = 0, .power_limit_mw = 1000}));
  try {
    o.run(GpuOp::kSetPersistenceMode, {.gpu_id = 0});
    FAIL() << "a matching line after the long one was missed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("error_pattern"));
  }
}

TEST_F(Overrides, TimeoutKillsTheWholeProcessGroup) {
  const std::string pidfile = dir + "/bg.pid";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r =
      run_command({"sh", "-c", "sleep 30 & echo $! > " + pidfile + "; wait"}, Seconds(0.5));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(took, 5s);
  const pid_t bg = static_cast<pid_t>(std::stol(read_file(pidfile)));
  // The background helper died with its group (it may linger as a zombie of init briefly).
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::string stat;
    std::ifstream proc_stat("/proc/" + std::to_string(bg) + "/stat");
    gone = ::kill(bg, 0) != 0 ||
           (std::getline(proc_stat, stat) && stat.find(") Z") != std::string::npos);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
  // A command that closes its output but keeps running is also bounded.
  const auto r2 = run_command({"sh", "-c", "exec >&- 2>&-; sleep 30"}, Seconds(0.3));
  EXPECT_TRUE(r2.timed_out);
}

TEST_F(Overrides, DaemonRoutesControlThroughThem) {
  FakeNode node;
  const std::string log = dir + "/calls";
  DaemonOptions o;
  o.gpu_command_overrides =
      write("ovr.toml", "[set_power_limit]\ncommands = [[\"sh\", \"-c\", \"echo $0 $1 >> " + log +
                            "\", \"{gpu_id}\", \"{power_limit_mw}\"]]\n"
                            "[set_persistence_mode]\ncommands = [[\"false\"]]\n");
  o.num_workers = 1;
  RunningDaemon d(o, node.devices);
  auto c = d.client();
  EXPECT_EQ(post(c, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=300000&block=true").status,
            200);
  // The two GPUs' workers run in parallel: either order.
  const std::string calls = read_file(log);
  EXPECT_TRUE(calls == "0 300000\n1 300000\n" || calls == "1 300000\n0 300000\n") << calls;
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);  // the device was not called
  const auto r = post(c, "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true");
  EXPECT_EQ(r.status, 500);  // a failed override
  EXPECT_THAT(r.body, HasSubstr("set_persistence_mode"));
  // Not overridden: the device itself.
  EXPECT_EQ(
      post(c, "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=800&max_clock_mhz=900&block=true")
          .status,
      200);
  unsigned lo = 0, hi = 0;
  EXPECT_TRUE(node.nvml.locked_clocks(0, false, lo, hi));
}

}  // namespace
}  // namespace zeus::zeusd::testing
