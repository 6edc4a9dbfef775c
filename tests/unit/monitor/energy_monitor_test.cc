#include "zeus/monitor/energy_monitor.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <stdexcept>
#include <utility>

#include <atomic>
#include <filesystem>
#include <thread>

#include "monitor_test_helpers.h"
#include "util/csv.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus {
namespace {

using testing::make_rig;

monitor::EnergyMonitorOptions on_clock(Clock& clock) {
  monitor::EnergyMonitorOptions o;
  o.clock = &clock;
  return o;
}

TEST(EnergyMonitor, OneSecondWindowMatchesTheModelsTrueEnergy) {
  ManualClock clock;
  auto rig = make_rig(clock, 2);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  rig.sims[1]->set_load(0.4);
  const Joules true0 = rig.sims[0]->true_energy();
  const Joules true1 = rig.sims[1]->true_energy();
  monitor.begin_window("step");
  clock.advance(Seconds(0.3));
  rig.sims[0]->set_load(0.2);
  clock.advance(Seconds(0.7));
  const monitor::Measurement m = monitor.end_window("step");
  EXPECT_DOUBLE_EQ(m.time.count(), 1.0);
  const double want0 = (rig.sims[0]->true_energy() - true0).value();
  const double want1 = (rig.sims[1]->true_energy() - true1).value();
  EXPECT_NEAR(m.gpu_energy.at(0).value(), want0, want0 * 1e-3);
  EXPECT_NEAR(m.gpu_energy.at(1).value(), want1, want1 * 1e-3);
  EXPECT_EQ(m.gpu_energy_source.at(0), monitor::EnergySource::kCounter);
  EXPECT_TRUE(m.gpus_below_update_period.empty());
  EXPECT_DOUBLE_EQ(m.total_gpu_energy().value(),
                   m.gpu_energy.at(0).value() + m.gpu_energy.at(1).value());
}

// Issue 37: on a machine with nothing to measure the C++ monitor returned
// 0 J with no word. Now it warns once, naming why, and every measurement
// says it is empty; asking for a device that is not there is an error.
TEST(EnergyMonitor, NothingToMeasureIsSaidNeverASilentZero) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  ManualClock clock(Seconds(10.0));
  device::DeviceInventory none;
  none.gpu_backend = "none";
  none.notes = {"no NVIDIA driver found: cannot load libnvidia-ml.so.1; continuing without GPUs"};
  monitor::EnergyMonitor monitor(none, on_clock(clock));
  EXPECT_EQ(sink->count(log::Level::kWarn, "nothing to measure"), 1u);
  EXPECT_EQ(sink->count(log::Level::kWarn, "no NVIDIA driver found"), 1u);
  monitor.begin_window("epoch");
  clock.advance(Seconds(1.0));
  const monitor::Measurement m = monitor.end_window("epoch");
  EXPECT_TRUE(m.empty());
  ASSERT_TRUE(m.nothing_measured.has_value());
  EXPECT_NE(m.nothing_measured->find("no NVIDIA driver found"), std::string::npos);
  // A monitor with a device: its measurements are not empty, and say nothing.
  auto rig = make_rig(clock, 1);
  monitor::EnergyMonitor real(rig.inventory, on_clock(clock));
  real.begin_window("epoch");
  clock.advance(Seconds(1.0));
  const monitor::Measurement r = real.end_window("epoch");
  EXPECT_FALSE(r.empty());
  EXPECT_FALSE(r.nothing_measured.has_value());
  EXPECT_EQ(sink->count(log::Level::kWarn, "nothing to measure"), 1u);
  // Asking for a GPU that is not there is an error, not an empty monitor.
  monitor::EnergyMonitorOptions gpu3 = on_clock(clock);
  gpu3.gpu_indices = std::vector<int>{3};
  EXPECT_THROW(monitor::EnergyMonitor(rig.inventory, gpu3), Error);
  EXPECT_THROW(monitor::EnergyMonitor(none, gpu3), Error);
}

TEST(EnergyMonitor, WindowsNestAndOverlap) {
  ManualClock clock;
  auto rig = make_rig(clock, 1);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  monitor.begin_window("outer");
  clock.advance(Seconds(1));
  monitor.begin_window("inner");
  clock.advance(Seconds(1));
  monitor.begin_window("overlap");
  clock.advance(Seconds(1));
  const auto inner = monitor.end_window("inner");
  clock.advance(Seconds(1));
  const auto outer = monitor.end_window("outer");
  const auto overlap = monitor.end_window("overlap");
  EXPECT_DOUBLE_EQ(inner.time.count(), 2.0);
  EXPECT_DOUBLE_EQ(outer.time.count(), 4.0);
  EXPECT_DOUBLE_EQ(overlap.time.count(), 2.0);
  EXPECT_NEAR(outer.gpu_energy.at(0).value(), 2 * inner.gpu_energy.at(0).value(), 1e-9);
}

