// Who runs on an NVIDIA GPU, against the fake NVML: per-process utilization
// samples (lastSeen cursor, NOT_FOUND, the size protocol), accounting
// statistics, the running compute processes (which entry point, which entry
// size) and the MIG layout; an old driver and a lost GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <chrono>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "device/nvml/nvml_processes.h"
#include "nvml_fixture.h"
#include "zeus/device/gpu_processes.h"

namespace zeus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr unsigned long long kNotAvailable = ~0ULL;
constexpr unsigned long long kGiB = 1ULL << 30U;

MATCHER_P4(Sample, pid, timestamp_us, sm, mem, "") {
  return arg.pid == pid && arg.timestamp_us == timestamp_us && arg.sm_percent == sm &&
         arg.memory_percent == mem;
}
MATCHER_P2(Process, pid, bytes, "") { return arg.pid == pid && arg.used_memory_bytes == bytes; }

std::vector<std::uint32_t> pids_of(const std::vector<device::GpuProcessSample>& samples) {
  std::vector<std::uint32_t> pids;
  for (const auto& s : samples) pids.push_back(s.pid);
  return pids;
}

using NvmlProcessesTest = NvmlFakeTest;

// ---- process_utilization ------------------------------------------------------

// Catches: `since` ignored (everything comes back), >= instead of > (the
// sample at `since` comes back), sm/memory swapped.
TEST_F(NvmlProcessesTest, UtilizationReturnsOnlySamplesNewerThanSince) {
  fake_.add_process_sample(0, 10, 1000, 70, 30);
  fake_.add_process_sample(0, 11, 2000, 20, 5);
  fake_.add_process_sample(0, 10, 3000, 80, 35);
  device::NvmlGpuSet set = open();
  EXPECT_THAT(set.gpus[0]->process_utilization(0),
              UnorderedElementsAre(Sample(10u, 1000u, 70u, 30u), Sample(11u, 2000u, 20u, 5u),
                                   Sample(10u, 3000u, 80u, 35u)));
  EXPECT_THAT(set.gpus[0]->process_utilization(2000), ElementsAre(Sample(10u, 3000u, 80u, 35u)));
  EXPECT_THAT(pids_of(set.gpus[0]->process_utilization(1999)), UnorderedElementsAre(11u, 10u));
  // The other GPU has its own buffer.
  EXPECT_THAT(set.gpus[1]->process_utilization(0), IsEmpty());
}

// Catches: NOT_FOUND thrown as kNotFound; `since` not passed to NVML (then the
// driver finds samples and the backend makes a second call to fetch them).
TEST_F(NvmlProcessesTest, NothingNewerIsAnEmptyListNotAnError) {
  device::NvmlGpuSet set = open();
  EXPECT_THAT(set.gpus[0]->process_utilization(0), IsEmpty());
  fake_.add_process_sample(0, 10, 5000, 50, 10);
  const unsigned before = fake_.call_count("nvmlDeviceGetProcessUtilization");
  EXPECT_THAT(set.gpus[0]->process_utilization(5000), IsEmpty());
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetProcessUtilization"), before + 1);
}

// Catches: a fixed buffer that ignores INSUFFICIENT_SIZE (only a first guess
// of samples comes back, or an error). The fake also keeps only the newest
// 128 samples, as the driver's buffer is bounded.
TEST_F(NvmlProcessesTest, UtilizationGrowsTheBufferPastAFirstGuess) {
  for (unsigned k = 0; k < 130; ++k) fake_.add_process_sample(0, 1000 + k, 100 + k, k % 100, 1);
  device::NvmlGpuSet set = open();
  const std::vector<device::GpuProcessSample> samples = set.gpus[0]->process_utilization(0);
  ASSERT_EQ(samples.size(), 128u);
  EXPECT_THAT(pids_of(samples), ::testing::Not(::testing::Contains(1000u)));
  EXPECT_THAT(pids_of(samples), ::testing::Contains(1129u));
}

