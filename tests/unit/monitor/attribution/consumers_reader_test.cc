// ConsumerReader on fake trees: mode detection, /proc parsing, counters.
#include <gtest/gtest.h>

#include <algorithm>

#include "consumers_fake_tree.h"
#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution {
namespace {

using testing::FakeTree;
using testing::ticks_us;

// /proc/<pid>/cgroup on a v1 machine: every hierarchy at a different path, so
// taking the wrong line shows.
constexpr const char* kV1CgroupFile =
    "9:name=systemd:/user.slice/session-1.scope\n"
    "4:memory:/wrong-memory\n"
    "3:cpu:/wrong-cpu\n"
    "2:cpuacct:/jobs/a\n"
    "0::/wrong-unified\n";

TEST(ConsumersModeTest, NamesEveryMode) {
  EXPECT_STREQ(cgroup_mode_name(CgroupMode::kUnified), "unified");
  EXPECT_STREQ(cgroup_mode_name(CgroupMode::kLegacy), "legacy");
  EXPECT_STREQ(cgroup_mode_name(CgroupMode::kHybrid), "hybrid");
  EXPECT_STREQ(cgroup_mode_name(CgroupMode::kNone), "none");
}

TEST(ConsumersUnifiedTest, ReadsTheZeroLineAndUsageUsec) {
  FakeTree tree;
  tree.make_unified();
  tree.add_process(10, "python3", "0::/kubepods.slice/pod/x\n", 150, 50, 777);
  tree.write("cgroup/kubepods.slice/pod/x/cpu.stat",
             "user_usec 7\nusage_usec 1234567\nsystem_usec 9\n");
  tree.write("cgroup/cpu.stat", "usage_usec 99\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_EQ(reader.mode(), CgroupMode::kUnified);
  const auto info = reader.process(10);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->pid, 10u);
  EXPECT_EQ(info->comm, "python3");
  EXPECT_EQ(info->start_ticks, 777u);
  EXPECT_EQ(info->cpu_time_us, ticks_us(200));
  EXPECT_EQ(info->cgroup, "/kubepods.slice/pod/x");
  EXPECT_EQ(reader.cgroup_cpu_time_us(info->cgroup), 1234567u);
  EXPECT_EQ(reader.cgroup_cpu_time_us("kubepods.slice/pod/x"), 1234567u);
  EXPECT_EQ(reader.cgroup_cpu_time_us("/"), 99u);
  EXPECT_EQ(reader.cgroup_cpu_time_us(""), 99u);
}

TEST(ConsumersUnifiedTest, CpuStatWithoutUsageIsUnreadable) {
  FakeTree tree;
  tree.make_unified();
  tree.write("cgroup/a/cpu.stat", "usage_usec_total 5\nuser_usec 3\n");
  tree.write("cgroup/b/cpu.stat", "usage_usec twelve\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/a"));
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/b"));
}

TEST(ConsumersLegacyTest, CpuacctAloneReadsNanoseconds) {
  FakeTree tree;
  tree.make_v1("cpuacct");
  tree.add_process(20, "worker", kV1CgroupFile);
  tree.write("cgroup/cpuacct/jobs/a/cpuacct.usage", "5000999\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_EQ(reader.mode(), CgroupMode::kLegacy);
  const auto info = reader.process(20);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cgroup, "/jobs/a");
  EXPECT_EQ(reader.cgroup_cpu_time_us("/jobs/a"), 5000u);
  EXPECT_EQ(reader.cgroup_cpu_time_us("/"), 987654321u);
}

TEST(ConsumersLegacyTest, CpuCpuacctLayoutAndCombinedControllerList) {
  FakeTree tree;
  tree.make_v1("cpu,cpuacct");
  tree.add_process(21, "worker", "4:memory:/m\n3:cpu,cpuacct:/jobs/b\n1:name=systemd:/s\n");
  tree.write("cgroup/cpu,cpuacct/jobs/b/cpuacct.usage", "2000000");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_EQ(reader.mode(), CgroupMode::kLegacy);
  const auto info = reader.process(21);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cgroup, "/jobs/b");
  EXPECT_EQ(reader.cgroup_cpu_time_us(info->cgroup), 2000u);
}

