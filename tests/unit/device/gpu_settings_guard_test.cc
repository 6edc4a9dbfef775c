#include "zeus/device/gpu_settings_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "unit/optimizer/power_limit/test_support.h"
#include "zeus/device/forwarding_gpu.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

using namespace zeus::literals;
using ::testing::ElementsAre;
using testing::SimRig;

TEST(GpuSettingsGuard, RestoresOnlyWhatItChanged) {
  SimRig rig(2);
  rig.sims[0]->set_power_limit(250000_mW);
  rig.sims[1]->set_persistence_mode(true);
  {
    device::GpuSettingsGuard guard({rig.gpus[0], rig.gpus[1]});
    EXPECT_THAT(guard.original_power_limits(), ElementsAre(250000_mW, 300000_mW));
    guard.set_power_limit(250000_mW);  // GPU 0 is there already: skipped
    guard.set_persistence_mode(true);  // GPU 1 is on already: skipped
    EXPECT_THAT(rig.gpus[0]->limit_calls(), ::testing::IsEmpty());
    EXPECT_THAT(rig.gpus[1]->limit_calls(), ElementsAre(250000));
    EXPECT_EQ(rig.gpus[0]->calls().size(), 1u);  // persistence on
    EXPECT_EQ(rig.gpus[1]->calls().size(), 1u);  // limit
  }
  EXPECT_EQ(rig.sims[0]->power_limit(), 250000_mW);
  EXPECT_EQ(rig.sims[1]->power_limit(), 300000_mW);
  EXPECT_FALSE(rig.sims[0]->persistence_mode());
  EXPECT_TRUE(rig.sims[1]->persistence_mode());
  EXPECT_THAT(rig.gpus[0]->limit_calls(), ::testing::IsEmpty()) << "never changed, never reset";
  EXPECT_THAT(rig.gpus[1]->limit_calls(), ElementsAre(250000, 300000));
}

TEST(GpuSettingsGuard, SettersAreNoOpsAfterRestore) {
  SimRig rig;
  device::GpuSettingsGuard guard({rig.gpus[0]});
  EXPECT_TRUE(guard.set_power_limit(200000_mW));
  guard.restore();
  EXPECT_TRUE(guard.restored());
  EXPECT_FALSE(guard.set_power_limit(150000_mW));
  EXPECT_EQ(rig.sims[0]->power_limit(), 300000_mW);
  guard.restore();  // idempotent
  EXPECT_THAT(rig.gpus[0]->limit_calls(), ElementsAre(200000, 300000));
}

TEST(GpuSettingsGuard, RestoreAllCoversEveryLiveGuard) {
  SimRig a, b;
  const std::size_t before = device::GpuSettingsGuard::live_count();
  {
    device::GpuSettingsGuard ga({a.gpus[0]});
    device::GpuSettingsGuard gb({b.gpus[0]});
    EXPECT_EQ(device::GpuSettingsGuard::live_count(), before + 2);
    ga.set_power_limit(100000_mW);
    gb.set_power_limit(120000_mW);
    device::GpuSettingsGuard::restore_all();
    EXPECT_EQ(a.sims[0]->power_limit(), 300000_mW);
    EXPECT_EQ(b.sims[0]->power_limit(), 300000_mW);
  }
  EXPECT_EQ(device::GpuSettingsGuard::live_count(), before);
}

bool handler_is_default(int sig) {
  struct sigaction sa {};
  sigaction(sig, nullptr, &sa);
  return (sa.sa_flags & SA_SIGINFO) == 0 && sa.sa_handler == SIG_DFL;
}

TEST(GpuSettingsGuard, SignalHandlersLiveOnlyWhileGuardsDo) {
  ASSERT_TRUE(handler_is_default(SIGTERM));
  SimRig rig;
  {
    device::GpuSettingsGuard guard({rig.gpus[0]});
    EXPECT_FALSE(handler_is_default(SIGTERM));
    EXPECT_FALSE(handler_is_default(SIGINT));
  }
  EXPECT_TRUE(handler_is_default(SIGTERM));
  EXPECT_TRUE(handler_is_default(SIGINT));
}

