// Who runs on an AMD GPU: amdsmi_get_gpu_process_list through the fake
// libamd_smi.so of each ABI, its size protocol, the ABIs and libraries that
// cannot list processes, and the attribution ledger's split over what it lists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "amdsmi_fixture.h"
#include "support/error_of.h"
#include "zeus/monitor/attribution/gpu_split.h"
#include "zeus/util/error.h"

namespace zeus::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr unsigned long long kGiB = 1ULL << 30;

MATCHER_P2(Process, pid, bytes, "") { return arg.pid == pid && arg.used_memory_bytes == bytes; }

using zeus::testing::error_of;

// The ABIs whose amdsmi_proc_info_t the backend declares.
class AmdSmiProcessTest : public AmdSmiTest {};

INSTANTIATE_TEST_SUITE_P(Abi, AmdSmiProcessTest, ::testing::Values(24, 26),
                         [](const auto& param_info) {
                           return "abi" + std::to_string(param_info.param);
                         });

// Catches: pid or mem read at another ABI's offset, a wrong stride (every
// entry after the first garbage), or one GPU's list answered for another.
TEST_P(AmdSmiProcessTest, ListsEachGpusProcessesWithTheirMemory) {
  fake().set_processes(0, {{4242, 3 * kGiB}, {4343, kGiB}});
  fake().set_processes(1, {{777, 512}});
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_EQ(set.gpus.size(), 2U);
  EXPECT_THAT(set.gpus[0]->compute_processes(),
              ElementsAre(Process(4242U, 3 * kGiB), Process(4343U, kGiB)));
  EXPECT_THAT(set.gpus[1]->compute_processes(), ElementsAre(Process(777U, 512U)));
}

// Catches: the count query skipped or a buffer sized exactly (the real
// library fills min(room, running)), and OUT_OF_RESOURCES — processes that
// started between the count and the fill — treated as an error or as a
// complete list.
TEST_P(AmdSmiProcessTest, AListThatGrowsBetweenCountAndFillIsReadAgain) {
  fake().set_processes(0, {{10, kGiB}});
  amdsmi_internal::AmdSmiGpuSet set = open();
  // 1 running at the count, 1 + 20 at the fill: more than the spare room.
  fake().grow_processes_after_count(0, 20);
  const auto processes = set.gpus[0]->compute_processes();
  ASSERT_EQ(processes.size(), 21U);
  EXPECT_EQ(processes[0].pid, 10U);
  EXPECT_EQ(processes[20].pid, 90020U);
  EXPECT_EQ(processes[20].used_memory_bytes, 1ULL << 20);
  // Count, a fill that was short, a fill that fit.
  EXPECT_EQ(fake().call_count("amdsmi_get_gpu_process_list"), 3U);
}

// Catches: an idle GPU reported as "unknown" (kNotSupported) instead of
// "nobody", which would stop the ledger learning idle power; or a fill call
// with a zero-sized buffer.
TEST_P(AmdSmiProcessTest, AnIdleGpuListsNobody) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  EXPECT_THAT(set.gpus[0]->compute_processes(), IsEmpty());
  EXPECT_EQ(fake().call_count("amdsmi_get_gpu_process_list"), 1U);
}

// Catches: driver errors swallowed into an empty list (the ledger would then
// call the GPU idle) or mapped to the wrong code.
TEST_P(AmdSmiProcessTest, DriverErrorsAreErrors) {
  fake().set_processes(0, {{10, kGiB}});
  amdsmi_internal::AmdSmiGpuSet set = open();
  fake().fail_next("amdsmi_get_gpu_process_list", amdsmi_status::kNotSupported);
  EXPECT_EQ(error_of([&] { set.gpus[0]->compute_processes(); }).code(), ErrorCode::kNotSupported);
  fake().fail_next("amdsmi_get_gpu_process_list", amdsmi_status::kNoPerm);
  const Error denied = error_of([&] { set.gpus[0]->compute_processes(); });
  EXPECT_EQ(denied.code(), ErrorCode::kNoPermission);
  EXPECT_THAT(denied.what(), HasSubstr("amdsmi_get_gpu_process_list"));
  EXPECT_THAT(set.gpus[0]->compute_processes(), ElementsAre(Process(10U, kGiB)));
}

// Catches: a MIG query that throws (the ledger would stop asking, fine) or
// claims MIG (the ledger would split by SM fractions of nothing); a
// per-process utilization made up from AMD's cumulative engine time.
TEST_P(AmdSmiProcessTest, NoMigAndNoUtilizationSamples) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  const device::GpuMigLayout layout = set.gpus[0]->mig_layout();
  EXPECT_FALSE(layout.enabled);
  EXPECT_THAT(layout.instances, IsEmpty());
  EXPECT_EQ(error_of([&] { set.gpus[0]->process_utilization(0); }).code(),
            ErrorCode::kNotSupported);
  EXPECT_EQ(error_of([&] { set.gpus[0]->accounting_stats(); }).code(), ErrorCode::kNotSupported);
}