std::filesystem::path unique_dir(const std::string& name);  // below

// running(): the energy so far of an open window, which keeps running and is
// measured whole when it ends; nothing is logged for the peek.
TEST(EnergyMonitor, RunningReadsAnOpenWindowWithoutEndingIt) {
  ManualClock clock;
  auto rig = make_rig(clock, 1, {}, 1);
  const auto path = unique_dir("monitor_running") / "log.csv";
  std::filesystem::remove_all(path.parent_path());
  int syncs = 0;
  auto opts = on_clock(clock);
  opts.log_file = path.string();
  opts.sync_execution = [&] { ++syncs; };
  {
    monitor::EnergyMonitor monitor(rig.inventory, opts);
    monitor.begin_window("epoch", /*sync=*/false);
    clock.advance(Seconds(1));
    rig.cpus[0]->add(Joules(4.0), Joules(1.0));
    const monitor::Measurement so_far = monitor.running("epoch");
    EXPECT_EQ(syncs, 0);  // no sync unless asked
    EXPECT_DOUBLE_EQ(so_far.time.count(), 1.0);
    EXPECT_NEAR(so_far.gpu_energy.at(0).value(), device::SimGpuModel{}.busy_power.value(), 1e-3);
    EXPECT_DOUBLE_EQ(so_far.cpu_energy.at(0).value(), 4.0);
    EXPECT_DOUBLE_EQ(so_far.dram_energy.at(0).value(), 1.0);
    EXPECT_TRUE(monitor.window_running("epoch"));
    clock.advance(Seconds(2));
    rig.cpus[0]->add(Joules(6.0), Joules(0.0));
    const monitor::Measurement later = monitor.running("epoch", /*sync=*/true);
    EXPECT_EQ(syncs, 1);
    EXPECT_DOUBLE_EQ(later.time.count(), 3.0);
    EXPECT_NEAR(later.gpu_energy.at(0).value(), 3 * so_far.gpu_energy.at(0).value(), 1e-6);
    const monitor::Measurement whole = monitor.end_window("epoch", /*sync=*/false);
    EXPECT_DOUBLE_EQ(whole.time.count(), 3.0);
    EXPECT_DOUBLE_EQ(whole.cpu_energy.at(0).value(), 10.0);
    EXPECT_NEAR(whole.gpu_energy.at(0).value(), later.gpu_energy.at(0).value(), 1e-9);
    try {
      monitor.running("epoch");
      ADD_FAILURE() << "running() of an ended window";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    }
  }
  // One row: the ended window's, none for the peeks.
  EXPECT_EQ(CsvTable::read_file(path.string()).num_rows(), 1u);
  std::filesystem::remove_all(path.parent_path());
}

TEST(EnergyMonitor, DuplicateUnknownRestartAndCancel) {
  ManualClock clock;
  auto rig = make_rig(clock, 1);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  monitor.begin_window("a");
  try {
    monitor.begin_window("a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
  }
  clock.advance(Seconds(5));
  monitor.begin_window("a", true, /*restart=*/true);
  clock.advance(Seconds(1));
  EXPECT_DOUBLE_EQ(monitor.end_window("a").time.count(), 1.0);
  try {
    monitor.end_window("a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos);
  }
  monitor.begin_window("b");
  clock.advance(Seconds(1));
  const auto cancelled = monitor.end_window("b", true, /*cancel=*/true);
  EXPECT_DOUBLE_EQ(cancelled.time.count(), 0.0);
  EXPECT_DOUBLE_EQ(cancelled.gpu_energy.at(0).value(), 0.0);
  EXPECT_FALSE(monitor.window_running("b"));
  monitor.begin_window("c");
  monitor.reset_windows();
  EXPECT_FALSE(monitor.window_running("c"));
}

// Warned once per monitor (like Python's warnings), every window flagged.
TEST(EnergyMonitor, ShortWindowsAreWarnedOncePerMonitor) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  ManualClock clock(Seconds(100.0));
  device::SimGpuModel model;
  model.counter_update_period = Seconds(0.1);
  auto rig = make_rig(clock, 1, model);
  for (int monitors = 1; monitors <= 2; ++monitors) {
    monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
    for (int w = 0; w < 3; ++w) {
      clock.advance(Seconds(0.2));
      monitor.begin_window("short");
      clock.advance(Seconds(0.01));
      EXPECT_EQ(monitor.end_window("short").gpus_below_update_period, std::vector<int>{0});
    }
    EXPECT_EQ(sink->count(log::Level::kWarn, "did not move"), static_cast<std::size_t>(monitors));
    EXPECT_EQ(sink->count(log::Level::kWarn, "shorter than"), static_cast<std::size_t>(monitors));
  }
}

// A counter that stays still for a whole second is not a short window: the
// warning says it looks stuck and does not tell the user to measure longer.
TEST(EnergyMonitor, ACounterStillForASecondIsCalledStuckNotAShortWindow) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  ManualClock clock(Seconds(100.0));
  device::SimGpuModel model;
  model.counter_update_period = Seconds(50.0);  // no step between 100.2 s and 101.2 s
  auto rig = make_rig(clock, 1, model);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  clock.advance(Seconds(0.2));
  monitor.begin_window("epoch");
  clock.advance(Seconds(1.0));
  EXPECT_EQ(monitor.end_window("epoch").gpus_below_update_period, std::vector<int>{0});
  EXPECT_EQ(sink->count(log::Level::kWarn, "looks stuck"), 1u);
  EXPECT_EQ(sink->count(log::Level::kWarn, "shorter than"), 0u);
}

