// The closed loop: profiled GPUs in emulated time, and a whole emulation
// (stage threads, real server, real controllers) against the frontier.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "optimizer/pipeline_frequency/emulation/profiled_gpu.h"
#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"
#include "zeus/optimizer/pipeline_frequency/emulation/emulation.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {
namespace {

using pipeline_frequency::Instruction;
using ::testing::HasSubstr;

TEST(PipelineFrequencyProfiledGpuTest, ComputationsTakeTheProfilesTimeAndEnergyAtTheLockedClock) {
  const auto profile = testing::two_stage_profile();  // stage 1: F 16 ms, 5 J at 1410 MHz
  ManualClock clock(Seconds(0.0));
  ProfiledGpu gpu(profile, 1, Watts(60.0), clock);
  EXPECT_THAT(
      gpu.supported_graphics_clocks(ProfiledGpu::kMemoryClock),
      ::testing::ElementsAre(Megahertz(1410), Megahertz(1200), Megahertz(1005), Megahertz(810)));
  EXPECT_EQ(gpu.run(Instruction::kForward), Megahertz(1410));  // unlocked: the fastest
  EXPECT_DOUBLE_EQ(clock.now().count(), 0.016);
  EXPECT_DOUBLE_EQ(gpu.total_energy().value(), 5.0);
  clock.advance(Seconds(0.5));  // blocked: P_b
  EXPECT_DOUBLE_EQ(gpu.total_energy().value(), 5.0 + 30.0);
  gpu.set_gpu_locked_clocks(Megahertz(1100), Megahertz(1100));  // between profiled clocks
  EXPECT_EQ(gpu.run(Instruction::kBackward), Megahertz(1005));
  // Backward at 1005 MHz (k = 2): time 2 * 0.016 * 1.5, energy 2 * 5 * (1 - 0.4 + 0.12).
  EXPECT_DOUBLE_EQ(clock.now().count(), 0.516 + 0.048);
  EXPECT_NEAR(gpu.total_energy().value(), 35.0 + 7.2, 1e-12);
  gpu.set_gpu_locked_clocks(Megahertz(300), Megahertz(300));  // below all: the slowest
  EXPECT_EQ(gpu.frequency(Instruction::kForward), Megahertz(810));
  gpu.reset_gpu_locked_clocks();
  EXPECT_FALSE(gpu.clocks_locked());
  EXPECT_EQ(gpu.frequency(Instruction::kForward), Megahertz(1410));
  EXPECT_THROW(ProfiledGpu(profile, 2, Watts(60.0), clock), Error);
}

TEST(PipelineFrequencyEmulationTest, SavesWhatTheFrontierPredictsInAClosedLoop) {
  log::ScopedSink quiet(std::make_shared<log::CapturingSink>());
  testing::TempDir dir;
  EmulationOptions o;
  o.profile = testing::fixture("stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  o.microbatches = 4;
  o.iterations = 2;
  o.work_dir = dir.path();
  const auto report = run_emulation(o);  // stages as threads
  ASSERT_EQ(report.scenarios.size(), 6u);
  EXPECT_EQ(report.num_stages, 8);
  for (const auto& c : check_emulation(report, o.unit_time)) {
    EXPECT_TRUE(c.passed) << c.claim;
  }
  for (const auto& s : report.scenarios) {
    EXPECT_TRUE(s.followed_schedule) << s.name;
    EXPECT_TRUE(s.clocks_restored) << s.name;
    // Emulated time: every iteration of a plan measures the same (up to the
    // rounding of clocks that grow from one iteration to the next).
    for (std::size_t k = 1; k < s.iteration_times.size(); ++k) {
      EXPECT_NEAR(s.iteration_times[k].count(), s.iteration_times[0].count(), 1e-9) << s.name;
      EXPECT_NEAR(s.iteration_energies[k].value(), s.iteration_energies[0].value(), 1e-6) << s.name;
    }
  }
  // The plans save energy; T* more than T_min; a straggler lets it save more.
  EXPECT_GT(report.measured_saving(1), 0.05);
  EXPECT_GT(report.measured_saving(2), report.measured_saving(1));
  EXPECT_GT(report.measured_saving(5), report.measured_saving(4));
  EXPECT_THAT(emulation_table(report), HasSubstr("minimum energy (T*)"));
}

TEST(PipelineFrequencyEmulationTest, AFailingStageStopsTheRunWithItsMessage) {
  log::ScopedSink quiet(std::make_shared<log::CapturingSink>());
  testing::TempDir dir;
  EmulationOptions o;
  o.profile = testing::fixture("stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  o.microbatches = 2;
  o.iterations = 1;
  o.work_dir = dir.path();
  o.timeout = Seconds(30.0);
  o.worker_command = {dir.path() + "/no-such-program"};
  try {
    run_emulation(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("stage"));
  }
  o.iterations = 0;
  EXPECT_THROW(run_emulation(o), Error);
}

}  // namespace
}  // namespace zeus::pipeline_frequency
