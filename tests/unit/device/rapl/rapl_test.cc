// The RAPL backend against fake powercap trees in temporary directories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "device/rapl/rapl_keepalive.h"
#include "fakes/powercap/fake_powercap.h"
#include "zeus/device/devices.h"
#include "zeus/device/rapl.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

using testing::FakePowercap;
using testing::file_is_readable;
using ::testing::HasSubstr;
using testing::kAmdPackageRangeUj;
using testing::kIntelDramRangeUj;
using testing::kIntelPackageRangeUj;
using testing::ScopedNoFileOverride;

constexpr std::uint64_t kSmallRange = 999999;  // wraps every 1 J: easy arithmetic

device::RaplOptions no_keepalive(const std::string& root) {
  device::RaplOptions o;
  o.root = root;
  o.keepalive_period = Seconds(-1.0);
  return o;
}

const device::RaplZoneInfo* find_zone(const device::RaplCpuSet& set, const std::string& name) {
  for (const auto& z : set.zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

std::vector<std::string> cpu_names(const device::RaplCpuSet& set) {
  std::vector<std::string> names;
  for (const auto& c : set.cpus) names.push_back(c->name());
  return names;
}

// Sets an environment variable for one scope and restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(RaplDiscovery, FindsPackagesByNameNotByDirectoryIndex) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1000);
  fake.add_zone("intel-rapl:1", "psys", 5000);
  fake.add_zone("intel-rapl:2", "package-1", 2000);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  EXPECT_THAT(cpu_names(set), ::testing::ElementsAre("package-0", "package-1"));
  EXPECT_DOUBLE_EQ(set.cpus[1]->total_energy().package.value(), 0.002);
  const device::RaplZoneInfo* psys = find_zone(set, "psys");
  ASSERT_NE(psys, nullptr);
  EXPECT_FALSE(psys->measured);
  EXPECT_TRUE(find_zone(set, "package-1")->measured);
}

TEST(RaplDiscovery, OrdersMultiDiePackagesByPackageThenDie) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-1-die-0");
  fake.add_zone("intel-rapl:1", "package-0-die-1");
  fake.add_zone("intel-rapl:2", "package-0-die-0");
  fake.add_zone("intel-rapl:a", "package-1-die-1");  // ids are hex in the kernel
  fake.add_zone("intel-rapl:b", "package-x");        // not a package name
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  EXPECT_THAT(cpu_names(set), ::testing::ElementsAre("package-0-die-0", "package-0-die-1",
                                                     "package-1-die-0", "package-1-die-1"));
  EXPECT_EQ(set.zones.size(), 5u);
}

TEST(RaplDiscovery, FindsDramByNameAmongThePackageChildren) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1'000'000);
  fake.add_zone("intel-rapl:0:0", "core", 7'000'000);
  fake.add_zone("intel-rapl:0:1", "uncore", 8'000'000);
  fake.add_zone("intel-rapl:0:2", "dram", 3'000'000, kIntelDramRangeUj);
  fake.add_zone("intel-rapl:1", "package-1", 2'000'000, kAmdPackageRangeUj);
  fake.add_zone("intel-rapl:1:0", "core", 9'000'000, kAmdPackageRangeUj);  // AMD: no DRAM
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 2u);
  EXPECT_TRUE(set.cpus[0]->has_dram());
  EXPECT_FALSE(set.cpus[1]->has_dram());
  const device::CpuEnergy e0 = set.cpus[0]->total_energy();
  EXPECT_DOUBLE_EQ(e0.package.value(), 1.0);  // core/uncore are not added
  ASSERT_TRUE(e0.dram.has_value());
  EXPECT_DOUBLE_EQ(e0.dram->value(), 3.0);
  EXPECT_FALSE(set.cpus[1]->total_energy().dram.has_value());
  EXPECT_EQ(set.zones.size(), 6u);
}

TEST(RaplDiscovery, SamePackageUnderMmioIsMeasuredOnce) {
  FakePowercap fake;
  fake.add_zone("intel-rapl-mmio:0", "package-0");
  fake.add_zone("intel-rapl:0", "package-0");
  fake.add_zone("intel-rapl:0:0", "dram");
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 1u);
  EXPECT_TRUE(set.cpus[0]->has_dram());  // the intel-rapl (MSR) zone was chosen
  int measured = 0;
  for (const auto& z : set.zones) measured += z.name == "package-0" && z.measured ? 1 : 0;
  EXPECT_EQ(measured, 1);
}