TEST(GpuSettingsGuard, IgnoredSignalStaysIgnored) {
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old);
  SimRig rig;
  {
    device::GpuSettingsGuard guard({rig.gpus[0]});
    struct sigaction now {};
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN);
  }
  sigaction(SIGINT, &old, nullptr);
}

TEST(GpuSettingsGuard, LockedClocksAreResetAndPerGpuRestoreKeepsTheGuard) {
  SimRig rig(2);
  device::GpuSettingsGuard guard({rig.gpus[0], rig.gpus[1]});
  guard.set_gpu_locked_clocks(Megahertz(1200), Megahertz(1200));
  guard.set_memory_locked_clocks(1, Megahertz(1215), Megahertz(1215));
  guard.set_power_limit(1, 200000_mW);
  EXPECT_EQ(rig.gpus[0]->clock_calls(), (std::vector<std::string>{"G 1200-1200"}));
  EXPECT_EQ(rig.gpus[1]->clock_calls(), (std::vector<std::string>{"G 1200-1200", "M 1215-1215"}));
  // A lease on GPU 1 ends: only GPU 1 comes back, and the guard stays usable.
  guard.restore_gpu(1);
  EXPECT_EQ(rig.gpus[1]->clock_calls(),
            (std::vector<std::string>{"G 1200-1200", "M 1215-1215", "reset G", "reset M"}));
  EXPECT_EQ(rig.sims[1]->power_limit(), 300000_mW);
  EXPECT_EQ(rig.gpus[0]->clock_calls().size(), 1u);
  EXPECT_FALSE(guard.restored());
  EXPECT_TRUE(guard.set_power_limit(1, 150000_mW));
  guard.restore();
  EXPECT_EQ(rig.gpus[0]->clock_calls(), (std::vector<std::string>{"G 1200-1200", "reset G"}));
  EXPECT_EQ(rig.sims[1]->power_limit(), 300000_mW);
  // GPU 1's clocks were restored with the lease: not reset a second time.
  EXPECT_EQ(rig.gpus[1]->clock_calls().size(), 4u);
  EXPECT_FALSE(guard.set_gpu_locked_clocks(Megahertz(900), Megahertz(900)));
}

TEST(GpuSettingsGuard, RejectsAPositionOutsideTheSet) {
  SimRig rig;
  device::GpuSettingsGuard guard({rig.gpus[0]});
  EXPECT_THROW(guard.set_power_limit(1, 200000_mW), Error);
  EXPECT_THROW(guard.set_gpu_locked_clocks(7, Megahertz(900), Megahertz(900)), Error);
}

// An AMD GPU has no persistence mode: its guard still guards the power limit
// (zeusd's leases and the power-limit optimizer build one per GPU), and
// asking for persistence gets the GPU's own answer.
class WithoutPersistence final : public device::ForwardingGpu {
 public:
  using device::ForwardingGpu::ForwardingGpu;
  bool persistence_mode() override {
    throw_error(ErrorCode::kNotSupported, "AMD GPUs have no persistence mode");
  }
  void set_persistence_mode(bool) override { (void)persistence_mode(); }
};

TEST(GpuSettingsGuard, AGpuWithoutPersistenceModeKeepsItsLimitGuarded) {
  SimRig rig;
  auto amd_like = std::make_shared<WithoutPersistence>(rig.gpus[0]);
  {
    device::GpuSettingsGuard guard({amd_like});
    EXPECT_TRUE(guard.set_power_limit(200000_mW));
    EXPECT_EQ(rig.sims[0]->power_limit(), 200000_mW);
    try {
      guard.set_persistence_mode(true);
      FAIL() << "persistence mode was set on a GPU without one";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
    }
    EXPECT_THAT(guard.original_persistence_modes(), ElementsAre(false));
  }
  EXPECT_EQ(rig.sims[0]->power_limit(), 300000_mW);  // restored
}

}  // namespace
}  // namespace zeus
