// Energy of a Jetson board's rails: sampled power integrated over the window
// (the power monitor's rule), through the power monitor and the energy monitor.
#include <gtest/gtest.h>

#include "fakes/jetson/fake_jetson.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/util/error.h"

namespace zeus::testing {
namespace {

std::shared_ptr<const device::JetsonBoard> board_of(const FakeJetson& fake) {
  auto board = device::JetsonBoard::discover(fake.root());
  if (!board) throw std::runtime_error("the fake board was not discovered");
  return std::make_shared<const device::JetsonBoard>(std::move(*board));
}

TEST(JetsonPower, RailTimelinesIntegrateLikeGpuTimelines) {
  FakeJetson fake(FakeJetson::Layout::kNanoIioPower);
  ManualClock clock(Seconds(10));
  monitor::PowerMonitorOptions options;
  options.clock = &clock;
  options.start_thread = false;
  options.jetson = board_of(fake);
  fake.set_power(device::SocRail::kTotal, Watts(5));
  fake.set_power(device::SocRail::kGpu, Watts(2));
  monitor::PowerMonitor monitor({}, {}, {}, {}, options);  // a Jetson alone is enough to monitor
  clock.advance(Seconds(2));
  fake.set_power(device::SocRail::kTotal, Watts(7));
  monitor.sample_now();
  // Trapezoid over [10, 12]: (5 + 7) / 2 * 2.
  EXPECT_DOUBLE_EQ(monitor.soc_energy(device::SocRail::kTotal, Seconds(10), Seconds(12))->value(),
                   12.0);
  EXPECT_DOUBLE_EQ(monitor.soc_energy(device::SocRail::kGpu, Seconds(10), Seconds(12))->value(),
                   4.0);
  EXPECT_EQ(monitor.soc_timeline(device::SocRail::kTotal).size(), 2u);
}

TEST(JetsonPower, WithoutAnyDeviceThePowerMonitorRefuses) {
  EXPECT_THROW(monitor::PowerMonitor({}, {}, {}, {}, monitor::PowerMonitorOptions{}), Error);
}

TEST(JetsonEnergy, WindowsReportEachRailOfTheBoard) {
  FakeJetson fake(FakeJetson::Layout::kTx2IioVoltageCurrent);
  ManualClock clock(Seconds(100));
  device::DeviceInventory inventory;
  inventory.gpu_backend = "none";
  inventory.jetson = board_of(fake);
  monitor::EnergyMonitorOptions options;
  options.clock = &clock;
  options.power_monitor.start_thread = false;
  fake.set_power(device::SocRail::kCpu, Watts(3));
  fake.set_power(device::SocRail::kGpu, Watts(10));
  fake.set_power(device::SocRail::kTotal, Watts(20));
  monitor::EnergyMonitor monitor(inventory, options);
  monitor.begin_window("step");
  clock.advance(Seconds(1.5));
  const monitor::Measurement m = monitor.end_window("step");
  ASSERT_TRUE(m.soc_energy.has_value());
  EXPECT_NEAR(m.soc_energy->cpu->value(), 4.5, 1e-6);
  EXPECT_NEAR(m.soc_energy->gpu->value(), 15.0, 1e-6);
  EXPECT_NEAR(m.soc_energy->total->value(), 30.0, 1e-6);
  EXPECT_DOUBLE_EQ(m.total_energy().value(), 0.0) << "the rails are not GPUs or CPU packages";

  // Power that changes inside the window: the edges are sampled, so a window
  // of [2 W for 1 s, then 6 W for 1 s] sampled at both ends and in the middle.
  fake.set_power(device::SocRail::kCpu, Watts(2));
  clock.advance(Seconds(0.5));  // not at the last window's edge, where 3 W was sampled
  monitor.begin_window("two");
  clock.advance(Seconds(1));
  fake.set_power(device::SocRail::kCpu, Watts(6));
  monitor.power_monitor()->sample_now();
  clock.advance(Seconds(1));
  const monitor::Measurement two = monitor.end_window("two");
  EXPECT_NEAR(two.soc_energy->cpu->value(), (2 + 6) / 2.0 + 6.0, 1e-6);

  monitor.begin_window("dropped");
  clock.advance(Seconds(1));
  const monitor::Measurement cancelled = monitor.end_window("dropped", true, /*cancel=*/true);
  ASSERT_TRUE(cancelled.soc_energy.has_value());
  EXPECT_DOUBLE_EQ(cancelled.soc_energy->total->value(), 0.0);
}

TEST(JetsonEnergy, ARailTheBoardLacksStaysUnset) {
  FakeJetson fake(FakeJetson::Layout::kXavierHwmonFlat);
  ManualClock clock;
  device::DeviceInventory inventory;
  inventory.jetson = board_of(fake);
  monitor::EnergyMonitorOptions options;
  options.clock = &clock;
  options.power_monitor.start_thread = false;
  monitor::EnergyMonitor monitor(inventory, options);
  monitor.begin_window("w");
  clock.advance(Seconds(1));
  const monitor::Measurement m = monitor.end_window("w");
  ASSERT_TRUE(m.soc_energy.has_value());
  EXPECT_TRUE(m.soc_energy->cpu.has_value());
  EXPECT_TRUE(m.soc_energy->gpu.has_value());
  EXPECT_FALSE(m.soc_energy->total.has_value());

  options.soc = false;
  monitor::EnergyMonitor without(inventory, options);
  without.begin_window("w");
  EXPECT_FALSE(without.end_window("w").soc_energy.has_value());
}

}  // namespace
}  // namespace zeus::testing
