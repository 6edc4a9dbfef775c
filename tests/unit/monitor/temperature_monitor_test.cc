// TemperatureMonitor over the fake NVML and the fake AMD SMI (real backends
// through dlopen) on a manual clock.
#include "zeus/monitor/temperature_monitor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "device/amdsmi.h"
#include "fakes/amdsmi/fake_amdsmi_control.h"
#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/device/nvml.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::testing {
namespace {

class TemperatureMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.reset();
    device::NvmlOptions o;
    o.library_path = fake_.path();
    o.cuda_visible_devices = std::nullopt;
    unsetenv("CUDA_VISIBLE_DEVICES");
    device::NvmlGpuSet set = device::open_nvml_gpus(o);
    for (auto& g : set.gpus) gpus_.push_back(std::move(g));
  }
  monitor::TemperatureMonitorOptions manual() {
    monitor::TemperatureMonitorOptions o;
    o.start_thread = false;
    o.clock = &clock_;
    return o;
  }
  // Sets GPU 0's temperature, advances the clock to `t` and samples.
  void step(monitor::TemperatureMonitor& m, double t, int celsius) {
    fake_.set_temperature(0, celsius);
    clock_.set(Seconds(t));
    m.sample_now();
  }

  FakeNvml fake_;
  ManualClock clock_{Seconds(0.0)};
  std::vector<std::shared_ptr<device::Gpu>> gpus_;
};

TEST_F(TemperatureMonitorTest, RunsOfEqualReadingsKeepTheirFirstAndLastSample) {
  fake_.set_temperature(0, 45);
  monitor::TemperatureMonitor m({gpus_[0]}, {0}, manual());  // samples at t=0
  step(m, 1, 45);
  step(m, 2, 45);
  step(m, 3, 50);
  step(m, 4, 50);
  step(m, 5, 47);
  const auto tl = m.timeline(0);
  std::vector<std::pair<double, double>> got;
  for (const auto& s : tl) got.emplace_back(s.time.count(), s.temperature.value());
  EXPECT_THAT(
      got, ::testing::ElementsAre(std::pair{0.0, 45.0}, std::pair{2.0, 45.0}, std::pair{3.0, 50.0},
                                  std::pair{4.0, 50.0}, std::pair{5.0, 47.0}));
  EXPECT_EQ(m.timeline(0, Seconds(2.0), Seconds(4.0)).size(), 3U) << "inclusive range";
  EXPECT_TRUE(m.timeline(7).empty());
}

TEST_F(TemperatureMonitorTest, NearestSampleQuery) {
  fake_.set_temperature(0, 45);
  monitor::TemperatureMonitor m({gpus_[0]}, {0}, manual());
  step(m, 2, 45);
  step(m, 3, 50);
  EXPECT_EQ(m.temperature(0, Seconds(2.4))->value(), 45.0);
  EXPECT_EQ(m.temperature(0, Seconds(2.5))->value(), 45.0) << "a tie goes to the earlier sample";
  EXPECT_EQ(m.temperature(0, Seconds(2.6))->value(), 50.0);
  EXPECT_EQ(m.temperature(0, Seconds(-5))->value(), 45.0);
  EXPECT_EQ(m.temperature(0, Seconds(99))->value(), 50.0);
  EXPECT_EQ(m.temperature(0)->value(), 50.0) << "no time: the latest";
  EXPECT_FALSE(m.temperature(3).has_value());
}

TEST_F(TemperatureMonitorTest, AllGpusAtOnce) {
  fake_.set_temperature(0, 40);
  fake_.set_temperature(1, 60);
  monitor::TemperatureMonitor m(gpus_, {0, 1}, manual());
  const auto all = m.temperatures();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->at(0).value(), 40.0);
  EXPECT_EQ(all->at(1).value(), 60.0);
}

TEST_F(TemperatureMonitorTest, UnsupportedGpuIsDroppedWithOneWarning) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  fake_.fail_always("nvmlDeviceGetTemperatureV", nvml_rc::kNotSupported);
  monitor::TemperatureMonitor m(gpus_, {0, 1}, manual());
  const unsigned calls = fake_.call_count("nvmlDeviceGetTemperatureV");
  m.sample_now();
  m.sample_now();
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTemperatureV"), calls) << "no longer read";
  EXPECT_EQ(sink->count(log::Level::kWarn, "does not report its temperature"), 2U);
  EXPECT_FALSE(m.temperatures().has_value()) << "a GPU without samples: no answer for all";
}

TEST_F(TemperatureMonitorTest, TransientErrorsAreLoggedAndSamplingGoesOn) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  fake_.set_temperature(0, 45);
  monitor::TemperatureMonitor m({gpus_[0]}, {0}, manual());
  fake_.fail_next("nvmlDeviceGetTemperatureV", nvml_rc::kTimeout);
  step(m, 1, 46);
  step(m, 2, 47);
  EXPECT_EQ(sink->count(log::Level::kWarn, "GPU 0"), 1U);
  EXPECT_EQ(m.timeline(0).size(), 2U);
  EXPECT_EQ(m.temperature(0)->value(), 47.0);
}

TEST_F(TemperatureMonitorTest, BackgroundThreadSamplesOnTheInjectedClock) {
  fake_.set_temperature(0, 45);
  monitor::TemperatureMonitorOptions o;
  o.interval = Seconds(1.0);
  o.clock = &clock_;
  monitor::TemperatureMonitor m({gpus_[0]}, {0}, o);  // samples at t=0, then waits for t=1
  ASSERT_TRUE(clock_.await_blocked(1));
  fake_.set_temperature(0, 60);
  clock_.advance(Seconds(1.0));
  ASSERT_TRUE(clock_.await_blocked(1)) << "sampled at t=1, waiting for t=2";
  EXPECT_EQ(m.temperature(0)->value(), 60.0);
  EXPECT_EQ(m.timeline(0).size(), 2U);
  m.stop();  // wakes the wait at once
  const unsigned calls = fake_.call_count("nvmlDeviceGetTemperatureV");
  clock_.advance(Seconds(5.0));
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTemperatureV"), calls) << "stop() stops";
}

TEST_F(TemperatureMonitorTest, RejectsBadArguments) {
  monitor::TemperatureMonitorOptions o = manual();
  o.interval = Seconds(0);
  EXPECT_THROW(monitor::TemperatureMonitor({gpus_[0]}, {0}, o), Error);
  EXPECT_THROW(monitor::TemperatureMonitor({}, {}, manual()), Error);
}

TEST(TemperatureMonitorAmd, ReadsTheHotspotOfAmdGpus) {
  FakeAmdSmi fake(26);
  fake.reset();
  fake.set_temperature_millic(1, 88500);
  unsetenv("HIP_VISIBLE_DEVICES");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("ROCR_VISIBLE_DEVICES");
  amdsmi_internal::AmdSmiOptions o;
  o.amdsmi_lib_dir = fake.dir();
  amdsmi_internal::AmdSmiGpuSet set = amdsmi_internal::open_amdsmi_gpus(o);
  std::vector<std::shared_ptr<device::Gpu>> gpus;
  for (auto& g : set.gpus) gpus.push_back(std::move(g));
  ManualClock clock;
  monitor::TemperatureMonitorOptions mo;
  mo.start_thread = false;
  mo.clock = &clock;
  monitor::TemperatureMonitor m(gpus, {0, 1}, mo);
  EXPECT_DOUBLE_EQ(m.temperature(1)->value(), 88.5);
  EXPECT_DOUBLE_EQ(m.temperature(0)->value(), 55.0);
}

}  // namespace
}  // namespace zeus::testing
