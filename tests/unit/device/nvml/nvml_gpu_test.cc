// The NVML backend against the fake libnvidia-ml.so.1, loaded through the
// real dlopen path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "nvml_fixture.h"
#include "zeus/util/units.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace zeus::literals;

constexpr unsigned kFieldAverage = 185;
constexpr unsigned kFieldInstant = 186;
constexpr unsigned kScopeGpu = 0;
constexpr unsigned kScopeModule = 1;
constexpr unsigned kScopeMemory = 2;

using NvmlGpuTest = NvmlFakeTest;

TEST_F(NvmlGpuTest, OpensEveryGpuWithNameUuidAndVersions) {
  device::NvmlGpuSet set = open();
  ASSERT_EQ(set.gpus.size(), 2u);
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(set.gpus[0]->name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(set.gpus[0]->uuid(), "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000");
  EXPECT_EQ(set.gpus[1]->uuid(), "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000001");
  EXPECT_EQ(set.driver_version, "550.54.15");
  EXPECT_EQ(set.nvml_version, "12.550.54.15");
  EXPECT_TRUE(set.notes.empty());
  EXPECT_EQ(fake_.call_count("nvmlInit_v2"), 1u);
}

TEST_F(NvmlGpuTest, ZeroGpusIsAnEmptySetNotAnError) {
  fake_.set_device_count(0);
  device::NvmlGpuSet set = open();
  EXPECT_TRUE(set.gpus.empty());
}

TEST_F(NvmlGpuTest, MapsArchitecturesAndCachesThem) {
  fake_.set_architecture(0, nvml_arch::kAmpere);
  fake_.set_architecture(1, 11);  // a number newer than this code knows
  device::NvmlGpuSet set = open();
  EXPECT_EQ(set.gpus[0]->architecture(), device::GpuArchitecture::kAmpere);
  EXPECT_EQ(set.gpus[0]->architecture(), device::GpuArchitecture::kAmpere);
  EXPECT_EQ(set.gpus[1]->architecture(), device::GpuArchitecture::kUnknown);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetArchitecture"), 2u);
}

TEST_F(NvmlGpuTest, EnergyCounterReadsJoules) {
  fake_.set_energy_mj(0, 5000);
  device::NvmlGpuSet set = open();
  ASSERT_TRUE(set.gpus[0]->supports_energy_counter());
  EXPECT_DOUBLE_EQ(set.gpus[0]->total_energy().value(), 5.0);
  fake_.advance_energy_mj(0, 2500);
  EXPECT_DOUBLE_EQ(set.gpus[0]->total_energy().value(), 7.5);
  EXPECT_DOUBLE_EQ(set.gpus[1]->total_energy().value(), 2000.0);  // default 2e6 mJ
}

TEST_F(NvmlGpuTest, PreVoltaGpuHasNoEnergyCounter) {
  fake_.set_architecture(0, nvml_arch::kPascal);
  device::NvmlGpuSet set = open();
  EXPECT_FALSE(set.gpus[0]->supports_energy_counter());
  const Error e = error_of([&] { set.gpus[0]->total_energy(); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("pascal"));
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTotalEnergyConsumption"), 0u);
  // Power still works on old GPUs.
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 120.0);
}

TEST_F(NvmlGpuTest, VoltaAndUnknownArchitecturesHaveTheCounter) {
  fake_.set_architecture(0, nvml_arch::kVolta);
  fake_.set_architecture(1, nvml_arch::kUnknown);
  device::NvmlGpuSet set = open();
  EXPECT_TRUE(set.gpus[0]->supports_energy_counter());
  EXPECT_TRUE(set.gpus[1]->supports_energy_counter());
  EXPECT_EQ(set.gpus[1]->architecture(), device::GpuArchitecture::kUnknown);
}

TEST_F(NvmlGpuTest, PowerDomainsReadTheirOwnFields) {
  fake_.set_power_mw(1, 150000, 140500, 30250);
  device::NvmlGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[1]->power(device::PowerDomain::kDeviceInstant).value(), 150.0);
  EXPECT_DOUBLE_EQ(set.gpus[1]->power(device::PowerDomain::kDeviceAverage).value(), 140.5);
  EXPECT_DOUBLE_EQ(set.gpus[1]->power(device::PowerDomain::kMemoryAverage).value(), 30.25);
}

