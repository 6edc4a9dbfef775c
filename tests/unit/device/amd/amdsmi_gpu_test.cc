// The AMD SMI backend over the fake libamd_smi.so of each ABI major (24, 25,
// 26), loaded through the real AMDSMI_LIB_DIR search and dlopen.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "amdsmi_fixture.h"
#include "device/amd/amdsmi_api.h"
#include "device/amd/amdsmi_gpu.h"
#include "zeus/util/error.h"

namespace zeus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <class F>
ErrorCode code_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no zeus::Error thrown";
  return ErrorCode::kInternal;
}

template <class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no zeus::Error thrown";
  return {};
}

INSTANTIATE_TEST_SUITE_P(Abi, AmdSmiTest, ::testing::Values(24, 25, 26),
                         [](const auto& param_info) {
                           return "abi" + std::to_string(param_info.param);
                         });

TEST_P(AmdSmiTest, OpensEveryGpuAndReportsTheLoadedAbi) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_EQ(set.gpus.size(), 2U);
  EXPECT_EQ(set.abi, abi());
  EXPECT_EQ(set.library_path, fake().path());
  EXPECT_THAT(set.hip_indices, ElementsAre(0U, 1U));
  EXPECT_EQ(set.gpus[0]->name(), "AMD Instinct MI300X");
  EXPECT_EQ(fake().init_ref_count(), 1);
  if (abi() >= 25) {
    EXPECT_EQ(set.gpus[1]->uuid(), "GPU-abc0000000000001");  // HIP's UUID from enumeration info
  } else {
    EXPECT_THAT(set.gpus[1]->uuid(), HasSubstr("-0000-1000-8000-"));
  }
  set.gpus.clear();
  EXPECT_EQ(fake().init_ref_count(), 0) << "amdsmi_shut_down after the last GPU";
}

TEST_P(AmdSmiTest, ReadsPowerThroughTheLayoutOfItsAbi) {
  fake().set_power(0, 412, kAmdsmiNa);
  fake().set_power(1, kAmdsmiNa, 233);
  amdsmi_internal::AmdSmiGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 412.0);
  EXPECT_DOUBLE_EQ(set.gpus[1]->power(device::PowerDomain::kDeviceAverage).value(), 233.0);
  // "N/A" is an explicit "unsupported", never a number.
  EXPECT_EQ(code_of([&] { set.gpus[0]->power(device::PowerDomain::kDeviceAverage); }),
            ErrorCode::kNotSupported);
  EXPECT_THAT(message_of([&] { set.gpus[1]->power(device::PowerDomain::kDeviceInstant); }),
              HasSubstr("N/A"));
  EXPECT_EQ(code_of([&] { set.gpus[0]->power(device::PowerDomain::kMemoryAverage); }),
            ErrorCode::kNotSupported);
}

TEST_P(AmdSmiTest, EnergyIsCountsTimesResolution) {
  fake().set_energy(0, 2000000, 15.3F);
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_TRUE(set.gpus[0]->supports_energy_counter());
  const Joules before = set.gpus[0]->total_energy();
  EXPECT_NEAR(before.value(), 2000000 * 15.3e-6, 1e-6);
  fake().advance_energy(0, 1000);  // 1000 counts x 15.3 uJ
  EXPECT_NEAR((set.gpus[0]->total_energy() - before).value(), 0.0153, 1e-9);
}

TEST_P(AmdSmiTest, MissingEnergyCounterIsUnsupported) {
  fake().set_energy_status(1, amdsmi_status::kNotSupported);  // e.g. a VM guest
  amdsmi_internal::AmdSmiGpuSet set = open();
  EXPECT_FALSE(set.gpus[1]->supports_energy_counter());
  EXPECT_EQ(code_of([&] { set.gpus[1]->total_energy(); }), ErrorCode::kNotSupported);
  EXPECT_TRUE(set.gpus[0]->supports_energy_counter());
}

