// `zeus selftest`'s checks (src/monitor/selftest.h) on simulated GPUs and on
// the fake NVML, whose energy counter only moves when a test moves it.
#include "monitor/selftest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/amdsmi/fake_amdsmi_control.h"
#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/device/forwarding_gpu.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;

const monitor::SelftestCheck& find(const monitor::SelftestReport& report, const std::string& device,
                                   const std::string& name) {
  for (const auto& c : report.checks) {
    if (c.device == device && c.name == name) return c;
  }
  ADD_FAILURE() << "no check '" << name << "' for " << device;
  static const monitor::SelftestCheck none;
  return none;
}

monitor::SelftestVerdict verdict(const monitor::SelftestReport& report, const std::string& device,
                                 const std::string& name) {
  return find(report, device, name).verdict;
}

class SelftestOnFakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.reset();
    fake_.set_device_count(1);
  }
  device::DeviceInventory open() const {
    device::DiscoveryOptions o;
    o.gpu_backend = "nvml";
    o.nvml_library = fake_.path();
    o.cpus = false;
    o.use_zeusd = false;
    return device::discover_devices(o);
  }
  // A window of one second on the manual clock, during which the fake GPU
  // draws its 120 W and its counter moves by `counter_mj`.
  monitor::SelftestOptions options(unsigned long long counter_mj) {
    monitor::SelftestOptions o;
    o.clock = &clock_;
    o.call_repetitions = 5;
    o.workload = [this, counter_mj] {
      fake_.advance_energy_mj(0, counter_mj);
      clock_.advance(Seconds(1));
      return 3;
    };
    return o;
  }
  testing::FakeNvml fake_;
  ManualClock clock_;
};

TEST_F(SelftestOnFakeNvml, ACounterThatAgreesWithThePowerPasses) {
  const auto devices = open();
  const auto report = monitor::run_selftest(devices, options(120'000));
  EXPECT_EQ(report.workload_exit_code, 3);
  EXPECT_EQ(verdict(report, "host", "your command"), monitor::SelftestVerdict::kWarn);
  EXPECT_DOUBLE_EQ(report.window_length.count(), 1.0);
  EXPECT_EQ(verdict(report, "host", "GPUs"), monitor::SelftestVerdict::kPass);
  EXPECT_THAT(find(report, "host", "GPUs").detail, HasSubstr("driver 550.54.15"));
  EXPECT_EQ(verdict(report, "host", "CPU energy (RAPL)"), monitor::SelftestVerdict::kWarn);
  EXPECT_EQ(verdict(report, "GPU 0", "energy counter moves"), monitor::SelftestVerdict::kPass);
  EXPECT_THAT(find(report, "GPU 0", "energy counter moves").detail, HasSubstr("+120.000 J"));
  EXPECT_EQ(verdict(report, "GPU 0", "counter vs integrated power"),
            monitor::SelftestVerdict::kPass);
  EXPECT_THAT(find(report, "GPU 0", "counter vs integrated power").detail,
              HasSubstr("ratio 1.000"));
  EXPECT_EQ(verdict(report, "GPU 0", "power limit"), monitor::SelftestVerdict::kPass);
  EXPECT_EQ(find(report, "GPU 0", "power limit").detail, "700 W (range 200-700 W, default 700 W)");
  EXPECT_EQ(verdict(report, "GPU 0", "clock tables"), monitor::SelftestVerdict::kPass);
  EXPECT_THAT(find(report, "GPU 0", "clock tables").detail,
              HasSubstr("2 memory clock(s) 1593-2619 MHz; 328 graphics clock(s) 345-1980 MHz"));
  EXPECT_EQ(verdict(report, "GPU 0", "persistence mode"), monitor::SelftestVerdict::kWarn);
  EXPECT_EQ(verdict(report, "GPU 0", "driver call cost"), monitor::SelftestVerdict::kPass);
  EXPECT_EQ(verdict(report, "host", "measurement window cost"), monitor::SelftestVerdict::kPass);
  EXPECT_FALSE(report.failed());
  // Read-only: nothing was set.
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetPowerManagementLimit"), 0u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetGpuLockedClocks"), 0u);
}