TEST(EnergyMonitor, ShortWindowsAreFlaggedNeverSilentlyZero) {
  ManualClock clock(Seconds(100.0));
  device::SimGpuModel model;
  model.counter_update_period = Seconds(0.1);  // NVML-like counter steps
  auto rig = make_rig(clock, 1, model);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  clock.advance(Seconds(0.01));
  monitor.begin_window("short");
  clock.advance(Seconds(0.02));
  const auto m = monitor.end_window("short");
  EXPECT_DOUBLE_EQ(m.gpu_energy.at(0).value(), 0.0);
  EXPECT_EQ(m.gpus_below_update_period, std::vector<int>{0});

  auto opts = on_clock(clock);
  opts.approx_instant_energy = true;
  monitor::EnergyMonitor approx(rig.inventory, opts);
  clock.advance(Seconds(0.01));
  approx.begin_window("short");
  clock.advance(Seconds(0.02));
  const auto a = approx.end_window("short");
  EXPECT_EQ(a.gpu_energy_source.at(0), monitor::EnergySource::kInstantPowerApprox);
  EXPECT_NEAR(a.gpu_energy.at(0).value(), model.busy_power.value() * 0.02, 1e-6);
  EXPECT_EQ(a.gpus_below_update_period, std::vector<int>{0});
}

TEST(EnergyMonitor, GpusWithoutCounterIntegratePowerWithinHalfAPercentOfTheCounter) {
  ManualClock clock;
  device::SimGpuModel with_counter;
  device::SimGpuModel pre_volta;
  pre_volta.energy_counter = false;
  pre_volta.architecture = device::GpuArchitecture::kPascal;
  auto a = std::make_shared<device::SimGpu>(with_counter, clock, 0);
  auto b = std::make_shared<device::SimGpu>(pre_volta, clock, 1);
  device::DeviceInventory inv;
  inv.gpus = {a, b};
  auto opts = on_clock(clock);
  opts.power_monitor.start_thread = false;
  opts.power_monitor.interval = Seconds(0.01);
  monitor::EnergyMonitor monitor(inv, opts);
  ASSERT_NE(monitor.power_monitor(), nullptr);
  clock.advance(Seconds(0.005));  // windows start between samples
  monitor.begin_window("w");
  // A load pattern with steps, sampled every 10 ms like the background thread would.
  for (int i = 0; i < 100; ++i) {
    const double load = (i / 10) % 2 == 0 ? 1.0 : 0.3;
    a->set_load(load);
    b->set_load(load);
    clock.advance(Seconds(0.01));
    monitor.power_monitor()->sample_now();
  }
  clock.advance(Seconds(0.004));
  const auto m = monitor.end_window("w");
  EXPECT_EQ(m.gpu_energy_source.at(1), monitor::EnergySource::kPowerTimeline);
  const double counter = m.gpu_energy.at(0).value();
  const double integrated = m.gpu_energy.at(1).value();
  EXPECT_NEAR(integrated, counter, counter * 0.005);
}