TEST_P(AmdSmiTest, PowerCapRangeSetAndReset) {
  fake().set_power_caps_uw(0, 150000000, 550500000, 500000000, 500000000);
  amdsmi_internal::AmdSmiGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  const device::PowerLimitConstraints range = gpu.power_limit_constraints();
  EXPECT_EQ(range.min.value(), 150000);
  EXPECT_EQ(range.max.value(), 550500);
  EXPECT_EQ(gpu.power_limit().value(), 500000);
  EXPECT_EQ(gpu.default_power_limit().value(), 500000);

  gpu.set_power_limit(Milliwatts(300000));
  EXPECT_EQ(fake().power_cap_uw(0), 300000000ULL) << "AMD SMI takes microwatts";
  EXPECT_EQ(gpu.power_limit().value(), 300000);

  EXPECT_EQ(code_of([&] { gpu.set_power_limit(Milliwatts(600000)); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(fake().power_cap_uw(0), 300000000ULL) << "a refused cap changes nothing";

  const unsigned sets = fake().call_count("amdsmi_set_power_cap");
  gpu.set_power_limit(Milliwatts(300000));
  EXPECT_EQ(fake().call_count("amdsmi_set_power_cap"), sets) << "no call when nothing changes";

  gpu.reset_power_limit();
  EXPECT_EQ(fake().power_cap_uw(0), 500000000ULL);

  fake().set_permission_denied(true);
  EXPECT_EQ(code_of([&] { gpu.set_power_limit(Milliwatts(200000)); }), ErrorCode::kNoPermission);
  EXPECT_THAT(message_of([&] { gpu.set_power_limit(Milliwatts(200000)); }), HasSubstr("root"));
}

TEST_P(AmdSmiTest, ClockLevelsInMegahertzWhateverTheAbiUnit) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  std::vector<std::int64_t> memory;
  for (Megahertz m : gpu.supported_memory_clocks()) memory.push_back(m.value());
  EXPECT_THAT(memory, ElementsAre(1300, 900));  // highest first, as NVML lists them
  std::vector<std::int64_t> graphics;
  for (Megahertz m : gpu.supported_graphics_clocks(Megahertz(1300))) graphics.push_back(m.value());
  EXPECT_THAT(graphics, ElementsAre(2100, 1300, 500));
  EXPECT_EQ(code_of([&] { gpu.supported_graphics_clocks(Megahertz(1000)); }),
            ErrorCode::kInvalidArgument);
}

TEST_P(AmdSmiTest, LockingAboveTheCurrentRangeSetsTheMaximumFirst) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  gpu.set_gpu_locked_clocks(Megahertz(500), Megahertz(1300));
  auto c = fake().clock_limits(0);
  EXPECT_EQ(c.gfx_min, 500U);
  EXPECT_EQ(c.gfx_max, 1300U);
  // The fake, like the driver, refuses a minimum above the current maximum.
  gpu.set_gpu_locked_clocks(Megahertz(2100), Megahertz(2100));
  c = fake().clock_limits(0);
  EXPECT_EQ(c.gfx_min, 2100U);
  EXPECT_EQ(c.gfx_max, 2100U);
  EXPECT_EQ(c.perf_level, 3);
  EXPECT_EQ(code_of([&] { gpu.set_gpu_locked_clocks(Megahertz(2100), Megahertz(500)); }),
            ErrorCode::kInvalidArgument);
}

TEST_P(AmdSmiTest, ResettingOneDomainKeepsTheOthersLock) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  gpu.set_gpu_locked_clocks(Megahertz(1300), Megahertz(1300));
  gpu.set_memory_locked_clocks(Megahertz(900), Megahertz(900));
  gpu.reset_gpu_locked_clocks();
  auto c = fake().clock_limits(0);
  EXPECT_EQ(c.gfx_min, 500U);
  EXPECT_EQ(c.gfx_max, 2100U);
  EXPECT_EQ(c.mem_max, 900U) << "the memory lock stays";
  EXPECT_EQ(c.perf_level, 3);
  gpu.reset_memory_locked_clocks();
  c = fake().clock_limits(0);
  EXPECT_EQ(c.perf_level, 0) << "nothing locked any more: clocks go back to the driver (auto)";
  EXPECT_EQ(c.mem_max, 1300U);
}

TEST_P(AmdSmiTest, TemperatureIsTheHotspotInDegrees) {
  fake().set_temperature_millic(1, 71250);
  amdsmi_internal::AmdSmiGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[1]->temperature().value(), 71.25);
}

