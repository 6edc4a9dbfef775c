// PowerMonitor over the fake NVML (the real backend through dlopen): several
// power domains are read in one nvmlDeviceGetFieldValues call per GPU and
// round, with the same readings as one call per domain.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>

#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/device/nvml.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/util/clock.h"

namespace zeus::testing {
namespace {

class PowerMonitorNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.reset();
    ASSERT_TRUE(fake_.set_device_count(2));
    device::NvmlOptions o;
    o.library_path = fake_.path();
    o.cuda_visible_devices = std::nullopt;
    unsetenv("CUDA_VISIBLE_DEVICES");
    device::NvmlGpuSet set = device::open_nvml_gpus(o);
    for (auto& g : set.gpus) gpus_.push_back(std::move(g));
    ASSERT_EQ(gpus_.size(), 2U);
  }
  monitor::PowerMonitorOptions manual(std::vector<device::PowerDomain> domains) {
    monitor::PowerMonitorOptions o;
    o.start_thread = false;
    o.clock = &clock_;
    o.interval = Seconds(0.01);
    o.domains = std::move(domains);
    return o;
  }

  FakeNvml fake_;
  ManualClock clock_{Seconds(0.0)};
  std::vector<std::shared_ptr<device::Gpu>> gpus_;
};

TEST_F(PowerMonitorNvmlTest, ThreeDomainsAreOneFieldValuesCallPerGpuAndRound) {
  fake_.set_power_mw(0, 250000, 200000, 30000);
  fake_.set_power_mw(1, 150000, 120000, 20000);
  const std::vector<device::PowerDomain> all = {device::PowerDomain::kDeviceInstant,
                                                device::PowerDomain::kDeviceAverage,
                                                device::PowerDomain::kMemoryAverage};
  monitor::PowerMonitor m(gpus_, {0, 1}, {}, {},
                          manual(all));  // first round: resolves each GPU's scopes
  const unsigned before = fake_.call_count("nvmlDeviceGetFieldValues");
  for (int round = 1; round <= 4; ++round) {
    clock_.set(Seconds(0.01 * round));
    m.sample_now();
  }
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetFieldValues") - before, 4U * 2U);
  const std::array<std::array<double, 3>, 2> want = {{{250, 200, 30}, {150, 120, 20}}};
  for (int gpu = 0; gpu < 2; ++gpu) {
    for (std::size_t d = 0; d < all.size(); ++d) {
      const auto latest = m.latest_gpu_power(gpu, all[d]);
      ASSERT_TRUE(latest.has_value());
      EXPECT_DOUBLE_EQ(latest->value(), want[static_cast<std::size_t>(gpu)][d]);
      // What one read per domain gives.
      EXPECT_DOUBLE_EQ(gpus_[static_cast<std::size_t>(gpu)]->power(all[d]).value(),
                       want[static_cast<std::size_t>(gpu)][d]);
    }
  }
}

TEST_F(PowerMonitorNvmlTest, AFailedBatchFallsBackToOneReadPerDomain) {
  fake_.set_power_mw(0, 250000, 200000, 30000);
  fake_.set_power_mw(1, 150000, 120000, 20000);
  const std::vector<device::PowerDomain> two = {device::PowerDomain::kDeviceInstant,
                                                device::PowerDomain::kMemoryAverage};
  monitor::PowerMonitor m(gpus_, {0, 1}, {}, {}, manual(two));
  // GPU 1's memory power stops being supported: the batch fails, the
  // per-domain reads still record its instant power.
  fake_.set_field(1, 185, 2, 3 /* NVML_ERROR_NOT_SUPPORTED */, 0);
  fake_.set_power_mw(1, 170000, 120000, 20000);
  clock_.set(Seconds(0.01));
  m.sample_now();
  ASSERT_TRUE(m.latest_gpu_power(1, device::PowerDomain::kDeviceInstant).has_value());
  EXPECT_DOUBLE_EQ(m.latest_gpu_power(1, device::PowerDomain::kDeviceInstant)->value(), 170);
  EXPECT_DOUBLE_EQ(m.latest_gpu_power(1, device::PowerDomain::kMemoryAverage)->value(),
                   20);  // the old one
  EXPECT_DOUBLE_EQ(m.latest_gpu_power(0, device::PowerDomain::kMemoryAverage)->value(), 30);
}

}  // namespace
}  // namespace zeus::testing
