// Gpu::telemetry() on NVML: values read through in their units, each
// NOT_SUPPORTED call leaving only its own fields empty (never a 0), other
// failures thrown, and the pre-R535 clock-reasons name used when the new one
// is missing (the old fake driver).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nvml_fixture.h"
#include "zeus/device/gpu_telemetry.h"

namespace zeus::testing {
namespace {

using NvmlTelemetryTest = NvmlFakeTest;

constexpr unsigned long long kMiB = 1048576ULL;

TEST_F(NvmlTelemetryTest, ReadsEveryValueThroughInItsUnit) {
  fake_.set_telemetry(1, 88, 35, 1755, 2619,
                      device::clock_event::kSwPowerCap | device::clock_event::kSwThermalSlowdown,
                      30000 * kMiB, 81559 * kMiB);
  fake_.set_temperature(1, 71);
  device::NvmlGpuSet set = open();
  const device::GpuTelemetry t = set.gpus[1]->telemetry();
  ASSERT_TRUE(t.gpu_utilization && t.memory_utilization && t.sm_clock && t.memory_clock &&
              t.clock_event_reasons && t.memory_used && t.memory_free && t.memory_total &&
              t.temperature);
  EXPECT_DOUBLE_EQ(t.gpu_utilization->value(), 88.0);
  EXPECT_DOUBLE_EQ(t.memory_utilization->value(), 35.0);
  EXPECT_EQ(t.sm_clock->value(), 1755);
  EXPECT_EQ(t.memory_clock->value(), 2619);
  EXPECT_EQ(*t.clock_event_reasons,
            device::clock_event::kSwPowerCap | device::clock_event::kSwThermalSlowdown);
  EXPECT_EQ(t.memory_used->value(), static_cast<std::int64_t>(30000 * kMiB));
  EXPECT_EQ(t.memory_free->value(), static_cast<std::int64_t>(51559 * kMiB));
  EXPECT_EQ(t.memory_total->value(), static_cast<std::int64_t>(81559 * kMiB));
  EXPECT_DOUBLE_EQ(t.temperature->value(), 71.0);
  // The other GPU keeps its own (default) values: the handle is not mixed up.
  const device::GpuTelemetry t0 = set.gpus[0]->telemetry();
  EXPECT_DOUBLE_EQ(t0.gpu_utilization->value(), 73.0);
  EXPECT_EQ(t0.sm_clock->value(), 1980);
  // The R535 name is used on a current driver, not the deprecated one.
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetCurrentClocksEventReasons"), 2u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetCurrentClocksThrottleReasons"), 0u);
}

TEST_F(NvmlTelemetryTest, ValuesMoveBetweenReads) {
  device::NvmlGpuSet set = open();
  fake_.set_telemetry(0, 0, 0, 345, 405, device::clock_event::kGpuIdle, 500 * kMiB, 81559 * kMiB);
  const device::GpuTelemetry idle = set.gpus[0]->telemetry();
  fake_.set_telemetry(0, 100, 60, 1980, 2619, 0, 70000 * kMiB, 81559 * kMiB);
  const device::GpuTelemetry busy = set.gpus[0]->telemetry();
  EXPECT_LT(idle.gpu_utilization->value(), busy.gpu_utilization->value());
  EXPECT_LT(idle.sm_clock->value(), busy.sm_clock->value());
  EXPECT_EQ(*idle.clock_event_reasons, device::clock_event::kGpuIdle);
  EXPECT_EQ(*busy.clock_event_reasons, 0u);  // read as 0, and present
  EXPECT_LT(idle.memory_used->value(), busy.memory_used->value());
}

// Each call answering NOT_SUPPORTED empties only its own fields.
struct Unsupported {
  const char* function;
  std::vector<std::string> empty;
};

TEST_F(NvmlTelemetryTest, NotSupportedLeavesOnlyThatFieldEmpty) {
  const std::vector<Unsupported> cases = {
      {"nvmlDeviceGetUtilizationRates", {"gpu_utilization", "memory_utilization"}},
      {"nvmlDeviceGetClockInfo", {"sm_clock", "memory_clock"}},
      {"nvmlDeviceGetCurrentClocksEventReasons", {"clock_event_reasons"}},
      {"nvmlDeviceGetMemoryInfo", {"memory_used", "memory_free", "memory_total"}},
      {"nvmlDeviceGetTemperatureV", {"temperature"}},
  };
  device::NvmlGpuSet set = open();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.function);
    fake_.fail_always(c.function, nvml_rc::kNotSupported);
    const device::GpuTelemetry t = set.gpus[0]->telemetry();
    fake_.fail_always(c.function, 0);
    const std::vector<std::pair<std::string, bool>> present = {
        {"gpu_utilization", t.gpu_utilization.has_value()},
        {"memory_utilization", t.memory_utilization.has_value()},
        {"sm_clock", t.sm_clock.has_value()},
        {"memory_clock", t.memory_clock.has_value()},
        {"clock_event_reasons", t.clock_event_reasons.has_value()},
        {"memory_used", t.memory_used.has_value()},
        {"memory_free", t.memory_free.has_value()},
        {"memory_total", t.memory_total.has_value()},
        {"temperature", t.temperature.has_value()},
    };
    for (const auto& [field, has] : present) {
      const bool expect_empty = std::find(c.empty.begin(), c.empty.end(), field) != c.empty.end();
      EXPECT_EQ(has, !expect_empty) << field;
    }
  }
}