// Catches: one size query and one fill, with no retry when the fill itself
// answers INSUFFICIENT_SIZE (samples that arrived between the two calls).
TEST_F(NvmlProcessesTest, UtilizationRetriesWhenTheFillAsksForMore) {
  for (unsigned k = 0; k < 40; ++k) fake_.add_process_sample(0, 1000 + k, 100 + k, 50, 1);
  device::NvmlGpuSet set = open();
  // The size query answers INSUFFICIENT_SIZE without a count: the first fill
  // gets a buffer that is too small and must grow.
  fake_.fail_next("nvmlDeviceGetProcessUtilization", nvml_rc::kInsufficientSize);
  EXPECT_EQ(set.gpus[0]->process_utilization(0).size(), 40u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetProcessUtilization"), 3u);
}

// Catches: an unbounded retry loop (this test would hang).
TEST_F(NvmlProcessesTest, ADriverThatKeepsAskingForMoreIsAnErrorNotAHang) {
  fake_.add_process_sample(0, 10, 100, 50, 1);
  device::NvmlGpuSet set = open();
  fake_.fail_always("nvmlDeviceGetProcessUtilization", nvml_rc::kInsufficientSize);
  const Error e = error_of([&] { set.gpus[0]->process_utilization(0); });
  EXPECT_EQ(e.code(), ErrorCode::kInternal);
  EXPECT_THAT(e.what(), HasSubstr("kept asking for a bigger buffer"));
  EXPECT_LE(fake_.call_count("nvmlDeviceGetProcessUtilization"), 10u);
}

// Catches: samples filtered by the processes running now (a short job that
// ended inside the interval would lose its energy).
TEST_F(NvmlProcessesTest, AProcessThatExitedStillHasItsSamples) {
  fake_.add_compute_process(0, 10, kGiB);
  fake_.add_process_sample(0, 10, 1000, 40, 10);
  fake_.add_process_sample(0, 20, 1100, 60, 20);  // pid 20 has exited
  device::NvmlGpuSet set = open();
  EXPECT_THAT(pids_of(set.gpus[0]->process_utilization(0)), UnorderedElementsAre(10u, 20u));
}

// Catches: NOT_SUPPORTED read as "no samples" (the ledger would then split
// by nothing instead of falling back).
TEST_F(NvmlProcessesTest, UtilizationUnderMigIsNotSupported) {
  fake_.add_process_sample(0, 10, 1000, 40, 10);
  fake_.set_mig_mode(0, 1);
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->process_utilization(0); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceGetProcessUtilization"));
}

// ---- accounting_stats ---------------------------------------------------------

// Catches: accounting off read as "no processes" (an empty list), and a
// message that does not say how to turn it on.
TEST_F(NvmlProcessesTest, AccountingOffIsNotSupportedWithTheHint) {
  fake_.add_accounting_stats(0, 100, 50, 10, kGiB, 0, 1000, true);
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->accounting_stats(); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("accounting mode is off"));
  EXPECT_THAT(e.what(), HasSubstr("nvidia-smi -am 1"));
  EXPECT_THAT(e.what(), HasSubstr("GPU 0"));
  // A GPU without accounting at all: NVML's own NOT_SUPPORTED.
  fake_.set_accounting_mode(1, -1);
  EXPECT_EQ(error_of([&] { set.gpus[1]->accounting_stats(); }).code(), ErrorCode::kNotSupported);
}

