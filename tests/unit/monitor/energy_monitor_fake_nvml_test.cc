// The energy monitor over the real NVML backend, loaded from the fake
// libnvidia-ml.so.1: the whole measurement stack below the CLI.
#include <gtest/gtest.h>

#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

class EnergyMonitorOnFakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.reset();
    fake_.set_device_count(2);
  }
  device::DeviceInventory open() const {
    device::DiscoveryOptions o;
    o.gpu_backend = "nvml";
    o.nvml_library = fake_.path();
    o.cpus = false;
    return device::discover_devices(o);
  }
  monitor::EnergyMonitorOptions options() {
    monitor::EnergyMonitorOptions o;
    o.clock = &clock_;
    o.power_monitor.start_thread = false;
    o.power_monitor.interval = Seconds(0.01);
    return o;
  }
  testing::FakeNvml fake_;
  ManualClock clock_;
};

TEST_F(EnergyMonitorOnFakeNvml, WindowEnergyIsTheCounterDelta) {
  const auto devices = open();
  monitor::EnergyMonitor monitor(devices, options());
  monitor.begin_window("step");
  fake_.advance_energy_mj(0, 1500);
  fake_.advance_energy_mj(1, 250);
  clock_.advance(Seconds(1));
  const auto m = monitor.end_window("step");
  EXPECT_DOUBLE_EQ(m.gpu_energy.at(0).value(), 1.5);
  EXPECT_DOUBLE_EQ(m.gpu_energy.at(1).value(), 0.25);
  EXPECT_EQ(m.gpu_energy_source.at(0), monitor::EnergySource::kCounter);
  EXPECT_TRUE(m.gpus_below_update_period.empty());
}

TEST_F(EnergyMonitorOnFakeNvml, PreVoltaGpuIsMeasuredFromItsPowerTimeline) {
  fake_.set_architecture(1, testing::nvml_arch::kPascal);
  fake_.set_power_mw(1, 150000, 150000, 0);
  const auto devices = open();
  monitor::EnergyMonitor monitor(devices, options());
  ASSERT_NE(monitor.power_monitor(), nullptr);
  monitor.begin_window("step");
  for (int i = 0; i < 100; ++i) {
    clock_.advance(Seconds(0.01));
    monitor.power_monitor()->sample_now();
  }
  const auto m = monitor.end_window("step");
  EXPECT_EQ(m.gpu_energy_source.at(1), monitor::EnergySource::kPowerTimeline);
  EXPECT_NEAR(m.gpu_energy.at(1).value(), 150.0, 1e-6);  // 150 W for 1 s
  EXPECT_EQ(m.gpu_energy_source.at(0), monitor::EnergySource::kCounter);
}

TEST_F(EnergyMonitorOnFakeNvml, StaticCounterIsFlaggedNotSilentlyZero) {
  const auto devices = open();
  monitor::EnergyMonitor monitor(devices, options());
  monitor.begin_window("short");
  clock_.advance(Seconds(0.02));
  const auto m = monitor.end_window("short");
  EXPECT_EQ(m.gpus_below_update_period, (std::vector<int>{0, 1}));
}

// The lost GPU is reported (with NVML's reason) and left out; the window
// still ends, so a wrapped command's result is not lost with it.
TEST_F(EnergyMonitorOnFakeNvml, GpuLostMidWindowIsReportedNotThrown) {
  const auto devices = open();
  monitor::EnergyMonitor monitor(devices, options());
  monitor.begin_window("step");
  fake_.set_lost(0, true);
  const monitor::Measurement m = monitor.end_window("step");
  ASSERT_EQ(m.failed_gpus.count(0), 1u);
  EXPECT_NE(m.failed_gpus.at(0).find("GPU 0"), std::string::npos) << m.failed_gpus.at(0);
  EXPECT_EQ(m.gpu_energy.count(0), 0u);
  fake_.set_lost(0, false);
}

}  // namespace
}  // namespace zeus