TEST(RaplDiscovery, AcceptsAControlTypeDirectoryAsRoot) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  fake.add_zone("intel-rapl:0:0", "dram");
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root() + "/intel-rapl"));
  ASSERT_EQ(set.cpus.size(), 1u);
  EXPECT_TRUE(set.cpus[0]->has_dram());
}

TEST(RaplDiscovery, EmptyOrMissingRootGivesAnEmptySet) {
  FakePowercap fake;
  EXPECT_TRUE(device::open_rapl_cpus(no_keepalive(fake.root())).cpus.empty());
  EXPECT_TRUE(device::open_rapl_cpus(no_keepalive(fake.root())).zones.empty());
  EXPECT_TRUE(device::open_rapl_cpus(no_keepalive(fake.root() + "/missing")).zones.empty());
}

TEST(RaplDiscovery, HonoursZeusPowercapRootAndOptionsRootComesFirst) {
  FakePowercap from_env;
  from_env.add_zone("intel-rapl:0", "package-0");
  from_env.add_zone("intel-rapl:1", "package-1");
  FakePowercap from_options;
  from_options.add_zone("intel-rapl:0", "package-0");
  ScopedEnv env("ZEUS_POWERCAP_ROOT", from_env.root().c_str());
  EXPECT_EQ(device::open_rapl_cpus(no_keepalive("")).cpus.size(), 2u);
  EXPECT_EQ(device::open_rapl_cpus(no_keepalive(from_options.root())).cpus.size(), 1u);
}

TEST(RaplDiscovery, DiscoverDevicesReportsUnreadableZonesAsNotes) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  fake.add_zone("intel-rapl:1", "package-1");
  fake.replace_energy_with_directory("intel-rapl:1");
  device::DiscoveryOptions options;
  options.gpu_backend = "none";
  options.powercap_root = fake.root();
  const device::DeviceInventory inv = device::discover_devices(options);
  EXPECT_EQ(inv.cpus.size(), 1u);
  EXPECT_THAT(inv.notes, ::testing::Contains(HasSubstr("RAPL package-1")));
}

TEST(RaplEnergy, ReportsJoulesAndAddsUp) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1'234'567);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 1u);
  EXPECT_DOUBLE_EQ(set.cpus[0]->total_energy().package.value(), 1.234567);
  fake.set_energy("intel-rapl:0", 3'234'567);
  EXPECT_DOUBLE_EQ(set.cpus[0]->total_energy().package.value(), 3.234567);
}