TEST_F(NvmlGpuTest, FallsBackToModuleScopeOnGraceHopperAndRemembersIt) {
  fake_.set_module_scope_only(0, 450000, 430000);
  device::NvmlGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 450.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetFieldValues"), 2u);  // GPU scope, then module
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 450.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetFieldValues"), 3u);  // module scope directly
  // Each field resolves its scope on its own.
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceAverage).value(), 430.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetFieldValues"), 5u);
}

TEST_F(NvmlGpuTest, OnlyTheFieldThatFailsFallsBack) {
  fake_.set_field(0, kFieldAverage, kScopeGpu, nvml_rc::kNotSupported, 0);
  fake_.set_field(0, kFieldAverage, kScopeModule, nvml_rc::kSuccess, 500000);
  device::NvmlGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 120.0);
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceAverage).value(), 500.0);
}

TEST_F(NvmlGpuTest, PowerFailsWithNvmlErrorWhenNoScopeWorks) {
  fake_.set_field(0, kFieldInstant, kScopeGpu, nvml_rc::kNotSupported, 0);
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->power(device::PowerDomain::kDeviceInstant); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceGetFieldValues"));
  EXPECT_THAT(e.what(), HasSubstr("Not Supported"));
  EXPECT_THAT(e.what(), HasSubstr("field 186"));
}

TEST_F(NvmlGpuTest, ResolvedGpuScopeDoesNotSwitchToModuleLater) {
  device::NvmlGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 120.0);
  fake_.set_field(0, kFieldInstant, kScopeGpu, nvml_rc::kTimeout, 0);
  fake_.set_field(0, kFieldInstant, kScopeModule, nvml_rc::kSuccess, 999000);
  EXPECT_EQ(error_of([&] { set.gpus[0]->power(device::PowerDomain::kDeviceInstant); }).code(),
            ErrorCode::kTimeout);
}

TEST_F(NvmlGpuTest, MemoryPowerHasNoModuleFallback) {
  fake_.set_field(0, kFieldAverage, kScopeMemory, nvml_rc::kNotSupported, 0);
  fake_.set_field(0, kFieldAverage, kScopeModule, nvml_rc::kSuccess, 1);
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->power(device::PowerDomain::kMemoryAverage); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("memory"));
}

TEST_F(NvmlGpuTest, PowerLimitGetters) {
  fake_.set_power_limits(1, 100000, 400000, 350000, 300000);
  device::NvmlGpuSet set = open();
  const device::PowerLimitConstraints range = set.gpus[1]->power_limit_constraints();
  EXPECT_EQ(range.min, 100000_mW);
  EXPECT_EQ(range.max, 400000_mW);
  EXPECT_EQ(set.gpus[1]->power_limit(), 300000_mW);
  EXPECT_EQ(set.gpus[1]->default_power_limit(), 350000_mW);
}