TEST(EnergyMonitor, CpuAndDramEnergyAreCounterDifferences) {
  ManualClock clock;
  auto rig = make_rig(clock, 0, {}, 2);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  monitor.begin_window("cpu");
  rig.cpus[0]->add(Joules(12.5), Joules(1.5));
  rig.cpus[1]->add(Joules(3.0), Joules(0.5));
  clock.advance(Seconds(1));
  const auto m = monitor.end_window("cpu");
  EXPECT_DOUBLE_EQ(m.cpu_energy.at(0).value(), 12.5);
  EXPECT_DOUBLE_EQ(m.dram_energy.at(1).value(), 0.5);
  EXPECT_DOUBLE_EQ(m.total_energy().value(), 12.5 + 1.5 + 3.0 + 0.5);
  EXPECT_TRUE(m.gpu_energy.empty());
}

TEST(EnergyMonitor, SyncHookRunsBeforeCountersAreRead) {
  ManualClock clock;
  auto rig = make_rig(clock, 1);
  int syncs = 0;
  auto opts = on_clock(clock);
  opts.sync_execution = [&] { ++syncs; };
  monitor::EnergyMonitor monitor(rig.inventory, opts);
  monitor.begin_window("a");
  monitor.end_window("a");
  monitor.begin_window("b", /*sync=*/false);
  monitor.end_window("b", /*sync=*/false);
  EXPECT_EQ(syncs, 2);
}

// An interrupted sync (Ctrl-C inside torch.cuda.synchronize) must not lose
// the window: it is still running, and ending it again measures it whole.
TEST(EnergyMonitor, AnInterruptedSyncKeepsTheWindow) {
  ManualClock clock;
  auto rig = make_rig(clock, 1);
  int syncs = 0;
  auto opts = on_clock(clock);
  opts.sync_execution = [&] {
    if (++syncs == 2) throw std::runtime_error("KeyboardInterrupt");  // in the first end_window
  };
  monitor::EnergyMonitor monitor(rig.inventory, opts);
  monitor.begin_window("epoch");
  clock.advance(Seconds(2));
  EXPECT_THROW(monitor.end_window("epoch"), std::runtime_error);
  EXPECT_TRUE(monitor.window_running("epoch"));
  clock.advance(Seconds(1));
  const monitor::Measurement m = monitor.end_window("epoch");
  EXPECT_DOUBLE_EQ(m.time.count(), 3.0);
  EXPECT_FALSE(monitor.window_running("epoch"));
  EXPECT_THROW(monitor.end_window("epoch"), Error);  // a window that is not running: kNotFound
}

TEST(EnergyMonitor, SelectsIndicesAndRejectsMissingOnes) {
  ManualClock clock;
  auto rig = make_rig(clock, 3);
  auto opts = on_clock(clock);
  opts.gpu_indices = std::vector<int>{2, 0};
  monitor::EnergyMonitor monitor(rig.inventory, opts);
  EXPECT_EQ(monitor.gpu_indices(), (std::vector<int>{2, 0}));
  monitor.begin_window("x");
  clock.advance(Seconds(1));
  EXPECT_EQ(monitor.end_window("x").gpu_energy.size(), 2u);
  opts.gpu_indices = std::vector<int>{3};
  EXPECT_THROW(monitor::EnergyMonitor(rig.inventory, opts), Error);
  opts.gpu_indices = std::vector<int>{1, 1};
  EXPECT_THROW(monitor::EnergyMonitor(rig.inventory, opts), Error);
}

// A device failing at the end of a window costs only its own result: the
// others are reported, the failure is named and warned about.
TEST(EnergyMonitor, GpuLostMidWindowLeavesTheOtherDevicesMeasured) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  ManualClock clock;
  auto rig = make_rig(clock, 2, {}, 1);
  monitor::EnergyMonitor monitor(rig.inventory, on_clock(clock));
  monitor.begin_window("w");
  rig.cpus[0]->add(Joules(5.0), Joules(1.0));
  clock.advance(Seconds(1.0));
  rig.sims[0]->fail_as_lost();
  const monitor::Measurement m = monitor.end_window("w");
  ASSERT_EQ(m.failed_gpus.count(0), 1u);
  EXPECT_NE(m.failed_gpus.at(0).find("lost"), std::string::npos) << m.failed_gpus.at(0);
  EXPECT_EQ(m.gpu_energy.count(0), 0u);
  EXPECT_NEAR(m.gpu_energy.at(1).value(), device::SimGpuModel{}.busy_power.value(), 1e-6);
  EXPECT_DOUBLE_EQ(m.cpu_energy.at(0).value(), 5.0);
  EXPECT_NEAR(m.total_energy().value(), device::SimGpuModel{}.busy_power.value() + 6.0, 1e-6);
  EXPECT_EQ(sink->count(log::Level::kWarn, "GPU 0 could not be read"), 1u);
  // A window cannot begin on a lost GPU: that is still an error.
  EXPECT_THROW(monitor.begin_window("next"), Error);
}