TEST(RaplEnergy, TracksManyWrapsWhenReadAfterEach) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 0, kSmallRange);
  fake.add_zone("intel-rapl:0:0", "dram", 0, kSmallRange);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 1u);
  const device::CpuEnergy start = set.cpus[0]->total_energy();
  int wraps = 0;
  for (int i = 0; i < 10; ++i) {
    const std::uint64_t before = fake.energy("intel-rapl:0");
    wraps += fake.advance_energy("intel-rapl:0", 700'000) < before ? 1 : 0;
    fake.advance_energy("intel-rapl:0:0", 300'000);
    set.cpus[0]->total_energy();
  }
  ASSERT_GE(wraps, 3);
  const device::CpuEnergy end = set.cpus[0]->total_energy();
  EXPECT_NEAR((end.package - start.package).value(), 7.0, 1e-9);
  EXPECT_NEAR((*end.dram - *start.dram).value(), 3.0, 1e-9);
}

TEST(RaplEnergy, WrapAddsTheFullCounterPeriod) {
  // With the real Intel range: 262143328850 -> 100 is 101 µJ later.
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", kIntelPackageRangeUj);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  const Joules start = set.cpus[0]->total_energy().package;
  fake.set_energy("intel-rapl:0", 100);
  EXPECT_NEAR((set.cpus[0]->total_energy().package - start).value(), 101e-6, 1e-9);
}

// The keep-alive thread waits on the injected clock: stepping the clock by one
// period makes it read the counter exactly once, so wraps between two user
// reads are seen. Without the thread's reads (or with sweeps that ignore the
// clock) the three wraps are lost and the total reads 0 J.
TEST(RaplKeepAlive, CatchesWrapsBetweenTwoUserReads) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 500'000, kSmallRange);
  ManualClock clock;
  device::RaplOptions options;
  options.root = fake.root();
  options.keepalive_period = Seconds(1.0);
  options.clock = &clock;
  const device::RaplCpuSet set = device::open_rapl_cpus(options);
  ASSERT_EQ(set.cpus.size(), 1u);
  ASSERT_TRUE(clock.await_blocked(1)) << "the keep-alive does not wait on the injected clock";
  const Joules start = set.cpus[0]->total_energy().package;
  const std::uint64_t sweeps = rapl_internal::keepalive_sweeps();
  // 500000 -> 900000 -> 100000 (wrap) -> 500000 is 1 J per cycle.
  for (int cycle = 0; cycle < 3; ++cycle) {
    for (std::uint64_t v : {900'000u, 100'000u, 500'000u}) {
      fake.set_energy("intel-rapl:0", v);
      clock.advance(Seconds(1.0));
      ASSERT_TRUE(clock.await_blocked(1)) << "the keep-alive thread made no progress";
    }
  }
  EXPECT_EQ(rapl_internal::keepalive_sweeps() - sweeps, 9u) << "one sweep per period";
  const Joules end = set.cpus[0]->total_energy().package;
  EXPECT_NEAR((end - start).value(), 3.0, 1e-9);  // raw value is back where it started
}

// Destruction wakes a thread whose next sweep is an hour of (standing) clock
// time away: it would hang, and the suite's timeout fail it, otherwise.
TEST(RaplKeepAlive, OneThreadPerSetThatStopsWhenTheLastCpuIsDestroyed) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  fake.add_zone("intel-rapl:1", "package-1");
  const int before = rapl_internal::keepalive_threads_running();
  ManualClock clock;
  device::RaplOptions options;
  options.root = fake.root();
  options.keepalive_period = Seconds(3600.0);
  options.clock = &clock;
  std::unique_ptr<device::Cpu> kept;
  {
    device::RaplCpuSet set = device::open_rapl_cpus(options);
    ASSERT_EQ(set.cpus.size(), 2u);
    EXPECT_EQ(rapl_internal::keepalive_threads_running(), before + 1);
    ASSERT_TRUE(clock.await_blocked(1));
    kept = std::move(set.cpus[1]);
  }
  EXPECT_EQ(rapl_internal::keepalive_threads_running(), before + 1);  // kept uses it
  EXPECT_EQ(clock.blocked(), 1u);
  kept.reset();
  EXPECT_EQ(rapl_internal::keepalive_threads_running(), before);
  EXPECT_EQ(clock.blocked(), 0u);
}

TEST(RaplKeepAlive, NegativePeriodStartsNoThread) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  const int before = rapl_internal::keepalive_threads_running();
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  EXPECT_EQ(set.cpus.size(), 1u);
  EXPECT_EQ(rapl_internal::keepalive_threads_running(), before);
}

TEST(RaplKeepAlive, DefaultPeriodIsAQuarterOfTheWrapTimeAt1000W) {
  EXPECT_DOUBLE_EQ(rapl_internal::default_keepalive_period(kIntelPackageRangeUj).count(), 30.0);
  EXPECT_NEAR(rapl_internal::default_keepalive_period(kAmdPackageRangeUj).count(), 16.383, 1e-3);
  EXPECT_DOUBLE_EQ(rapl_internal::default_keepalive_period(kSmallRange).count(), 0.1);
}