// Catches: a pid that vanished between the listing and its stats failing the
// whole read; fields mixed up (time vs start time, running flag);
// NVML_VALUE_NOT_AVAILABLE passed on as 4294967295 %.
TEST_F(NvmlProcessesTest, AccountingReadsEachRecordedProcessAndSkipsVanishedOnes) {
  fake_.set_accounting_mode(0, 1);
  // Started ten seconds ago (wall clock, µs), still running.
  const auto started_us =
      static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()) -
      10'000'000ULL;
  fake_.add_accounting_stats(0, 100, 62, 17, 2 * kGiB, 0, started_us, true);
  fake_.add_accounting_pid(0, 101);  // listed, but its stats are gone
  fake_.add_accounting_stats(0, 102, 0xFFFFFFFFU, 0xFFFFFFFFU, kGiB, 5000, 1'600'000'000'000'000ULL,
                             false);
  device::NvmlGpuSet set = open();
  const std::vector<device::GpuAccountingStat> stats = set.gpus[0]->accounting_stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].pid, 100u);
  EXPECT_EQ(stats[0].gpu_percent, 62u);
  EXPECT_EQ(stats[0].memory_percent, 17u);
  // NVML reports 0 while the process runs: the backend gives the time since
  // its start instead, which accounting weights need.
  EXPECT_GE(stats[0].time_ms, 10'000u);
  EXPECT_LT(stats[0].time_ms, 70'000u);
  EXPECT_EQ(stats[0].start_time_us, started_us);
  EXPECT_TRUE(stats[0].running);
  EXPECT_EQ(stats[1].pid, 102u);
  EXPECT_EQ(stats[1].gpu_percent, 0u);
  EXPECT_EQ(stats[1].memory_percent, 0u);
  EXPECT_EQ(stats[1].time_ms, 5000u);
  EXPECT_EQ(stats[1].start_time_us, 1'600'000'000'000'000ULL);
  EXPECT_FALSE(stats[1].running);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetAccountingStats"), 3u);
}

// Catches: a pid list read into a fixed buffer (here more pids than a guess).
TEST_F(NvmlProcessesTest, AccountingListsManyProcesses) {
  fake_.set_accounting_mode(0, 1);
  for (unsigned pid = 1; pid <= 300; ++pid)
    fake_.add_accounting_stats(0, pid, 1, 1, 0, 1, 1, false);
  device::NvmlGpuSet set = open();
  EXPECT_EQ(set.gpus[0]->accounting_stats().size(), 300u);
}

// ---- compute_processes --------------------------------------------------------

// Catches: _v2 called where _v3 exists; usedGpuMemory NOT_AVAILABLE passed on
// as 2^64-1 bytes; a size query of 0 processes (SUCCESS) mistaken for an error.
TEST_F(NvmlProcessesTest, ComputeProcessesListsWhoHoldsAContext) {
  device::NvmlGpuSet set = open();
  EXPECT_THAT(set.gpus[0]->compute_processes(), IsEmpty());
  fake_.add_compute_process(0, 10, 3 * kGiB);
  fake_.add_compute_process(0, 11, kNotAvailable);
  fake_.add_compute_process(1, 12, kGiB);
  EXPECT_THAT(set.gpus[0]->compute_processes(),
              ElementsAre(Process(10u, 3 * kGiB), Process(11u, 0u)));
  EXPECT_THAT(set.gpus[1]->compute_processes(), ElementsAre(Process(12u, kGiB)));
  EXPECT_GE(fake_.call_count("nvmlDeviceGetComputeRunningProcesses_v3"), 3u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetComputeRunningProcesses_v2"), 0u);
}

nvml_abi::nvmlReturn_t stub_v3(nvml_abi::nvmlDevice_t, unsigned*, nvml_abi::nvmlProcessInfo_v2_t*) {
  return 0;
}
nvml_abi::nvmlReturn_t stub_v2(nvml_abi::nvmlDevice_t, unsigned*, nvml_abi::nvmlProcessInfo_v2_t*) {
  return 0;
}

// Drivers the fakes do not play. Catches: no fallback to _v2 (R470-R495
// drivers have no _v3), and reading early R535 drivers' 32-byte _v3 entries
// as 24-byte ones (garbage, and a buffer overrun when the buffer is sized
// for 24).
TEST(NvmlComputeProcessesEntry, PicksTheEntryPointAndTheEntrySizeTheDriverWrites) {
  using nvml_internal::compute_processes_entry;
  nvml_internal::NvmlLibrary::Api api;
  EXPECT_EQ(compute_processes_entry(api).fn, nullptr);
  api.device_get_compute_running_processes_v2 = &stub_v2;
  EXPECT_EQ(compute_processes_entry(api).fn, &stub_v2);
  EXPECT_STREQ(compute_processes_entry(api).symbol, "nvmlDeviceGetComputeRunningProcesses_v2");
  EXPECT_EQ(compute_processes_entry(api).entry_size, 24u);
  api.device_get_compute_running_processes_v3 = &stub_v3;
  EXPECT_EQ(compute_processes_entry(api).fn, &stub_v3);
  EXPECT_STREQ(compute_processes_entry(api).symbol, "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(compute_processes_entry(api).entry_size, 24u);
  api.exports_conf_compute_mem_size_info = true;  // header 12.2, early R535
  EXPECT_EQ(compute_processes_entry(api).entry_size, 32u);
  api.exports_running_process_detail_list = true;  // later drivers: 24 again
  EXPECT_EQ(compute_processes_entry(api).entry_size, 24u);
}

// Catches: a decoder that ignores the entry size, or trusts a count larger
// than the buffer.
TEST(NvmlComputeProcessesEntry, DecodesEntriesOfEitherSize) {
  std::vector<nvml_abi::nvmlProcessInfoCc_t> wide(2);
  wide[0] = {10, 1000, 1, 0, 7};
  wide[1] = {11, kNotAvailable, 2, 0, 7};
  EXPECT_THAT(nvml_internal::decode_process_infos(std::as_bytes(std::span(wide)), 2, 32),
              ElementsAre(Process(10u, 1000u), Process(11u, 0u)));
  std::vector<nvml_abi::nvmlProcessInfo_v2_t> narrow(2);
  narrow[0] = {20, 2000, 0xFFFFFFFFU, 0xFFFFFFFFU};
  narrow[1] = {21, 3000, 0xFFFFFFFFU, 0xFFFFFFFFU};
  const auto bytes = std::as_bytes(std::span(narrow));
  EXPECT_THAT(nvml_internal::decode_process_infos(bytes, 2, 24),
              ElementsAre(Process(20u, 2000u), Process(21u, 3000u)));
  EXPECT_THAT(nvml_internal::decode_process_infos(bytes, 5, 24), ::testing::SizeIs(2));
}

// ---- mig_layout ---------------------------------------------------------------

// Catches: a GPU that cannot do MIG (NOT_SUPPORTED) thrown as kNotSupported.
TEST_F(NvmlProcessesTest, MigOffOrImpossibleIsDisabled) {
  fake_.set_mig_mode(0, 0);  // MIG-capable, off; GPU 1 cannot do MIG (the default)
  device::NvmlGpuSet set = open();
  for (const auto& gpu : set.gpus) {
    const device::GpuMigLayout layout = gpu->mig_layout();
    EXPECT_FALSE(layout.enabled);
    EXPECT_THAT(layout.instances, IsEmpty());
  }
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetMaxMigDeviceCount"), 0u);
}

class NvmlMigTest : public NvmlFakeTest {
 protected:
  // GPU 0 with MIG on: a 3g instance in slot 0, slot 1 empty, a 1g in slot 2.
  void SetUp() override {
    NvmlFakeTest::SetUp();
    fake_.set_mig_mode(0, 1);
    ASSERT_TRUE(fake_.add_mig_device(0, 0, 1, "MIG-11111111-2222-3333-4444-555555555555", 60));
    ASSERT_TRUE(fake_.add_mig_device(0, 2, 9, "MIG-66666666-7777-8888-9999-000000000000", 16));
    ASSERT_TRUE(fake_.add_mig_process(0, 0, 10, 4 * kGiB));
    ASSERT_TRUE(fake_.add_mig_process(0, 2, 11, kGiB));
    ASSERT_TRUE(fake_.add_mig_process(0, 2, 12, 2 * kGiB));
    fake_.add_compute_process(0, 99, kGiB);  // the parent's aggregate view
  }
};

// Catches: stopping at the first empty slot; instances' processes read from
// the parent (or mixed between instances); UUID/SMs of the parent instead of
// the instance; the parent's SM count ignored when the driver has it.
TEST_F(NvmlMigTest, ListsEachInstanceWithItsSmsAndProcesses) {
  fake_.set_sm_count(0, 132);
  device::NvmlGpuSet set = open();
  const device::GpuMigLayout layout = set.gpus[0]->mig_layout();
  EXPECT_TRUE(layout.enabled);
  EXPECT_EQ(layout.gpu_sm_count, 132u);
  ASSERT_EQ(layout.instances.size(), 2u);
  EXPECT_EQ(layout.instances[0].gpu_instance_id, 1u);
  EXPECT_EQ(layout.instances[0].uuid, "MIG-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(layout.instances[0].sm_count, 60u);
  EXPECT_THAT(layout.instances[0].processes, ElementsAre(Process(10u, 4 * kGiB)));
  EXPECT_EQ(layout.instances[1].gpu_instance_id, 9u);
  EXPECT_EQ(layout.instances[1].uuid, "MIG-66666666-7777-8888-9999-000000000000");
  EXPECT_EQ(layout.instances[1].sm_count, 16u);
  EXPECT_THAT(layout.instances[1].processes,
              ElementsAre(Process(11u, kGiB), Process(12u, 2 * kGiB)));
}

// Catches: a parent that answers NOT_SUPPORTED for its attributes (real
// drivers do) failing the layout, or leaving a denominator of 0.
TEST_F(NvmlMigTest, ParentWithoutAttributesCountsTheInstancesSms) {
  device::NvmlGpuSet set = open();
  const device::GpuMigLayout layout = set.gpus[0]->mig_layout();
  EXPECT_EQ(layout.instances.size(), 2u);
  EXPECT_EQ(layout.gpu_sm_count, 76u);
}

// Catches: errors on a MIG handle swallowed (a layout missing an instance).
TEST_F(NvmlMigTest, AFailingInstanceReadIsAnError) {
  device::NvmlGpuSet set = open();
  fake_.fail_next("nvmlDeviceGetGpuInstanceId", nvml_rc::kUnknown);
  const Error e = error_of([&] { set.gpus[0]->mig_layout(); });
  EXPECT_EQ(e.code(), ErrorCode::kUnknown);
  EXPECT_THAT(e.what(), HasSubstr("MIG device 0"));
}

// ---- an old driver, a lost GPU ------------------------------------------------

class NvmlOldDriverProcessesTest : public NvmlFakeTest {
 protected:
  NvmlOldDriverProcessesTest() : NvmlFakeTest(fake_nvml_old_path()) {}
};

// Catches: a missing entry point called through nullptr (a crash) or read as
// "nothing running".
TEST_F(NvmlOldDriverProcessesTest, EveryQueryIsNotSupported) {
  fake_.add_process_sample(0, 10, 1000, 40, 10);
  fake_.set_accounting_mode(0, 1);
  fake_.add_compute_process(0, 10, kGiB);
  device::NvmlGpuSet set = open();
  device::Gpu& gpu = *set.gpus[0];
  const Error samples = error_of([&] { gpu.process_utilization(0); });
  EXPECT_EQ(samples.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(samples.what(), HasSubstr("does not export nvmlDeviceGetProcessUtilization"));
  const Error accounting = error_of([&] { gpu.accounting_stats(); });
  EXPECT_EQ(accounting.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(accounting.what(), HasSubstr("nvmlDeviceGetAccountingMode"));
  const Error processes = error_of([&] { gpu.compute_processes(); });
  EXPECT_EQ(processes.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(processes.what(), HasSubstr("nvmlDeviceGetComputeRunningProcesses_v3 (or _v2)"));
  const Error mig = error_of([&] { gpu.mig_layout(); });
  EXPECT_EQ(mig.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(mig.what(), HasSubstr("nvmlDeviceGetMigMode"));
}

// Catches: GPU_IS_LOST mapped to anything but kGpuLost, or swallowed (as
// NOT_FOUND is for samples, or NOT_SUPPORTED for MIG).
TEST_F(NvmlProcessesTest, ALostGpuIsGpuLostForEveryQuery) {
  fake_.set_accounting_mode(0, 1);
  fake_.set_mig_mode(0, 1);
  fake_.set_accounting_mode(1, 1);
  device::NvmlGpuSet set = open();
  fake_.set_lost(0, true);
  fake_.set_lost(1, true);
  EXPECT_EQ(error_of([&] { set.gpus[1]->process_utilization(0); }).code(), ErrorCode::kGpuLost);
  EXPECT_EQ(error_of([&] { set.gpus[0]->accounting_stats(); }).code(), ErrorCode::kGpuLost);
  EXPECT_EQ(error_of([&] { set.gpus[0]->compute_processes(); }).code(), ErrorCode::kGpuLost);
  EXPECT_EQ(error_of([&] { set.gpus[0]->mig_layout(); }).code(), ErrorCode::kGpuLost);
}

// Catches: a GPU lost between listing the MIG devices and reading one of
// them going unnoticed.
TEST_F(NvmlMigTest, AGpuLostWhileReadingAnInstanceIsGpuLost) {
  device::NvmlGpuSet set = open();
  fake_.fail_next("nvmlDeviceGetAttributes_v2", nvml_rc::kGpuIsLost);
  EXPECT_EQ(error_of([&] { set.gpus[0]->mig_layout(); }).code(), ErrorCode::kGpuLost);
}

}  // namespace
}  // namespace zeus::testing
