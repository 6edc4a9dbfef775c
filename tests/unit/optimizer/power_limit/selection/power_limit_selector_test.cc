#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"

#include <gtest/gtest.h>

#include <vector>

#include "zeus/util/error.h"

namespace zeus {
namespace {

using namespace zeus::literals;

power_limit::PowerLimitMeasurement m(int watts, double joules, double seconds) {
  return {Milliwatts(watts * 1000), Joules(joules), Seconds(seconds)};
}

const std::vector<power_limit::PowerLimitMeasurement> kProfile = {
    m(300, 3000, 10.0), m(250, 2600, 10.4), m(200, 2400, 11.5), m(150, 2450, 14.0)};

TEST(PowerLimitSelector, EnergyPicksLeastEnergy) {
  EXPECT_EQ(power_limit::EnergySelector().select(kProfile), 200000_mW);
}

TEST(PowerLimitSelector, TimePicksLeastTime) {
  EXPECT_EQ(power_limit::TimeSelector().select(kProfile), 300000_mW);
}

TEST(PowerLimitSelector, ZeusCostMatchesHandComputation) {
  // eta=0.5, MaxPower=300 W: costs 3000, 2860, 2925, 3325 -> 250 W.
  EXPECT_EQ(power_limit::ZeusCostSelector(0.5).select(kProfile), 250000_mW);
  EXPECT_EQ(power_limit::ZeusCostSelector(1.0).select(kProfile), 200000_mW);
  EXPECT_EQ(power_limit::ZeusCostSelector(0.0).select(kProfile), 300000_mW);
  // With 4 GPUs MaxPower is 1200 W: time dominates, 300 W wins.
  EXPECT_EQ(power_limit::ZeusCostSelector(0.5, 4).select(kProfile), 300000_mW);
}

TEST(PowerLimitSelector, MaxSlowdownReferencesTheMaximumLimit) {
  EXPECT_EQ(power_limit::MaxSlowdownSelector(1.0).select(kProfile), 300000_mW);
  EXPECT_EQ(power_limit::MaxSlowdownSelector(1.1).select(kProfile), 250000_mW);
  EXPECT_EQ(power_limit::MaxSlowdownSelector(1.15).select(kProfile), 200000_mW);
  EXPECT_EQ(power_limit::MaxSlowdownSelector(2.0).select(kProfile), 150000_mW);
  // The reference is the maximum limit even when a lower one was faster (noise).
  const std::vector<power_limit::PowerLimitMeasurement> noisy = {m(300, 10, 10.0), m(250, 9, 9.5),
                                                                 m(200, 8, 10.9)};
  EXPECT_EQ(power_limit::MaxSlowdownSelector(1.05).select(noisy), 250000_mW);
}

TEST(PowerLimitSelector, TiesGoToTheHigherLimit) {
  const std::vector<power_limit::PowerLimitMeasurement> tie = {m(200, 100, 5), m(300, 100, 5),
                                                               m(250, 100, 5)};
  EXPECT_EQ(power_limit::EnergySelector().select(tie), 300000_mW);
  EXPECT_EQ(power_limit::TimeSelector().select(tie), 300000_mW);
  EXPECT_EQ(power_limit::ZeusCostSelector(0.3).select(tie), 300000_mW);
}

TEST(PowerLimitSelector, InvalidParametersAreClearErrors) {
  EXPECT_THROW(power_limit::ZeusCostSelector(1.5), Error);
  EXPECT_THROW(power_limit::ZeusCostSelector(-0.1), Error);
  EXPECT_THROW(power_limit::ZeusCostSelector(0.5, 0), Error);
  EXPECT_THROW(power_limit::MaxSlowdownSelector(0.9), Error);
  EXPECT_THROW(power_limit::EnergySelector().select({}), Error);
}

TEST(PowerLimitSelector, ParsesSpecs) {
  EXPECT_EQ(power_limit::make_power_limit_selector("time")->name(), "time");
  EXPECT_EQ(power_limit::make_power_limit_selector("energy")->name(), "energy");
  EXPECT_EQ(power_limit::make_power_limit_selector("zeus-cost:0.5")->name(), "zeus-cost(eta=0.5)");
  EXPECT_EQ(power_limit::make_power_limit_selector("zeus-cost:0.5:4")->name(),
            "zeus-cost(eta=0.5, world_size=4)");
  EXPECT_EQ(power_limit::make_power_limit_selector("max-slowdown:1.1")->name(),
            "max-slowdown(1.1)");
  for (const char* bad : {"", "fast", "zeus-cost", "zeus-cost:x", "max-slowdown:0.5", "time:1"}) {
    try {
      power_limit::make_power_limit_selector(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
}

}  // namespace
}  // namespace zeus