TEST(RaplPermissions, UnreadablePackageIsReportedAndTheOtherStillWorks) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1'000'000);
  fake.add_zone("intel-rapl:1", "package-1", 2'000'000);
  fake.make_unreadable("intel-rapl:1");
  ScopedNoFileOverride as_unprivileged;  // root would read a mode-000 file anyway
  if (file_is_readable(fake.energy_path("intel-rapl:1"))) {
    GTEST_SKIP() << "cannot make a file unreadable for this process";
  }
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  EXPECT_THAT(cpu_names(set), ::testing::ElementsAre("package-0"));
  EXPECT_DOUBLE_EQ(set.cpus[0]->total_energy().package.value(), 1.0);
  const device::RaplZoneInfo* bad = find_zone(set, "package-1");
  ASSERT_NE(bad, nullptr);
  EXPECT_FALSE(bad->readable);
  EXPECT_EQ(bad->problem,
            "energy_uj is readable only by root since Linux 5.10 (CVE-2020-8694): run as root, "
            "grant read access (e.g. a udev rule or chmod), or read it through zeusd (run `zeusd "
            "serve` as root and set ZEUSD_SOCK_PATH; docs/zeusd.md)");
}

TEST(RaplPermissions, UnreadableDramKeepsThePackageWithoutDram) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  fake.add_zone("intel-rapl:0:0", "dram");
  fake.replace_energy_with_dangling_symlink("intel-rapl:0:0");
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 1u);
  EXPECT_FALSE(set.cpus[0]->has_dram());
  const device::RaplZoneInfo* dram = find_zone(set, "dram");
  ASSERT_NE(dram, nullptr);
  EXPECT_FALSE(dram->readable);
  EXPECT_THAT(dram->problem, HasSubstr("energy_uj"));
}

TEST(RaplPermissions, EnergyFileThatCannotBeReadIsReportedWithTheReason) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  fake.add_zone("intel-rapl:1", "package-1");
  fake.replace_energy_with_directory("intel-rapl:0");
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  EXPECT_THAT(cpu_names(set), ::testing::ElementsAre("package-1"));
  const device::RaplZoneInfo* bad = find_zone(set, "package-0");
  ASSERT_NE(bad, nullptr);
  EXPECT_FALSE(bad->readable);
  EXPECT_THAT(bad->problem, HasSubstr("Is a directory"));
}

TEST(RaplPermissions, GarbageInEnergyFileIsAParseProblem) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0");
  {
    std::FILE* f = std::fopen(fake.energy_path("intel-rapl:0").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("12ab\n", f);
    std::fclose(f);
  }
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  EXPECT_TRUE(set.cpus.empty());
  EXPECT_THAT(find_zone(set, "package-0")->problem, HasSubstr("expected an unsigned integer"));
}

TEST(RaplErrors, EnergyFileVanishingMidRunThrowsAClearIoError) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1000);
  fake.add_zone("intel-rapl:1", "package-1", 1000);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 2u);
  fake.remove_energy("intel-rapl:0");
  try {
    set.cpus[0]->total_energy();
    FAIL() << "expected zeus::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_THAT(e.what(), HasSubstr("intel-rapl:0/energy_uj"));
    EXPECT_THAT(e.what(), HasSubstr("vanished"));
  }
  EXPECT_DOUBLE_EQ(set.cpus[1]->total_energy().package.value(), 0.001);  // unaffected
}

TEST(RaplErrors, EnergyFileTurningRootOnlyMidRunThrowsNoPermission) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1000);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  ASSERT_EQ(set.cpus.size(), 1u);
  fake.remove_energy("intel-rapl:0");
  fake.set_energy("intel-rapl:0", 2000);  // recreated...
  fake.make_unreadable("intel-rapl:0");   // ...root-only
  ScopedNoFileOverride as_unprivileged;
  if (file_is_readable(fake.energy_path("intel-rapl:0"))) {
    GTEST_SKIP() << "cannot make a file unreadable for this process";
  }
  try {
    set.cpus[0]->total_energy();
    FAIL() << "expected zeus::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
    EXPECT_THAT(e.what(), HasSubstr("CVE-2020-8694"));
  }
}

TEST(RaplErrors, ReplacedEnergyFileIsReopenedAndKeepsCounting) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1'000'000);
  const device::RaplCpuSet set = device::open_rapl_cpus(no_keepalive(fake.root()));
  fake.remove_energy("intel-rapl:0");
  fake.set_energy("intel-rapl:0", 4'000'000);
  EXPECT_DOUBLE_EQ(set.cpus[0]->total_energy().package.value(), 4.0);
}

}  // namespace
}  // namespace zeus