TEST_F(NvmlTelemetryTest, UtilizationIsEmptyUnderMig) {
  fake_.set_mig_mode(0, 1);
  device::NvmlGpuSet set = open();
  const device::GpuTelemetry t = set.gpus[0]->telemetry();
  EXPECT_FALSE(t.gpu_utilization.has_value());
  EXPECT_FALSE(t.memory_utilization.has_value());
  EXPECT_TRUE(t.memory_used.has_value());  // memory is still the physical GPU's
}

TEST_F(NvmlTelemetryTest, OtherFailuresThrow) {
  device::NvmlGpuSet set = open();
  fake_.set_lost(0, true);
  EXPECT_EQ(error_of([&] { set.gpus[0]->telemetry(); }).code(), ErrorCode::kGpuLost);
  fake_.set_lost(0, false);
  fake_.fail_next("nvmlDeviceGetMemoryInfo", nvml_rc::kUnknown);
  const Error e = error_of([&] { set.gpus[0]->telemetry(); });
  EXPECT_THAT(e.what(), ::testing::HasSubstr("nvmlDeviceGetMemoryInfo"));
}

TEST_F(NvmlTelemetryTest, MinorNumberIsNvmls) {
  fake_.set_minor_number(1, 7);
  device::NvmlGpuSet set = open();
  EXPECT_EQ(set.gpus[0]->minor_number(), 0);
  EXPECT_EQ(set.gpus[1]->minor_number(), 7);
}

TEST(ClockEventReasons, NamesEveryKnownBitAndReportsUnknownOnes) {
  std::vector<std::string> names;
  std::vector<std::uint64_t> unknown;
  device::for_each_clock_event_reason(
      device::clock_event::kGpuIdle | device::clock_event::kHwThermalSlowdown | 0x8000ULL,
      [&](std::string_view n) { names.emplace_back(n); },
      [&](std::uint64_t bit) { unknown.push_back(bit); });
  EXPECT_THAT(names, ::testing::ElementsAre("gpu_idle", "hw_thermal_slowdown"));
  EXPECT_THAT(unknown, ::testing::ElementsAre(0x8000ULL));
  for (unsigned b = 0; b < 9; ++b)
    EXPECT_FALSE(device::clock_event_reason_name(1ULL << b).empty()) << b;
}

class NvmlOldDriverTelemetryTest : public NvmlFakeTest {
 protected:
  NvmlOldDriverTelemetryTest() : NvmlFakeTest(fake_nvml_old_path()) {}
};

// A driver before R535 exports only nvmlDeviceGetCurrentClocksThrottleReasons
// (and nvmlDeviceGetTemperature): the same bits come through it.
TEST_F(NvmlOldDriverTelemetryTest, ClockReasonsComeThroughTheFormerName) {
  fake_.set_telemetry(0, 50, 20, 1410, 1215, device::clock_event::kHwSlowdown, 1024 * kMiB,
                      40960 * kMiB);
  fake_.set_temperature(0, 58);
  device::NvmlGpuSet set = open();
  const device::GpuTelemetry t = set.gpus[0]->telemetry();
  ASSERT_TRUE(t.clock_event_reasons.has_value());
  EXPECT_EQ(*t.clock_event_reasons, device::clock_event::kHwSlowdown);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetCurrentClocksThrottleReasons"), 1u);
  ASSERT_TRUE(t.temperature.has_value());
  EXPECT_DOUBLE_EQ(t.temperature->value(), 58.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTemperature"), 1u);
  fake_.fail_always("nvmlDeviceGetCurrentClocksThrottleReasons", nvml_rc::kNotSupported);
  EXPECT_FALSE(set.gpus[0]->telemetry().clock_event_reasons.has_value());
}

}  // namespace
}  // namespace zeus::testing