TEST(ConsumersLegacyTest, ControllerNamesMustMatchWhole) {
  FakeTree tree;
  tree.make_v1();
  // "cpuacct_extra" is not cpuacct: no line holds the counters.
  tree.add_process(22, "w", "5:cpuacct_extra:/nope\n0::/v2\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  const auto info = reader.process(22);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cgroup, "");
}

TEST(ConsumersHybridTest, CountersComeFromV1NotFromTheUnifiedTree) {
  FakeTree tree;
  tree.make_hybrid();
  tree.add_process(30, "trainer", kV1CgroupFile);
  tree.write("cgroup/cpuacct/jobs/a/cpuacct.usage", "3000000\n");
  tree.write("cgroup/unified/jobs/a/cpu.stat", "usage_usec 1\n");
  tree.write("cgroup/unified/wrong-unified/cpu.stat", "usage_usec 2\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_EQ(reader.mode(), CgroupMode::kHybrid);
  const auto info = reader.process(30);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cgroup, "/jobs/a");
  EXPECT_EQ(reader.cgroup_cpu_time_us("/jobs/a"), 3000u);
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/wrong-unified"));
}

TEST(ConsumersHybridTest, UnifiedDirectoryWithoutV1IsNotHybrid) {
  FakeTree tree;
  tree.write("cgroup/unified/cgroup.controllers", "");
  tree.write("cgroup/cpuacct/tasks", "");  // a hierarchy without the counter file
  EXPECT_EQ(ConsumerReader(tree.proc(), tree.cgroup()).mode(), CgroupMode::kNone);
}

TEST(ConsumersNoneTest, ProcessTimesWithoutCgroupCounters) {
  FakeTree tree;
  tree.add_process(40, "a", "0::/only-v2-line\n");
  tree.add_process(41, "b", "2:cpuacct:/v1-only\n");
  tree.add_process(42, "c", "");
  tree.remove("proc/42/cgroup");  // a kernel built without cgroups
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_EQ(reader.mode(), CgroupMode::kNone);
  EXPECT_EQ(reader.process(40)->cgroup, "/only-v2-line");
  EXPECT_EQ(reader.process(41)->cgroup, "");
  ASSERT_TRUE(reader.process(42));
  EXPECT_EQ(reader.process(42)->cgroup, "");
  EXPECT_EQ(reader.process(42)->cpu_time_us, ticks_us(200));
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/"));
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/only-v2-line"));
}

TEST(ConsumersNoneTest, MissingRootsGiveNoPidsAndNoMode) {
  const ConsumerReader reader("/nonexistent/zeus/proc", "/nonexistent/zeus/cgroup");
  EXPECT_EQ(reader.mode(), CgroupMode::kNone);
  EXPECT_TRUE(reader.pids().empty());
  EXPECT_FALSE(reader.process(1));
}

TEST(ConsumersPidsTest, OnlyNumericDirectories) {
  FakeTree tree;
  tree.add_process(1, "init", "0::/\n");
  tree.add_process(4000000, "big", "0::/\n");
  for (const char* other : {"self/x", "sys/x", "1a/x", "net/x", "0/x"}) {
    tree.write(std::string("proc/") + other, "");
  }
  tree.write("proc/99999999999", "");  // beyond 32 bits
  std::vector<std::uint32_t> pids = ConsumerReader(tree.proc(), tree.cgroup()).pids();
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<std::uint32_t>{1, 4000000}));
}

TEST(ConsumersProcessTest, CommWithSpacesAndParentheses) {
  FakeTree tree;
  const std::string comm = "a) (b c) S 9 ";  // looks like the fields that follow
  tree.add_process(50, comm, "0::/x\n", 11, 22, 33);
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  const auto info = reader.process(50);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->comm, comm);
  EXPECT_EQ(info->start_ticks, 33u);
  EXPECT_EQ(info->cpu_time_us, ticks_us(33));
}