TEST_F(NvmlGpuTest, SetPowerLimitChangesItAndResetGoesToDefault) {
  device::NvmlGpuSet set = open();
  set.gpus[0]->set_power_limit(300000_mW);
  EXPECT_EQ(fake_.power_limit_mw(0), 300000u);
  EXPECT_EQ(fake_.power_limit_mw(1), 700000u);
  set.gpus[0]->reset_power_limit();
  EXPECT_EQ(fake_.power_limit_mw(0), 700000u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetPowerManagementLimit"), 2u);
}

TEST_F(NvmlGpuTest, SetPowerLimitIsSkippedWhenUnchanged) {
  device::NvmlGpuSet set = open();
  set.gpus[0]->set_power_limit(700000_mW);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetPowerManagementLimit"), 0u);
  // Unchanged needs no privileges either.
  fake_.set_permission_denied(true);
  EXPECT_NO_THROW(set.gpus[0]->set_power_limit(700000_mW));
}

TEST_F(NvmlGpuTest, SetPowerLimitOutsideRangeIsInvalidArgument) {
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->set_power_limit(100000_mW); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[200, 700] W"));
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetPowerManagementLimit"), 0u);
}

TEST_F(NvmlGpuTest, SetPowerLimitWithoutPrivilegesSaysWhatToDo) {
  fake_.set_permission_denied(true);
  device::NvmlGpuSet set = open();
  try {
    set.gpus[0]->set_power_limit(300000_mW);
    FAIL() << "expected NO_PERMISSION";
  } catch (const device::NvmlError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
    EXPECT_EQ(e.nvml_return(), nvml_rc::kNoPermission);
    EXPECT_EQ(e.function(), "nvmlDeviceSetPowerManagementLimit");
    EXPECT_THAT(e.what(), HasSubstr("CAP_SYS_ADMIN"));
    EXPECT_THAT(e.what(), HasSubstr("zeusd"));
    EXPECT_THAT(e.what(), HasSubstr("Insufficient Permissions"));
    EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceSetPowerManagementLimit"));
  }
  EXPECT_EQ(fake_.power_limit_mw(0), 700000u);
}

TEST_F(NvmlGpuTest, PersistenceModeIsSetOnlyWhenItChanges) {
  device::NvmlGpuSet set = open();
  EXPECT_FALSE(set.gpus[0]->persistence_mode());
  set.gpus[0]->set_persistence_mode(false);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetPersistenceMode"), 0u);
  set.gpus[0]->set_persistence_mode(true);
  EXPECT_TRUE(fake_.persistence(0));
  EXPECT_TRUE(set.gpus[0]->persistence_mode());
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetPersistenceMode"), 1u);
  fake_.set_permission_denied(true);
  EXPECT_EQ(error_of([&] { set.gpus[0]->set_persistence_mode(false); }).code(),
            ErrorCode::kNoPermission);
}

TEST_F(NvmlGpuTest, SupportedClocksGrowTheBufferWhenNvmlAsks) {
  device::NvmlGpuSet set = open();
  const auto memory = set.gpus[0]->supported_memory_clocks();
  EXPECT_EQ(memory, (std::vector<Megahertz>{2619_MHz, 1593_MHz}));
  const auto graphics = set.gpus[0]->supported_graphics_clocks(2619_MHz);
  ASSERT_EQ(graphics.size(), 328u);
  EXPECT_EQ(graphics.front(), 1980_MHz);
  EXPECT_EQ(graphics.back(), 345_MHz);
  // The first guess was too small: NVML said INSUFFICIENT_SIZE once.
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetSupportedGraphicsClocks"), 2u);
  EXPECT_EQ(set.gpus[0]->supported_graphics_clocks(1593_MHz),
            (std::vector<Megahertz>{1500_MHz, 1200_MHz, 900_MHz}));
}

TEST_F(NvmlGpuTest, ManyMemoryClocksAreAllReturned) {
  std::vector<unsigned> none;
  fake_.clear_supported_clocks(0);
  for (unsigned m = 0; m < 300; ++m) fake_.add_supported_clocks(0, 5000 - m, none.data(), 0);
  device::NvmlGpuSet set = open();
  const auto memory = set.gpus[0]->supported_memory_clocks();
  ASSERT_EQ(memory.size(), 300u);
  EXPECT_EQ(memory.back(), 4701_MHz);
}

TEST_F(NvmlGpuTest, GraphicsClocksForUnknownMemoryClockIsInvalidArgument) {
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->supported_graphics_clocks(1234_MHz); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("1234 MHz"));
}

TEST_F(NvmlGpuTest, LockedClocksAreSetAndReset) {
  device::NvmlGpuSet set = open();
  unsigned lo = 0;
  unsigned hi = 0;
  set.gpus[1]->set_gpu_locked_clocks(900_MHz, 1500_MHz);
  ASSERT_TRUE(fake_.locked_clocks(1, false, lo, hi));
  EXPECT_EQ(lo, 900u);
  EXPECT_EQ(hi, 1500u);
  set.gpus[1]->set_memory_locked_clocks(1593_MHz, 2619_MHz);
  ASSERT_TRUE(fake_.locked_clocks(1, true, lo, hi));
  EXPECT_EQ(hi, 2619u);
  set.gpus[1]->reset_gpu_locked_clocks();
  set.gpus[1]->reset_memory_locked_clocks();
  EXPECT_FALSE(fake_.locked_clocks(1, false, lo, hi));
  EXPECT_FALSE(fake_.locked_clocks(1, true, lo, hi));
}

TEST_F(NvmlGpuTest, LockedClocksRejectBadRangesBeforeCallingNvml) {
  device::NvmlGpuSet set = open();
  EXPECT_EQ(error_of([&] { set.gpus[0]->set_gpu_locked_clocks(1500_MHz, 900_MHz); }).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { set.gpus[0]->set_memory_locked_clocks(-1_MHz, 900_MHz); }).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetGpuLockedClocks"), 0u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetMemoryLockedClocks"), 0u);
}