std::filesystem::path unique_dir(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("zeus_" + name + "_" + std::to_string(::getpid()));
}

TEST(EnergyMonitor, WritesACsvRowPerEndedWindow) {
  ManualClock clock;
  auto rig = make_rig(clock, 2, {}, 1);
  const auto path = unique_dir("monitor_log") / "log.csv";
  std::filesystem::remove_all(path.parent_path());
  {
    auto opts = on_clock(clock);
    opts.log_file = path.string();
    monitor::EnergyMonitor monitor(rig.inventory, opts);
    monitor.begin_window("epoch,1");
    clock.advance(Seconds(2));
    monitor.end_window("epoch,1");
    monitor.begin_window("dropped");
    monitor.end_window("dropped", true, /*cancel=*/true);
  }
  const auto t = CsvTable::read_file(path.string());
  EXPECT_EQ(t.columns(),
            (std::vector<std::string>{"start_time", "window_name", "elapsed_time", "gpu0_energy",
                                      "gpu1_energy", "cpu0_energy", "dram0_energy"}));
  ASSERT_EQ(t.num_rows(), 1u);
  EXPECT_EQ(t.cell(0, 1), "epoch,1");
  EXPECT_DOUBLE_EQ(t.as_double(0, 2), 2.0);
  EXPECT_NEAR(t.as_double(0, 3), 2 * device::SimGpuModel{}.busy_power.value(), 1e-3);
  std::filesystem::remove_all(path.parent_path());
}

// The log is appended to: earlier windows survive the next run, the header
// is written once, and a log with other columns is refused, not mixed.
TEST(EnergyMonitor, LogAppendsAndRefusesOtherColumns) {
  ManualClock clock;
  auto rig = make_rig(clock, 2);
  const auto path = unique_dir("monitor_append") / "log.csv";
  std::filesystem::remove_all(path.parent_path());
  for (int run = 0; run < 2; ++run) {
    auto opts = on_clock(clock);
    opts.log_file = path.string();
    monitor::EnergyMonitor monitor(rig.inventory, opts);
    monitor.begin_window("run" + std::to_string(run));
    clock.advance(Seconds(1));
    monitor.end_window("run" + std::to_string(run));
  }
  const auto t = CsvTable::read_file(path.string());
  ASSERT_EQ(t.num_rows(), 2u);
  EXPECT_EQ(t.cell(0, 1), "run0");
  EXPECT_EQ(t.cell(1, 1), "run1");
  auto one_gpu = on_clock(clock);
  one_gpu.log_file = path.string();
  one_gpu.gpu_indices = std::vector<int>{1};
  try {
    monitor::EnergyMonitor monitor(rig.inventory, one_gpu);
    FAIL() << "mixed columns into the log";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("gpu1_energy"), std::string::npos) << e.what();
  }
  EXPECT_EQ(CsvTable::read_file(path.string()).num_rows(), 2u) << "the log is untouched";
  std::filesystem::remove_all(path.parent_path());
}

TEST(EnergyMonitor, LogWriteFailureIsAnError) {
  ManualClock clock;
  auto rig = make_rig(clock, 1);
  auto opts = on_clock(clock);
  opts.log_file = "/dev/full";
  try {
    monitor::EnergyMonitor monitor(rig.inventory, opts);  // the header write fails
    FAIL() << "a full disk went unnoticed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
}

TEST(EnergyMonitor, ConcurrentWindowsFromManyThreads) {
  // Each thread's windows measure the GPU between their own begin and end:
  // the model's energy read just around begin_window and end_window brackets
  // what the window may report. A monitor that mixed windows of different
  // threads (a begin reading stored under the wrong name, or one shared slot)
  // reports energy outside those brackets.
  device::SimGpuModel exact;
  exact.counter_update_period = Seconds(0);  // no quantization: brackets are exact
  auto rig = make_rig(SteadyClock::instance(), 2, exact);
  monitor::EnergyMonitor monitor(rig.inventory);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string name = "t" + std::to_string(t) + "_" + std::to_string(i % 3);
        const double before_begin = rig.sims[1]->true_energy().value();
        monitor.begin_window(name);
        const double after_begin = rig.sims[1]->true_energy().value();
        const double before_end = rig.sims[1]->true_energy().value();
        const auto m = monitor.end_window(name);
        const double after_end = rig.sims[1]->true_energy().value();
        const double got = m.gpu_energy.at(1).value();
        const double slack = 1e-9 * after_end;
        if (m.gpu_energy.size() != 2 || got < before_end - after_begin - slack ||
            got > after_end - before_begin + slack) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace zeus