TEST_F(SelftestOnFakeNvml, AStuckCounterFailsBothCounterChecks) {
  const auto devices = open();
  const auto report = monitor::run_selftest(devices, options(0));
  EXPECT_EQ(verdict(report, "GPU 0", "energy counter moves"), monitor::SelftestVerdict::kFail);
  EXPECT_THAT(find(report, "GPU 0", "energy counter moves").detail, HasSubstr("did not move"));
  EXPECT_EQ(verdict(report, "GPU 0", "counter vs integrated power"),
            monitor::SelftestVerdict::kFail);
  EXPECT_TRUE(report.failed());
  EXPECT_EQ(to_json(report)["failed"], true);
}

TEST_F(SelftestOnFakeNvml, ACounterOffByAQuarterIsAWarning) {
  const auto devices = open();
  const auto report = monitor::run_selftest(devices, options(150'000));  // 150 J against 120 J
  EXPECT_EQ(verdict(report, "GPU 0", "counter vs integrated power"),
            monitor::SelftestVerdict::kWarn);
  EXPECT_THAT(find(report, "GPU 0", "counter vs integrated power").detail,
              HasSubstr("ratio 1.250"));
  EXPECT_FALSE(report.failed());
}

TEST_F(SelftestOnFakeNvml, WriteSetsAndRestoresTheLimitAndTheClockLock) {
  fake_.set_power_limits(0, 200'000, 700'000, 700'000, 450'000);
  const auto devices = open();
  auto o = options(120'000);
  o.write = true;
  const auto report = monitor::run_selftest(devices, o);
  EXPECT_EQ(verdict(report, "GPU 0", "power limit set and restored"),
            monitor::SelftestVerdict::kPass);
  EXPECT_EQ(find(report, "GPU 0", "power limit set and restored").detail,
            "450 W -> 200 W -> 450 W");
  EXPECT_EQ(verdict(report, "GPU 0", "clock lock set and reset"), monitor::SelftestVerdict::kPass);
  EXPECT_EQ(fake_.call_count("nvmlDeviceSetGpuLockedClocks"), 1u);
  EXPECT_EQ(fake_.call_count("nvmlDeviceResetGpuLockedClocks"), 1u);
  EXPECT_DOUBLE_EQ(devices.gpus[0]->power_limit().value(), 450'000);
}

TEST_F(SelftestOnFakeNvml, WriteWithoutPrivilegesFailsWithTheReason) {
  fake_.set_permission_denied(true);
  const auto devices = open();
  auto o = options(120'000);
  o.write = true;
  const auto report = monitor::run_selftest(devices, o);
  EXPECT_EQ(verdict(report, "GPU 0", "power limit set and restored"),
            monitor::SelftestVerdict::kFail);
  EXPECT_THAT(find(report, "GPU 0", "power limit set and restored").detail,
              HasSubstr("CAP_SYS_ADMIN"));
  EXPECT_TRUE(report.failed());
}

// A GPU reached through a daemon that serves reads but no writes (zeusd
// without its write group answers 404, which the client reports as
// kNotSupported), and knows no clock table.
class ReadOnlyGpu final : public device::ForwardingGpu {
 public:
  using device::ForwardingGpu::ForwardingGpu;
  device::PowerLimitConstraints power_limit_constraints() override { refuse(); }
  void set_power_limit(Milliwatts) override { refuse(); }
  std::vector<Megahertz> supported_memory_clocks() override { return {}; }
  void set_gpu_locked_clocks(Megahertz, Megahertz) override { refuse(); }

 private:
  [[noreturn]] static void refuse() {
    throw_error(ErrorCode::kNotSupported, "the daemon does not serve this API group");
  }
};

TEST_F(SelftestOnFakeNvml, WriteThatCannotBeDoneFailsInsteadOfSkipping) {
  auto devices = open();
  devices.gpus[0] = std::make_shared<ReadOnlyGpu>(devices.gpus[0]);
  auto o = options(120'000);
  o.write = true;
  const auto report = monitor::run_selftest(devices, o);
  EXPECT_EQ(verdict(report, "GPU 0", "power limit set and restored"),
            monitor::SelftestVerdict::kFail);
  EXPECT_THAT(find(report, "GPU 0", "power limit set and restored").detail,
              HasSubstr("could not be done: the daemon does not serve"));
  EXPECT_EQ(verdict(report, "GPU 0", "clock lock set and reset"), monitor::SelftestVerdict::kFail);
  EXPECT_THAT(find(report, "GPU 0", "clock lock set and reset").detail,
              HasSubstr("no clock table"));
  EXPECT_TRUE(report.failed());  // exit 1: a gate cannot pass where nothing was written
  // Without --write nothing was asked to be written: no write check at all.
  o.write = false;
  for (const auto& c : monitor::run_selftest(devices, o).checks) {
    EXPECT_NE(c.name, "power limit set and restored");
    EXPECT_NE(c.name, "clock lock set and reset");
  }
}

TEST(Selftest, SimulatedGpusAreSaidToBeSimulatedAndTheirCountersMove) {
  device::DiscoveryOptions d;
  d.gpu_backend = "sim";
  d.sim_gpus = 2;
  d.cpus = false;
  d.use_zeusd = false;
  const auto devices = device::discover_devices(d);
  monitor::SelftestOptions o;
  o.window = Seconds(0.2);
  o.call_repetitions = 5;
  const auto report = monitor::run_selftest(devices, o);
  EXPECT_EQ(verdict(report, "host", "GPUs"), monitor::SelftestVerdict::kWarn);
  EXPECT_THAT(find(report, "host", "GPUs").detail, HasSubstr("SIMULATED"));
  EXPECT_EQ(verdict(report, "GPU 1", "energy counter moves"), monitor::SelftestVerdict::kPass);
  EXPECT_EQ(verdict(report, "GPU 1", "counter vs integrated power"),
            monitor::SelftestVerdict::kPass);
  EXPECT_GE(report.window_length.count(), 0.2);
  EXPECT_FALSE(report.workload_exit_code.has_value());
}

TEST(Selftest, AmdGpusThroughTheFakeAmdSmi) {
  testing::FakeAmdSmi amd(26);
  amd.reset();
  device::DiscoveryOptions d;
  d.gpu_backend = "amdsmi";
  d.amdsmi_library = amd.path();
  d.cpus = false;
  d.use_zeusd = false;
  const auto devices = device::discover_devices(d);
  monitor::SelftestOptions o;
  o.window = Seconds(0.05);
  o.call_repetitions = 5;
  const auto report = monitor::run_selftest(devices, o);
  EXPECT_THAT(find(report, "host", "GPUs").detail, HasSubstr("2 GPU(s) through amdsmi"));
  EXPECT_EQ(find(report, "GPU 1", "power limit").detail, "750 W (range 200-750 W, default 750 W)");
  EXPECT_THAT(find(report, "GPU 1", "clock tables").detail,
              HasSubstr("2 memory clock(s) 900-1300 MHz; 3 graphics clock(s) 500-2100 MHz"));
  // AMD GPUs have no persistence mode: not a failure.
  EXPECT_EQ(verdict(report, "GPU 0", "persistence mode"), monitor::SelftestVerdict::kSkip);
  EXPECT_EQ(verdict(report, "host", "measurement window cost"), monitor::SelftestVerdict::kPass);
  // The fake's counter only moves when a test moves it.
  EXPECT_EQ(verdict(report, "GPU 0", "energy counter moves"), monitor::SelftestVerdict::kFail);
}

TEST(Selftest, BadOptionsAreInvalidArguments) {
  device::DeviceInventory none;
  monitor::SelftestOptions o;
  o.window = Seconds(0);
  EXPECT_THROW(monitor::run_selftest(none, o), Error);
  o.window = Seconds(1);
  o.call_repetitions = 0;
  EXPECT_THROW(monitor::run_selftest(none, o), Error);
}

}  // namespace
}  // namespace zeus
