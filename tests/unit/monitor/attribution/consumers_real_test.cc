// ConsumerReader on this machine's real /proc and cgroup filesystem: the
// kernel's own accounting of processes it runs on purpose.
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>

#include "real_cgroups.h"
#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution {
namespace {

using namespace std::chrono_literals;
using testing::Burner;
using testing::RealCgroup;

std::uint32_t self_pid() { return static_cast<std::uint32_t>(::getpid()); }

std::string self_comm() {
  std::ifstream in("/proc/self/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

void burn_cpu(std::chrono::milliseconds amount) {
  timespec start{}, now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  do {
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1'000'000 <
           amount.count());
}

TEST(ConsumersRealTest, ReadsThisProcess) {
  const ConsumerReader reader;
  if (!std::ifstream("/proc/self/stat")) GTEST_SKIP() << "no /proc on this machine";
  std::cout << "cgroup mode: " << cgroup_mode_name(reader.mode()) << "\n";
  const std::vector<std::uint32_t> pids = reader.pids();
  EXPECT_NE(std::find(pids.begin(), pids.end(), self_pid()), pids.end());
  const auto before = reader.process(self_pid());
  ASSERT_TRUE(before);
  EXPECT_EQ(before->comm, self_comm());
  EXPECT_GT(before->start_ticks, 0u);
  if (reader.mode() != CgroupMode::kNone) {
    EXPECT_TRUE(reader.cgroup_cpu_time_us(before->cgroup)) << before->cgroup;
  }
  burn_cpu(200ms);
  const auto after = reader.process(self_pid());
  ASSERT_TRUE(after);
  EXPECT_EQ(after->start_ticks, before->start_ticks);
  EXPECT_GE(after->cpu_time_us - before->cpu_time_us, 150'000u);
}

TEST(ConsumersRealTest, ReapedProcessIsGone) {
  const ConsumerReader reader;
  Burner burner(0.1);
  const auto pid = static_cast<std::uint32_t>(burner.pid());
  ASSERT_TRUE(reader.process(pid));
  burner.stop();
  EXPECT_FALSE(reader.process(pid));
}

// The burner's process names its cgroup, and its own times, in clock ticks,
// agree with the cgroup's counter.
void expect_member(const ConsumerReader& reader, const Burner& burner, const RealCgroup& group,
                   double group_us) {
  const auto info = reader.process(static_cast<std::uint32_t>(burner.pid()));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cgroup, group.path());
  EXPECT_NEAR(static_cast<double>(info->cpu_time_us), group_us, std::max(0.1 * group_us, 20'000.0));
}

// Two cgroups, each with one burner; the kernel's counters, as the reader
// sees them, must follow the burners' duty cycles.
TEST(ConsumersRealTest, CgroupCountersFollowDutyCycles) {
  const ConsumerReader reader;
  const std::string hierarchy = testing::counter_hierarchy();
  const std::string base = "zeus-test-" + std::to_string(::getpid());
  std::string why;
  const auto heavy_group = RealCgroup::create(hierarchy, base + "-a", why);
  if (!heavy_group) GTEST_SKIP() << why;
  const auto light_group = RealCgroup::create(hierarchy, base + "-b", why);
  if (!light_group) GTEST_SKIP() << why;
  // Declared after the cgroups: killed and reaped before they are removed.
  Burner heavy(0.75), light(0.25);
  heavy_group->add(heavy.pid());
  light_group->add(light.pid());
  const auto heavy_before = reader.cgroup_cpu_time_us(heavy_group->path());
  const auto light_before = reader.cgroup_cpu_time_us(light_group->path());
  ASSERT_TRUE(heavy_before && light_before);

  heavy.start();
  light.start();
  ASSERT_TRUE(heavy.wait_done(30s));
  ASSERT_TRUE(light.wait_done(30s));

  const auto heavy_after = reader.cgroup_cpu_time_us(heavy_group->path());
  const auto light_after = reader.cgroup_cpu_time_us(light_group->path());
  ASSERT_TRUE(heavy_after && light_after);
  const double heavy_us = static_cast<double>(*heavy_after - *heavy_before);
  const double light_us = static_cast<double>(*light_after - *light_before);
  std::cout << "cgroup CPU time: heavy " << heavy_us << " us (burned " << heavy.cpu_budget().count()
            << "), light " << light_us << " us (burned " << light.cpu_budget().count() << ")\n";
  ASSERT_GT(light_us, 0.0);
  EXPECT_NEAR(heavy_us / light_us, 3.0, 0.3);
  const auto heavy_budget = static_cast<double>(heavy.cpu_budget().count());
  const auto light_budget = static_cast<double>(light.cpu_budget().count());
  EXPECT_NEAR(heavy_us, heavy_budget, 0.1 * heavy_budget);
  EXPECT_NEAR(light_us, light_budget, 0.1 * light_budget);

  expect_member(reader, heavy, *heavy_group, heavy_us);
  expect_member(reader, light, *light_group, light_us);
}

}  // namespace
}  // namespace zeus::attribution
