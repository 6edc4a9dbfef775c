#include "zeus/device/jetson.h"

#include <gtest/gtest.h>

#include "fakes/jetson/fake_jetson.h"
#include "support/temp_dir.h"
#include "zeus/device/devices.h"
#include "zeus/util/error.h"

namespace zeus::testing {
namespace {

using Layout = FakeJetson::Layout;

struct LayoutCase {
  Layout layout;
  const char* driver;
  std::vector<std::pair<device::SocRail, std::string>> rails;  // kind, label
  bool voltage_times_current;
};

class JetsonLayouts : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(JetsonLayouts, FindsTheRailsAndReadsTheirPower) {
  const LayoutCase& c = GetParam();
  FakeJetson fake(c.layout);
  const auto board = device::JetsonBoard::discover(fake.root());
  ASSERT_TRUE(board.has_value());
  EXPECT_EQ(board->driver(), c.driver);
  ASSERT_EQ(board->rails().size(), c.rails.size());
  for (std::size_t k = 0; k < c.rails.size(); ++k) {
    EXPECT_EQ(board->rails()[k].rail, c.rails[k].first);
    EXPECT_EQ(board->rails()[k].label, c.rails[k].second);
    EXPECT_EQ(board->rails()[k].power.empty(), c.voltage_times_current);
  }
  for (const auto& [rail, label] : c.rails) {
    fake.set_power(rail, Watts(6.25));
    EXPECT_NEAR(board->power(rail).value(), 6.25, 1e-9) << label;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, JetsonLayouts,
                         ::testing::Values(LayoutCase{Layout::kNanoIioPower,
                                                      "ina3221x",
                                                      {{device::SocRail::kCpu, "POM_5V_CPU"},
                                                       {device::SocRail::kGpu, "POM_5V_GPU"},
                                                       {device::SocRail::kTotal, "POM_5V_IN"}},
                                                      false},
                                           LayoutCase{Layout::kTx2IioVoltageCurrent,
                                                      "ina3221x",
                                                      {{device::SocRail::kCpu, "VDD_SYS_CPU"},
                                                       {device::SocRail::kGpu, "VDD_SYS_GPU"},
                                                       {device::SocRail::kTotal, "VDD_IN"}},
                                                      true},
                                           LayoutCase{Layout::kXavierHwmonFlat,
                                                      "ina3221",
                                                      {{device::SocRail::kCpu, "CPU"},
                                                       {device::SocRail::kGpu, "GPU"}},
                                                      true},
                                           LayoutCase{Layout::kOrinHwmon,
                                                      "ina3221",
                                                      {{device::SocRail::kCpu, "VDD_CPU_GPU_CV"},
                                                       {device::SocRail::kTotal, "VDD_IN"}},
                                                      true}));

TEST(JetsonBoard, NoDriverDirectoryIsNoBoard) {
  TempDir empty;
  EXPECT_FALSE(device::JetsonBoard::discover(empty.path()).has_value());
  EXPECT_FALSE(device::JetsonBoard::discover("/nonexistent/sys").has_value());
}

TEST(JetsonBoard, RailsOfNoKnownKindAreNoBoard) {
  TempDir dir;
  const auto rails = std::filesystem::path(dir.path()) / "bus/i2c/drivers/ina3221/1-0040/hwmon1";
  std::filesystem::create_directories(rails);
  std::ofstream(rails / "in1_label") << "VDD_SOC\n";
  std::ofstream(rails / "in1_input") << "5000";
  std::ofstream(rails / "curr1_input") << "100";
  EXPECT_FALSE(device::JetsonBoard::discover(dir.path()).has_value());
}

TEST(JetsonBoard, AnUnreadableRailIsAnIoErrorNamingTheFile) {
  FakeJetson fake(Layout::kNanoIioPower);
  const auto board = device::JetsonBoard::discover(fake.root());
  ASSERT_TRUE(board.has_value());
  fake.corrupt(device::SocRail::kGpu);
  try {
    (void)board->power(device::SocRail::kGpu);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("in_power1_input"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'n/a'"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)board->power(device::SocRail::kCpu));
}

TEST(JetsonBoard, AMissingRailIsNotFound) {
  FakeJetson fake(Layout::kXavierHwmonFlat);
  const auto board = device::JetsonBoard::discover(fake.root());
  ASSERT_TRUE(board.has_value());
  EXPECT_EQ(board->find(device::SocRail::kTotal), nullptr);
  try {
    (void)board->power(device::SocRail::kTotal);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
}

TEST(JetsonDiscovery, TheInventoryCarriesTheBoardAndItCountsAsSomethingToMeasure) {
  FakeJetson fake(Layout::kOrinHwmon);
  device::DiscoveryOptions options;
  options.gpu_backend = "none";
  options.cpus = false;
  options.use_zeusd = false;
  options.jetson_sysfs_root = fake.root();
  const device::DeviceInventory inv = device::discover_devices(options);
  ASSERT_NE(inv.jetson, nullptr);
  EXPECT_EQ(inv.jetson->rails().size(), 2u);
  const device::DeviceSelection none = device::select_devices(inv, std::nullopt, std::nullopt);
  EXPECT_FALSE(device::nothing_to_measure(inv, none).has_value());

  options.soc = false;
  const device::DeviceInventory without = device::discover_devices(options);
  EXPECT_EQ(without.jetson, nullptr);
  EXPECT_TRUE(device::nothing_to_measure(
                  without, device::select_devices(without, std::nullopt, std::nullopt))
                  .has_value());
}

}  // namespace
}  // namespace zeus::testing