TEST_F(NvmlGpuTest, LockedClocksOnPascalAreNotSupported) {
  fake_.set_architecture(0, nvml_arch::kPascal);
  device::NvmlGpuSet set = open();
  EXPECT_EQ(error_of([&] { set.gpus[0]->set_gpu_locked_clocks(900_MHz, 1500_MHz); }).code(),
            ErrorCode::kNotSupported);
}

TEST_F(NvmlGpuTest, TemperatureUsesTheVersionedCall) {
  fake_.set_temperature(0, 67);
  device::NvmlGpuSet set = open();
  EXPECT_DOUBLE_EQ(set.gpus[0]->temperature().value(), 67.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTemperatureV"), 1u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTemperature"), 0u);
}

TEST_F(NvmlGpuTest, PciBusIdIsNvmlsOwnString) {
  device::NvmlGpuSet set = open();
  EXPECT_EQ(set.gpus[0]->pci_bus_id(), "00000000:18:00.0");
  EXPECT_EQ(set.gpus[1]->pci_bus_id(), "00000000:38:00.0");
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetPciInfo_v3"), 2u);
  fake_.fail_next("nvmlDeviceGetPciInfo_v3", nvml_rc::kNotSupported);
  const Error e = error_of([&] { set.gpus[1]->pci_bus_id(); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("PCI address"));
}

// Issue 22: a GPU in MIG mode is measured whole (NVML has no per-instance
// counter), and the inventory says so instead of failing or attributing it.
TEST_F(NvmlGpuTest, MigModeIsNotedAsWholeGpuMeasurement) {
  EXPECT_TRUE(open().notes.empty());  // not MIG-capable: NOT_SUPPORTED, no note
  fake_.set_mig_mode(0, 0);
  EXPECT_TRUE(open().notes.empty());
  fake_.set_mig_mode(1, 1);
  device::NvmlGpuSet set = open();
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_THAT(set.notes[0], HasSubstr("GPU 1 (NVML 1"));
  EXPECT_THAT(set.notes[0], HasSubstr("MIG enabled"));
  EXPECT_THAT(set.notes[0], HasSubstr("whole physical GPU"));
  EXPECT_GT(set.gpus[1]->total_energy().value(), 0.0);  // measured all the same
}

TEST_F(NvmlGpuTest, GpuLostMidRunIsGpuLostAndOtherGpusKeepWorking) {
  device::NvmlGpuSet set = open();
  EXPECT_GT(set.gpus[0]->total_energy().value(), 0.0);
  fake_.set_lost(0, true);
  const Error e = error_of([&] { set.gpus[0]->total_energy(); });
  EXPECT_EQ(e.code(), ErrorCode::kGpuLost);
  EXPECT_THAT(e.what(), HasSubstr("fell off the bus"));
  EXPECT_THAT(e.what(), HasSubstr("GPU is lost"));
  const unsigned before = fake_.call_count("nvmlDeviceGetFieldValues");
  EXPECT_EQ(error_of([&] { set.gpus[0]->power(device::PowerDomain::kDeviceAverage); }).code(),
            ErrorCode::kGpuLost);
  // No module-scope retry for a lost GPU.
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetFieldValues"), before + 1);
  EXPECT_NO_THROW(set.gpus[1]->total_energy());
}

TEST_F(NvmlGpuTest, OpeningALostGpuFails) {
  fake_.set_lost(1, true);
  EXPECT_EQ(error_of([&] { open(); }).code(), ErrorCode::kGpuLost);
}

struct Mapping {
  int nvml_return;
  ErrorCode code;
};

TEST_F(NvmlGpuTest, EveryNvmlReturnCodeMapsToATypedError) {
  const Mapping table[] = {
      {1, ErrorCode::kFailedPrecondition},
      {2, ErrorCode::kInvalidArgument},
      {3, ErrorCode::kNotSupported},
      {4, ErrorCode::kNoPermission},
      {5, ErrorCode::kFailedPrecondition},
      {6, ErrorCode::kNotFound},
      {7, ErrorCode::kInternal},
      {8, ErrorCode::kFailedPrecondition},
      {9, ErrorCode::kDriverNotLoaded},
      {10, ErrorCode::kTimeout},
      {11, ErrorCode::kIo},
      {12, ErrorCode::kDriverNotLoaded},
      {13, ErrorCode::kNotSupported},
      {14, ErrorCode::kFailedPrecondition},
      {15, ErrorCode::kGpuLost},
      {16, ErrorCode::kGpuLost},
      {17, ErrorCode::kNoPermission},
      {18, ErrorCode::kDriverNotLoaded},
      {19, ErrorCode::kFailedPrecondition},
      {20, ErrorCode::kFailedPrecondition},
      {21, ErrorCode::kNotFound},
      {22, ErrorCode::kNotSupported},
      {23, ErrorCode::kFailedPrecondition},
      {24, ErrorCode::kInvalidArgument},
      {25, ErrorCode::kNotSupported},
      {26, ErrorCode::kNotSupported},
      {27, ErrorCode::kFailedPrecondition},
      {28, ErrorCode::kNotFound},
      {29, ErrorCode::kFailedPrecondition},
      {30, ErrorCode::kNotSupported},
      {999, ErrorCode::kUnknown},
      {12345, ErrorCode::kUnknown},
  };
  device::NvmlGpuSet set = open();
  for (const Mapping& m : table) {
    EXPECT_EQ(device::nvml_error_code(m.nvml_return), m.code) << m.nvml_return;
    fake_.fail_next("nvmlDeviceGetTotalEnergyConsumption", m.nvml_return);
    try {
      set.gpus[0]->total_energy();
      ADD_FAILURE() << "no error for " << m.nvml_return;
    } catch (const device::NvmlError& e) {
      EXPECT_EQ(e.code(), m.code) << m.nvml_return;
      EXPECT_EQ(e.nvml_return(), m.nvml_return);
      EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceGetTotalEnergyConsumption"));
      EXPECT_THAT(e.what(), HasSubstr("NVML error " + std::to_string(m.nvml_return)));
      if (m.code == ErrorCode::kDriverNotLoaded) {
        EXPECT_THAT(e.what(), StartsWith("no NVIDIA driver found"));
      }
    }
  }
  // The scripted failures were one-shot.
  EXPECT_NO_THROW(set.gpus[0]->total_energy());
}

TEST_F(NvmlGpuTest, ErrorMessagesCarryNvmlsTextAndAdvice) {
  device::NvmlGpuSet set = open();
  fake_.fail_next("nvmlDeviceGetPowerManagementLimit", nvml_rc::kResetRequired);
  const Error e = error_of([&] { set.gpus[1]->power_limit(); });
  EXPECT_THAT(e.what(), HasSubstr("GPU 1"));
  EXPECT_THAT(e.what(), HasSubstr("GPU requires restart"));
  EXPECT_THAT(e.what(), HasSubstr("reboot"));
}

TEST_F(NvmlGpuTest, ConcurrentReadersResolveTheScopeOnce) {
  fake_.set_module_scope_only(0, 450000, 430000);
  device::NvmlGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        if (gpu.power(device::PowerDomain::kDeviceInstant).value() != 450.0) wrong++;
        if (gpu.total_energy().value() != 1000.0) wrong++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetArchitecture") >= 1u, true);
}

// Drivers before R535 lack the power fields; on pre-Ampere GPUs
// nvmlDeviceGetPowerUsage is instantaneous and stands in for field 186.
TEST_F(NvmlGpuTest, OldDriverInstantPowerFallsBackToPowerUsageBeforeAmpere) {
  fake_.set_architecture(0, nvml_arch::kPascal);
  fake_.set_power_mw(0, 95000, 90000, 0);
  fake_.set_no_power_fields(0);
  auto set = open();
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 95.0);
  EXPECT_DOUBLE_EQ(set.gpus[0]->power(device::PowerDomain::kDeviceInstant).value(), 95.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetPowerUsage"), 2u);
  // The average domain has no such stand-in.
  EXPECT_THROW(set.gpus[0]->power(device::PowerDomain::kDeviceAverage), Error);
}

TEST_F(NvmlGpuTest, OldDriverOnAmpereDoesNotMislabelTheOneSecondAverageAsInstant) {
  fake_.set_architecture(0, nvml_arch::kAmpere);
  fake_.set_no_power_fields(0);
  auto set = open();
  try {
    set.gpus[0]->power(device::PowerDomain::kDeviceInstant);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  }
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetPowerUsage"), 0u);
}

}  // namespace
}  // namespace zeus::testing