TEST(ConsumersProcessTest, VanishedBetweenPidsAndProcess) {
  FakeTree tree;
  tree.make_unified();
  tree.add_process(60, "short", "0::/x\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_EQ(reader.pids(), (std::vector<std::uint32_t>{60}));
  tree.remove("proc/60");
  EXPECT_FALSE(reader.process(60));
}

TEST(ConsumersProcessTest, AnyFileMissingMeansGone) {
  FakeTree tree;
  tree.make_unified();
  for (const char* file : {"stat", "comm", "cgroup"}) {
    tree.add_process(61, "p", "0::/x\n");
    tree.remove(std::string("proc/61/") + file);
    EXPECT_FALSE(ConsumerReader(tree.proc(), tree.cgroup()).process(61)) << file;
  }
}

TEST(ConsumersProcessTest, MalformedStatGivesNullopt) {
  const std::string good = testing::stat_line(70, "ok", 1, 2, 3);
  const std::vector<std::string> bad = {
      "",
      "70 (no closing parenthesis S 1 2 3\n",
      "70 (x)S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0\n",    // no space after ')'
      "70 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0\n",         // ends before field 22
      "70 (x) S 1 1 1 0 -1 0 0 0 0 0 -1 2 0 0 20 0 1 0 3 0 0\n",  // negative utime
      "70 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2x 0 0 20 0 1 0 3 0 0\n",  // junk in stime
      "70 (x) S 1 1 1 0 -1 0 0 0 0 0 1  2 0 0 20 0 1 0 3 0 0\n",  // two spaces shift fields
      "71 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0\n",   // another pid
      "(x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0\n",      // no pid
      "70 (x) S 1 1 1 0 -1 0 0 0 0 0 18446744073709551615 1 0 0 20 0 1 0 3 0 0\n",  // overflows
  };
  FakeTree tree;
  tree.add_process(70, "ok", "0::/\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  ASSERT_TRUE(reader.process(70));
  for (const std::string& text : bad) {
    tree.write("proc/70/stat", text);
    EXPECT_FALSE(reader.process(70)) << text;
  }
  tree.write("proc/70/stat", good);
  EXPECT_TRUE(reader.process(70));
}

TEST(ConsumersProcessTest, MalformedCgroupFileGivesNullopt) {
  FakeTree tree;
  tree.make_v1();
  tree.add_process(80, "p", "2:cpuacct:/fine\nno colons here\n");
  EXPECT_FALSE(ConsumerReader(tree.proc(), tree.cgroup()).process(80));
}

TEST(ConsumersCgroupTest, PathsThatEscapeTheRootAreRefused) {
  FakeTree tree;
  tree.make_unified();
  tree.write("outside/cpu.stat", "usage_usec 666\n");
  tree.write("cgroup/a/cpu.stat", "usage_usec 1\n");
  tree.write("cgroup/a/..b/cpu.stat", "usage_usec 2\n");
  tree.write("cgroup/.../cpu.stat", "usage_usec 3\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  for (const char* path :
       {"/../outside", "../outside", "/a/../../outside", "..", "/a/..", "/a/../a"}) {
    EXPECT_FALSE(reader.cgroup_cpu_time_us(path)) << path;
  }
  EXPECT_EQ(reader.cgroup_cpu_time_us("/a/..b"), 2u);
  EXPECT_EQ(reader.cgroup_cpu_time_us("/..."), 3u);
  EXPECT_FALSE(reader.cgroup_cpu_time_us(std::string_view("/a\0/x", 5)));
}

TEST(ConsumersCgroupTest, GoneOrMalformedCountersGiveNullopt) {
  FakeTree tree;
  tree.make_v1();
  tree.write("cgroup/cpuacct/bad/cpuacct.usage", "12 34\n");
  tree.write("cgroup/cpuacct/empty/cpuacct.usage", "");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/gone"));
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/bad"));
  EXPECT_FALSE(reader.cgroup_cpu_time_us("/empty"));
}

TEST(ConsumersCgroupTest, SpacesQuotesAndColonsInNames) {
  FakeTree tree;
  tree.make_unified();
  const std::string name = "/we ird \"quoted\" 'x'/a:b c";
  tree.add_process(90, "p", "0::" + name + "\n");
  tree.write("cgroup" + name + "/cpu.stat", "usage_usec 4242\n");
  const ConsumerReader reader(tree.proc(), tree.cgroup());
  const auto info = reader.process(90);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cgroup, name);
  EXPECT_EQ(reader.cgroup_cpu_time_us(info->cgroup), 4242u);
}

}  // namespace
}  // namespace zeus::attribution