// Telemetry: the current clocks and the hotspot temperature; what AMD SMI is
// not asked for stays empty rather than zero.
TEST_P(AmdSmiTest, TelemetryHasTheCurrentClocksAndTemperatureOnly) {
  fake().set_temperature_millic(0, 64500);
  amdsmi_internal::AmdSmiGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  gpu.set_gpu_locked_clocks(Megahertz(500), Megahertz(1300));
  const device::GpuTelemetry t = gpu.telemetry();
  ASSERT_TRUE(t.sm_clock && t.memory_clock && t.temperature);
  EXPECT_EQ(t.sm_clock->value(), 1300);  // the fake runs at its maximum
  EXPECT_EQ(t.memory_clock->value(), fake().clock_limits(0).mem_max);
  EXPECT_DOUBLE_EQ(t.temperature->value(), 64.5);
  EXPECT_FALSE(t.gpu_utilization || t.memory_utilization || t.clock_event_reasons ||
               t.memory_used || t.memory_free || t.memory_total);
  fake().fail_always("amdsmi_get_clock_info", amdsmi_status::kNotSupported);
  fake().fail_always("amdsmi_get_temp_metric", amdsmi_status::kNotSupported);
  const device::GpuTelemetry none = gpu.telemetry();
  EXPECT_FALSE(none.sm_clock || none.memory_clock || none.temperature);
  fake().fail_always("amdsmi_get_clock_info", amdsmi_status::kNoPerm);
  EXPECT_EQ(code_of([&] { gpu.telemetry(); }), ErrorCode::kNoPermission);
  fake().fail_always("amdsmi_get_clock_info", 0);
  fake().fail_always("amdsmi_get_temp_metric", 0);
}

TEST_P(AmdSmiTest, PciBusIdIsTheBdfInSysfsForm) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  // The fake's BDF ids carry a bit in the reserved range (16), not part of the address.
  EXPECT_EQ(set.gpus[0]->pci_bus_id(), "0000:c1:00.0");
  EXPECT_EQ(set.gpus[1]->pci_bus_id(), "0000:c2:00.0");
}

TEST(AmdSmiBdf, FieldsAreUnpackedAndThePartitionIdIsLeftOut) {
  const std::uint64_t bdf =
      (0x12ULL << 32U) | (0x3ULL << 28U) | (0xc1ULL << 8U) | (0x1fULL << 3U) | 0x5ULL;
  EXPECT_EQ(amdsmi_internal::format_bdf_id(bdf), "0012:c1:1f.5");
  EXPECT_EQ(amdsmi_internal::format_bdf_id(0xffffffff0000ff07ULL), "ffffffff:ff:00.7");
  EXPECT_EQ(amdsmi_internal::format_bdf_id(0), "0000:00:00.0");
}

TEST_P(AmdSmiTest, PersistenceModeIsUnsupported) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  EXPECT_EQ(code_of([&] { set.gpus[0]->persistence_mode(); }), ErrorCode::kNotSupported);
  EXPECT_EQ(code_of([&] { set.gpus[0]->set_persistence_mode(true); }), ErrorCode::kNotSupported);
}

TEST_P(AmdSmiTest, GpusFollowHipOrderNotSocketOrder) {
  fake().set_name(0, "first socket");
  fake().set_name(1, "second socket");
  fake().set_hip_index(0, 1);
  fake().set_hip_index(1, 0);
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_EQ(set.gpus.size(), 2U);
  EXPECT_EQ(set.gpus[0]->name(), "second socket");
  EXPECT_EQ(set.gpus[1]->name(), "first socket");
}

TEST_P(AmdSmiTest, VisibilityVariablesSelectAndRenumber) {
  fake().set_device_count(4);
  for (unsigned i = 0; i < 4; ++i) fake().set_name(i, "gpu" + std::to_string(i));
  amdsmi_internal::AmdSmiOptions o = options();
  o.hip_visible_devices = "2,0";
  amdsmi_internal::AmdSmiGpuSet set = open(o);
  ASSERT_EQ(set.gpus.size(), 2U);
  EXPECT_EQ(set.gpus[0]->name(), "gpu2");
  EXPECT_THAT(set.hip_indices, ElementsAre(2U, 0U));
  set.gpus.clear();

  // ROCR_VISIBLE_DEVICES first, then HIP_VISIBLE_DEVICES indexes into what is left.
  o.rocr_visible_devices = "3,1";
  o.hip_visible_devices = "1";
  set = open(o);
  ASSERT_EQ(set.gpus.size(), 1U);
  EXPECT_EQ(set.gpus[0]->name(), "gpu1");
  set.gpus.clear();

  o.rocr_visible_devices = std::nullopt;
  o.hip_visible_devices = "4";
  EXPECT_THAT(message_of([&] { open(o); }), HasSubstr("only 4 AMD GPU(s)"));
  o.hip_visible_devices = "0,0";
  EXPECT_EQ(code_of([&] { open(o); }), ErrorCode::kInvalidArgument);
  o.hip_visible_devices = "zero";
  EXPECT_EQ(code_of([&] { open(o); }), ErrorCode::kInvalidArgument);

  o.hip_visible_devices = "";
  set = open(o);
  EXPECT_TRUE(set.gpus.empty()) << "an empty value hides every GPU, as in ROCm";
  ASSERT_FALSE(set.notes.empty());
  EXPECT_THAT(set.notes[0], HasSubstr("HIP_VISIBLE_DEVICES is set but empty"));
}