// Catches: the AMD GPU's active energy left unattributed although AMD SMI
// names its processes: the ledger's splitter falls through MIG, samples and
// accounting to an equal split over them.
TEST_P(AmdSmiProcessTest, TheLedgerSplitsEquallyOverTheListedProcesses) {
  fake().set_processes(0, {{101, kGiB}, {202, 2 * kGiB}, {303, 0}});
  amdsmi_internal::AmdSmiGpuSet set = open();
  attribution::GpuSplitter splitter;
  for (int poll = 0; poll < 2; ++poll) {
    const attribution::GpuSplit split = splitter.next(*set.gpus[0]);
    EXPECT_EQ(split.method, attribution::Method::kEqualSplit);
    EXPECT_TRUE(split.busy);
    ASSERT_EQ(split.weights.size(), 3U);
    std::vector<std::uint32_t> pids;
    for (const auto& w : split.weights) {
      pids.push_back(w.pid);
      EXPECT_DOUBLE_EQ(w.weight, split.weights[0].weight);
    }
    EXPECT_THAT(pids, ::testing::UnorderedElementsAre(101U, 202U, 303U));
  }
  fake().set_processes(0, {});
  const attribution::GpuSplit idle = splitter.next(*set.gpus[0]);
  EXPECT_EQ(idle.method, attribution::Method::kNone);
  EXPECT_FALSE(idle.busy) << "an empty list tells the ledger nobody used the GPU";
}

// Before ROCm 7.2 AMD SMI is not thread-safe: the list's calls hold the
// library lock like every other call.
TEST_P(AmdSmiProcessTest, ListCallsAreSerializedBeforeRocm72) {
  if (abi() == 26) fake().set_lib_version(0, 26, 2, 0);  // ROCm 7.1.1
  fake().set_processes(0, {{10, kGiB}});
  fake().set_processes(1, {{11, kGiB}});
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_TRUE(set.serialized);
  fake().set_call_delay_us(300);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        (void)set.gpus[static_cast<std::size_t>(t % 2)]->compute_processes();
        (void)set.gpus[static_cast<std::size_t>(t % 2)]->power(device::PowerDomain::kDeviceInstant);
      }
    });
  }
  for (auto& th : threads) th.join();
  fake().set_call_delay_us(0);
  EXPECT_EQ(fake().max_in_flight(), 1);
}

// ABI 25 (ROCm 6.4): its amdsmi_proc_info_t is not declared, so the backend
// refuses before calling rather than read names as pids.
class AmdSmiAbi25ProcessTest : public AmdSmiTest {
 protected:
  int abi() const override { return 25; }
};

// Catches: ABI 25 read through another ABI's layout (garbage pids in the
// ledger), or a refusal that does not say why.
TEST_F(AmdSmiAbi25ProcessTest, ListingIsNotSupportedAndNeverCalled) {
  fake().set_processes(0, {{10, kGiB}});
  amdsmi_internal::AmdSmiGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->compute_processes(); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("ABI 25"));
  EXPECT_EQ(fake().call_count("amdsmi_get_gpu_process_list"), 0U);
  attribution::GpuSplitter splitter;
  EXPECT_EQ(splitter.next(*set.gpus[0]).method, attribution::Method::kNone);
}

// A library without amdsmi_get_gpu_process_list.
class AmdSmiNoProcessListTest : public AmdSmiTest {
 protected:
  void SetUp() override {
    fake_ = std::make_unique<FakeAmdSmi>(26, "-noproc");
    fake_->reset();
  }
  int abi() const override { return 26; }
};

// Catches: a missing entry point called through nullptr (a crash) or read as
// "nothing running" (the ledger would learn idle power from a busy GPU).
TEST_F(AmdSmiNoProcessListTest, AMissingEntryPointIsNotSupported) {
  amdsmi_internal::AmdSmiGpuSet set = open();
  ASSERT_EQ(set.library_path, fake().path());
  const Error e = error_of([&] { set.gpus[0]->compute_processes(); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("does not export amdsmi_get_gpu_process_list"));
  attribution::GpuSplitter splitter;
  const attribution::GpuSplit split = splitter.next(*set.gpus[0]);
  EXPECT_EQ(split.method, attribution::Method::kNone);
  EXPECT_TRUE(split.busy) << "unknown, not idle";
}

}  // namespace
}  // namespace zeus::testing
