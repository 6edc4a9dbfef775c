// Lasting GPU settings (`zeus gpu set`): every GPU is checked before any is
// changed, and a device that refuses midway is reported with what was
// already applied (the class: partial effects behind a misleading answer).
#include "zeus/device/gpu_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "support/error_of.h"
#include "unit/optimizer/power_limit/test_support.h"
#include "zeus/device/forwarding_gpu.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

using namespace zeus::literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::SimRig;

std::vector<std::shared_ptr<device::Gpu>> gpus_of(const SimRig& rig) {
  return {rig.gpus.begin(), rig.gpus.end()};
}

using zeus::testing::error_of;

TEST(GpuSettings, AppliesToEveryGpuAndSaysWhatChanged) {
  SimRig rig(2);
  device::GpuSettingsChange c;
  c.power_limit = 200000_mW;
  c.persistence_mode = true;
  const auto applied = device::apply_gpu_settings(gpus_of(rig), {0, 1}, c);
  EXPECT_THAT(applied.changes,
              ElementsAre("GPU 0: power limit 300 W -> 200 W", "GPU 0: persistence mode on",
                          "GPU 1: power limit 300 W -> 200 W", "GPU 1: persistence mode on"));
  EXPECT_EQ(rig.sims[1]->power_limit(), 200000_mW);
  EXPECT_TRUE(rig.sims[0]->persistence_mode());
  device::GpuSettingsChange reset;
  reset.reset_power_limit = true;
  EXPECT_THAT(device::apply_gpu_settings(gpus_of(rig), {0, 1}, reset).changes[0],
              HasSubstr("200 W -> 300 W (the default)"));
  EXPECT_EQ(rig.sims[0]->power_limit(), rig.sims[0]->default_power_limit());
}

TEST(GpuSettings, AValueOneGpuCannotTakeChangesNoGpu) {
  SimRig rig(2);
  device::GpuSettingsChange c;
  c.persistence_mode = true;
  c.power_limit = 5000000_mW;  // far above the range
  const Error e = error_of([&] { device::apply_gpu_settings(gpus_of(rig), {0, 1}, c); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("GPU 0"));
  EXPECT_THAT(e.what(), HasSubstr("no GPU was changed"));
  c.power_limit.reset();
  c.gpu_clocks = device::ClockRange{Megahertz(100), Megahertz(99999)};
  EXPECT_THAT(error_of([&] {
                device::apply_gpu_settings(gpus_of(rig), {0, 1}, c);
              }).what(),
              HasSubstr("supports graphics clocks from"));
  for (const auto& g : rig.gpus) {
    EXPECT_TRUE(g->calls().empty());
    EXPECT_TRUE(g->clock_calls().empty());
  }
  EXPECT_THAT(error_of([&] {
                device::apply_gpu_settings(gpus_of(rig), {0, 1}, {});
              }).what(),
              HasSubstr("no setting to change"));
  device::GpuSettingsChange both;
  both.power_limit = 200000_mW;
  both.reset_power_limit = true;
  EXPECT_THAT(error_of([&] {
                device::apply_gpu_settings(gpus_of(rig), {0, 1}, both);
              }).what(),
              HasSubstr("not both"));
}

TEST(GpuSettings, ARefusalMidwayRollsBackWhatWasApplied) {
  SimRig rig(2);
  rig.gpus[1]->set_deny_setters(true);
  device::GpuSettingsChange c;
  c.power_limit = 250000_mW;
  const Error e = error_of([&] { device::apply_gpu_settings(gpus_of(rig), {0, 3}, c); });
  EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
  EXPECT_THAT(e.what(), HasSubstr("GPU 3: "));
  EXPECT_THAT(e.what(), HasSubstr("rolled back what was applied before:\n  undone: GPU 0: power "
                                  "limit back to 300 W"));
  EXPECT_EQ(rig.sims[0]->power_limit(), 300000_mW);
}

// A GPU reached through zeusd: the daemon reports no clock table (so clocks
// cannot be checked up front) and refuses clocks the GPU cannot take.
class NoClockTableGpu final : public device::ForwardingGpu {
 public:
  using device::ForwardingGpu::ForwardingGpu;
  std::vector<Megahertz> supported_memory_clocks() override {
    throw_error(ErrorCode::kNotSupported, "zeusd does not report the clock table");
  }
  void set_gpu_locked_clocks(Megahertz, Megahertz) override {
    throw_error(ErrorCode::kInvalidArgument, "the driver refused the clocks");
  }
};

TEST(GpuSettings, ClocksRefusedAfterTheLimitWasSetLeaveTheLimitAsItWas) {
  SimRig rig(2);
  std::vector<std::shared_ptr<device::Gpu>> gpus = {std::make_shared<NoClockTableGpu>(rig.gpus[0]),
                                                    std::make_shared<NoClockTableGpu>(rig.gpus[1])};
  rig.sims[0]->set_persistence_mode(false);
  device::GpuSettingsChange c;
  c.power_limit = 250000_mW;
  c.persistence_mode = true;
  c.gpu_clocks = device::ClockRange{Megahertz(1), Megahertz(99999)};
  const Error e = error_of([&] { device::apply_gpu_settings(gpus, {0, 1}, c); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("the driver refused the clocks"));
  EXPECT_THAT(e.what(), HasSubstr("undone: GPU 0: persistence mode back off"));
  EXPECT_THAT(e.what(), HasSubstr("undone: GPU 0: power limit back to 300 W"));
  EXPECT_EQ(rig.sims[0]->power_limit(), 300000_mW);
  EXPECT_FALSE(rig.sims[0]->persistence_mode());
  EXPECT_THAT(rig.gpus[0]->limit_calls(), ElementsAre(250000, 300000));
  EXPECT_TRUE(rig.gpus[1]->calls().empty());  // never reached
}

TEST(GpuSettings, MemoryClocksOutsideTheTableChangeNoGpu) {
  SimRig rig(2);
  const auto memory = rig.sims[0]->supported_memory_clocks();
  ASSERT_FALSE(memory.empty());
  const Megahertz top = *std::max_element(memory.begin(), memory.end());
  device::GpuSettingsChange c;
  c.power_limit = 250000_mW;
  c.memory_clocks = device::ClockRange{top, Megahertz(top.value() + 1000)};
  const Error e = error_of([&] { device::apply_gpu_settings(gpus_of(rig), {0, 1}, c); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("supports memory clocks from"));
  for (const auto& g : rig.gpus) {
    EXPECT_TRUE(g->calls().empty());
    EXPECT_TRUE(g->clock_calls().empty());
  }
}

TEST(GpuSettings, ReadsWhatItCanAndLeavesTheRestUnknown) {
  SimRig rig(1);
  rig.sims[0]->set_persistence_mode(true);
  const auto r = device::read_gpu_settings(*rig.gpus[0], 5);
  EXPECT_EQ(r.index, 5);
  EXPECT_EQ(r.power_limit, 300000_mW);
  ASSERT_TRUE(r.constraints.has_value());
  EXPECT_LT(r.constraints->min, r.constraints->max);
  EXPECT_EQ(r.persistence_mode, true);
}

}  // namespace
}  // namespace zeus