TEST_P(AmdSmiTest, CudaVisibleDevicesStandsInForHip) {
  fake().set_device_count(3);
  for (unsigned i = 0; i < 3; ++i) fake().set_name(i, "gpu" + std::to_string(i));
  unsetenv("HIP_VISIBLE_DEVICES");
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  amdsmi_internal::AmdSmiOptions o = options();
  o.hip_visible_devices = std::nullopt;
  o.rocr_visible_devices = std::nullopt;
  unsetenv("ROCR_VISIBLE_DEVICES");
  amdsmi_internal::AmdSmiGpuSet set = amdsmi_internal::open_amdsmi_gpus(o);
  unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(set.gpus.size(), 1U);
  EXPECT_EQ(set.gpus[0]->name(), "gpu1");
}

TEST_P(AmdSmiTest, Mi250SecondDieIsNotMeasured) {
  fake().set_device_count(4);
  for (unsigned i = 0; i < 4; ++i) fake().set_name(i, "AMD Instinct MI250X");
  fake().set_power(1, 0, 0);
  fake().set_power(3, kAmdsmiNa, 0);
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_EQ(set.gpus.size(), 4U);
  EXPECT_EQ(code_of([&] { set.gpus[1]->power(device::PowerDomain::kDeviceInstant); }),
            ErrorCode::kNotSupported);
  EXPECT_THAT(message_of([&] { set.gpus[3]->total_energy(); }), HasSubstr("second die"));
  EXPECT_FALSE(set.gpus[1]->supports_energy_counter());
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 300.0);
  ASSERT_EQ(set.notes.size(), 4U);
  EXPECT_THAT(set.notes[0], HasSubstr("include the other die"));
  EXPECT_THAT(set.notes[1], HasSubstr("second die"));
}

TEST_P(AmdSmiTest, DriverErrorsMapToCodesWithAdvice) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  fake().fail_next("amdsmi_get_temp_metric", amdsmi_status::kNotSupported);
  EXPECT_EQ(code_of([&] { set.gpus[0]->temperature(); }), ErrorCode::kNotSupported);
  fake().fail_next("amdsmi_get_power_info", amdsmi_status::kNoPerm);
  const std::string message =
      message_of([&] { set.gpus[0]->power(device::PowerDomain::kDeviceInstant); });
  EXPECT_THAT(message, HasSubstr("amdsmi_get_power_info"));
  EXPECT_THAT(message, HasSubstr("Permission Denied"));
  EXPECT_THAT(message, HasSubstr("GPU 0"));
  fake().fail_next("amdsmi_get_energy_count", 0xFFFFFFFFU);
  EXPECT_EQ(code_of([&] { set.gpus[0]->total_energy(); }), ErrorCode::kUnknown);
}

// Before ROCm 7.2 AMD SMI is not thread-safe: calls must not overlap.
TEST_P(AmdSmiTest, CallsAreSerializedBeforeRocm72) {
  if (abi() == 26) fake().set_lib_version(0, 26, 2, 0);  // ROCm 7.1.1
  amdsmi_internal::AmdSmiGpuSet set = open();
  EXPECT_TRUE(set.serialized);
  fake().set_call_delay_us(500);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        (void)set.gpus[static_cast<std::size_t>(t % 2)]->power(device::PowerDomain::kDeviceInstant);
        (void)set.gpus[static_cast<std::size_t>(t % 2)]->total_energy();
      }
    });
  }
  for (auto& th : threads) th.join();
  fake().set_call_delay_us(0);
  EXPECT_EQ(fake().max_in_flight(), 1);
}

TEST(AmdSmiConcurrency, Rocm72CallsRunConcurrently) {
  FakeAmdSmi fake(26);
  fake.reset();  // 26.3.0
  amdsmi_internal::AmdSmiOptions o;
  o.amdsmi_lib_dir = fake.dir();
  o.hip_visible_devices = std::nullopt;
  unsetenv("HIP_VISIBLE_DEVICES");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("ROCR_VISIBLE_DEVICES");
  amdsmi_internal::AmdSmiGpuSet set = amdsmi_internal::open_amdsmi_gpus(o);
  EXPECT_FALSE(set.serialized);
  fake.set_call_delay_us(2000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) (void)set.gpus[0]->power(device::PowerDomain::kDeviceInstant);
    });
  }
  for (auto& th : threads) th.join();
  fake.set_call_delay_us(0);
  EXPECT_GT(fake.max_in_flight(), 1) << "thread-safe AMD SMI is not slowed by a global lock";
}

}  // namespace
}  // namespace zeus::testing
