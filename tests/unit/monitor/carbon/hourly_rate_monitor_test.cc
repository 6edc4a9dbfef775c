// Windows split at UTC hour boundaries and priced per hour, on simulated GPUs
// and a manual clock that serves as both the monotonic and the wall clock.
#include "zeus/monitor/carbon/hourly_rate_monitor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "fake_provider_server.h"
#include "monitor/carbon/hourly_json.h"
#include "util/iso8601.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/carbon/carbon_emission_monitor.h"
#include "zeus/monitor/carbon/electricity_maps.h"
#include "zeus/monitor/carbon/energy_cost_monitor.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;

constexpr double kNoon = 1714564800;  // 2024-05-01T12:00:00Z

// Rates keyed by hour; an hour it lacks throws kNotFound.
class TableRates final : public carbon::HourlyRateProvider {
 public:
  TableRates(std::map<carbon::UtcHour, double> table, std::string unit)
      : table_(std::move(table)), unit_(std::move(unit)) {}
  double rate(carbon::UtcHour hour) override {
    ++calls;
    const auto it = table_.find(hour);
    if (it == table_.end())
      throw_error(ErrorCode::kNotFound, "no rate for " + format_iso8601(hour));
    return it->second;
  }
  std::string description() const override { return "table"; }
  std::string unit() const override { return unit_; }
  int calls = 0;

 private:
  std::map<carbon::UtcHour, double> table_;
  std::string unit_;
};

class HourlyRateMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      auto gpu = std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock_, i);
      sims_.push_back(gpu);
      inventory_.gpus.push_back(gpu);
    }
    inventory_.gpu_backend = "sim";
  }
  carbon::HourlyRateMonitorOptions options() {
    carbon::HourlyRateMonitorOptions o;
    o.energy.clock = &clock_;
    o.wall_time = [this] { return clock_.now().count(); };
    o.start_thread = false;
    return o;
  }
  // Moves to wall time `t` with the GPUs at `load` until then.
  void run_until(double t, double load) {
    for (auto& s : sims_) s->set_load(load);
    clock_.set(Seconds(t));
  }

  ManualClock clock_{Seconds(kNoon + 1800)};  // 12:30Z
  std::vector<std::shared_ptr<device::SimGpu>> sims_;
  device::DeviceInventory inventory_;
};

TEST_F(HourlyRateMonitorTest, EachHoursEnergyGetsThatHoursRate) {
  auto carbon = std::make_shared<TableRates>(
      std::map<carbon::UtcHour, double>{{kNoon, 100}, {kNoon + 3600, 200}, {kNoon + 7200, 400}},
      carbon::kCarbonIntensityUnit);
  carbon::HourlyRateMonitor m(inventory_, {carbon}, options());
  for (auto& s : sims_) s->set_load(1.0);
  m.begin_window("train");
  run_until(kNoon + 3600, 1.0);  // 12:30-13:00 at 300 W
  m.tick();
  run_until(kNoon + 7200, 0.0);  // 13:00-14:00 idle at 90 W
  m.tick();
  run_until(kNoon + 7200 + 900, 1.0);  // 14:00-14:15 at 300 W
  const carbon::HourlyMeasurement r = m.end_window("train");

  ASSERT_EQ(r.hours.size(), 3U);
  EXPECT_EQ(r.hours[0].hour, kNoon);
  EXPECT_DOUBLE_EQ(r.hours[0].time.count(), 1800);
  EXPECT_NEAR(r.hours[0].gpu_energy.at(0).value(), 300.0 * 1800, 1e-6);
  EXPECT_NEAR(r.hours[1].gpu_energy.at(1).value(), 90.0 * 3600, 1e-6);
  EXPECT_NEAR(r.hours[2].gpu_energy.at(0).value(), 300.0 * 900, 1e-6);
  EXPECT_NEAR(r.energy.gpu_energy.at(0).value(), 300.0 * 2700 + 90.0 * 3600, 1e-6);

  ASSERT_EQ(r.rates.size(), 1U);
  const carbon::RateResult& c = r.rates[0];
  EXPECT_EQ(c.unit, "gCO2eq");
  ASSERT_TRUE(c.gpu.has_value()) << c.error;
  const double expected =
      (300.0 * 1800 * 100 + 90.0 * 3600 * 200 + 300.0 * 900 * 400) / carbon::kJoulesPerKwh;
  EXPECT_NEAR(c.gpu->at(0), expected, 1e-9);
  EXPECT_NEAR(c.gpu->at(1), expected, 1e-9);
  EXPECT_NEAR(*c.total(), 2 * expected, 1e-9);
  EXPECT_TRUE(c.cpu->empty());
}

TEST_F(HourlyRateMonitorTest, WithoutTicksASliceIsApportionedByTime) {
  auto price = std::make_shared<TableRates>(
      std::map<carbon::UtcHour, double>{{kNoon, 0.10}, {kNoon + 3600, 0.50}}, carbon::kPriceUnit);
  carbon::HourlyRateMonitor m(inventory_, {price}, options());
  for (auto& s : sims_) s->set_load(1.0);
  m.begin_window("w");
  run_until(kNoon + 3600 + 600, 1.0);  // 12:30-13:10, no tick
  const carbon::HourlyMeasurement r = m.end_window("w");
  ASSERT_EQ(r.hours.size(), 2U);
  EXPECT_NEAR(r.hours[0].gpu_energy.at(0).value(), 300.0 * 1800, 1e-6);
  EXPECT_NEAR(r.hours[1].gpu_energy.at(0).value(), 300.0 * 600, 1e-6);
  EXPECT_NEAR(r.rates[0].gpu->at(0),
              (300.0 * 1800 * 0.10 + 300.0 * 600 * 0.50) / carbon::kJoulesPerKwh, 1e-12);
  EXPECT_EQ(r.rates[0].unit, "$");
}

// A clock that moves on by a millisecond each time it is read, as a real one
// does between two device reads on a loaded machine.
class CreepingClock final : public Clock {
 public:
  explicit CreepingClock(Seconds start) : now_(start.count()) {}
  Seconds now() const override { return Seconds(now_.fetch_add(0.001) + 0.001); }
  void sleep_until(Seconds) override {}
  bool wait_until(Seconds, std::stop_token) override { return true; }

 private:
  mutable std::atomic<double> now_;
};

TEST(HourlyRateMonitorReadings, TheHoursAddUpToTheWindowsEnergyExactly) {
  // Fails if the last hour's share comes from a reading of its own, taken a
  // moment apart from the window's: energy x rate then differs from the
  // priced sum (seen as a flaky CLI test under load).
  CreepingClock clock(Seconds(kNoon + 1800));
  device::DeviceInventory inventory;
  auto gpu = std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock, 0);
  gpu->set_load(1.0);
  inventory.gpus.push_back(gpu);
  inventory.gpu_backend = "sim";
  carbon::HourlyRateMonitorOptions o;
  o.energy.clock = &clock;
  o.wall_time = [&clock] { return clock.now().count(); };
  o.start_thread = false;
  carbon::HourlyRateMonitor m(
      inventory, {std::make_shared<carbon::ConstantRate>(400.0, carbon::kCarbonIntensityUnit)}, o);
  m.begin_window("w");
  const carbon::HourlyMeasurement r = m.end_window("w");
  double hours_sum = 0;
  for (const carbon::HourShare& h : r.hours) hours_sum += h.gpu_energy.at(0).value();
  const double whole = r.energy.gpu_energy.at(0).value();
  ASSERT_GT(whole, 0.0);
  EXPECT_NEAR(hours_sum, whole, 1e-12 * whole);
  EXPECT_NEAR(r.rates[0].gpu->at(0), whole / carbon::kJoulesPerKwh * 400.0, 1e-12 * whole);
}

TEST_F(HourlyRateMonitorTest, AProviderFailureKeepsTheEnergy) {
  auto carbon = std::make_shared<TableRates>(std::map<carbon::UtcHour, double>{{kNoon, 100}},
                                             carbon::kCarbonIntensityUnit);
  auto price = std::make_shared<carbon::ConstantRate>(0.2, carbon::kPriceUnit);
  carbon::HourlyRateMonitor m(inventory_, {carbon, price}, options());
  m.begin_window("w");
  run_until(kNoon + 3600 + 60, 1.0);
  m.tick();
  const carbon::HourlyMeasurement r = m.end_window("w");
  EXPECT_GT(r.energy.gpu_energy.at(0).value(), 0);
  ASSERT_EQ(r.rates.size(), 2U);
  EXPECT_FALSE(r.rates[0].gpu.has_value());
  EXPECT_FALSE(r.rates[0].total().has_value());
  EXPECT_THAT(r.rates[0].error, HasSubstr("no rate for 2024-05-01T13:00:00Z"));
  EXPECT_FALSE(r.rates[0].hour_rates[1].has_value());
  EXPECT_EQ(*r.rates[0].hour_rates[0], 100);
  ASSERT_TRUE(r.rates[1].gpu.has_value()) << "the other provider still prices the window";
  EXPECT_NEAR(*r.rates[1].total(),
              r.energy.total_gpu_energy().value() / carbon::kJoulesPerKwh * 0.2, 1e-9);
}

TEST_F(HourlyRateMonitorTest, ConcurrentWindowsAndBadCalls) {
  auto rates = std::make_shared<carbon::ConstantRate>(100, carbon::kCarbonIntensityUnit);
  carbon::HourlyRateMonitor m(inventory_, {rates}, options());
  m.begin_window("a");
  EXPECT_THROW(m.begin_window("a"), Error);
  run_until(kNoon + 2400, 1.0);
  m.begin_window("b");
  run_until(kNoon + 3000, 1.0);
  const auto a = m.end_window("a");
  const auto b = m.end_window("b");
  EXPECT_NEAR(a.energy.gpu_energy.at(0).value(), 300.0 * 1200, 1e-6);
  EXPECT_NEAR(b.energy.gpu_energy.at(0).value(), 300.0 * 600, 1e-6);
  try {
    m.end_window("a");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
  EXPECT_THROW(carbon::HourlyRateMonitor(inventory_, {}, options()), Error);
}

TEST_F(HourlyRateMonitorTest, CarbonAndCostMonitorsUseUpstreamNames) {
  carbon::CarbonEmissionMonitor carbon(
      inventory_, std::make_shared<carbon::ConstantRate>(400, carbon::kCarbonIntensityUnit),
      options());
  carbon::EnergyCostMonitor cost(
      inventory_, std::make_shared<carbon::ConstantRate>(0.25, carbon::kPriceUnit), options());
  carbon.begin_window("x");
  cost.begin_window("x");
  run_until(kNoon + 1800 + 3600, 1.0);  // one hour at 300 W = 0.3 kWh per GPU
  const carbon::CarbonEmissionMeasurement c = carbon.end_window("x");
  const carbon::EnergyCostMeasurement p = cost.end_window("x");
  EXPECT_NEAR(c.gpu_carbon_emission->at(1), 0.3 * 400, 1e-9);
  EXPECT_NEAR(p.gpu_energy_cost->at(0), 0.3 * 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(c.time.count(), 3600);
  EXPECT_EQ(c.hours.size(), 2U);
  EXPECT_TRUE(c.error.empty());
}

// The whole chain: ElectricityMaps over loopback HTTP, a window of several
// hours on the injected clock, with the history and the latest value.
TEST_F(HourlyRateMonitorTest, ElectricityMapsWindowOverSeveralHours) {
  FakeProviderServer server;
  carbon::ElectricityMapsOptions eo;
  eo.latitude = 37.87;
  eo.longitude = -122.26;
  eo.base_url = server.base_url();
  eo.api_token = "";
  eo.now = [this] { return clock_.now().count(); };
  carbon::CarbonEmissionMonitor m(inventory_, std::make_shared<carbon::ElectricityMapsClient>(eo),
                                  options());
  m.begin_window("job");  // 12:30Z
  run_until(kNoon + 3600, 1.0);
  m.monitor().tick();
  run_until(kNoon + 7200, 1.0);
  m.monitor().tick();
  run_until(kNoon + 7200 + 1800, 1.0);  // 14:30Z: the current hour
  const carbon::CarbonEmissionMeasurement r = m.end_window("job");
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.hour_intensity.size(), 3U);
  EXPECT_EQ(*r.hour_intensity[0], 300);  // 12:00Z is history entry 22
  EXPECT_EQ(*r.hour_intensity[1], 310);  // 13:00Z, entry 23
  EXPECT_EQ(*r.hour_intensity[2], 321);  // 14:00Z from /latest
  const double kwh_per_half_hour = 300.0 * 1800 / carbon::kJoulesPerKwh;
  EXPECT_NEAR(r.gpu_carbon_emission->at(0),
              kwh_per_half_hour * 300 + 2 * kwh_per_half_hour * 310 + kwh_per_half_hour * 321,
              1e-9);
  EXPECT_EQ(server.count("/v3/carbon-intensity/history"), 1U);

  // The provider goes down: the next window still has its energy.
  server.script("/v3/carbon-intensity/latest", {500, "{}", {}});
  server.script("/v3/carbon-intensity/history", {500, "{}", {}});
  m.begin_window("later");
  run_until(kNoon + 4 * 3600 + 600, 1.0);  // 14:30 -> 16:10, no tick
  const carbon::CarbonEmissionMeasurement down = m.end_window("later");
  EXPECT_FALSE(down.gpu_carbon_emission.has_value());
  EXPECT_THAT(down.error, HasSubstr("HTTP 500"));
  EXPECT_NEAR(down.gpu_energy.at(0).value(), 300.0 * 6000, 1e-6);
}

TEST_F(HourlyRateMonitorTest, TheThreadSplitsWindowsJustAfterEachHour) {
  auto rates = std::make_shared<TableRates>(
      std::map<carbon::UtcHour, double>{{kNoon, 100}, {kNoon + 3600, 200}},
      carbon::kCarbonIntensityUnit);
  auto o = options();
  o.start_thread = true;
  carbon::HourlyRateMonitor m(inventory_, {rates}, o);
  ASSERT_TRUE(clock_.await_blocked(1)) << "the thread waits for 13:00:00.05";
  for (auto& s : sims_) s->set_load(1.0);
  m.begin_window("w");                   // 12:30 at 300 W
  clock_.set(Seconds(kNoon + 3600.05));  // the thread wakes and splits here
  ASSERT_TRUE(clock_.await_blocked(1)) << "and then waits for the next hour";
  run_until(kNoon + 3600 + 1800, 0.0);  // 13:00:00.05-13:30 idle at 90 W
  const carbon::HourlyMeasurement r = m.end_window("w");
  ASSERT_EQ(r.hours.size(), 2U);
  EXPECT_NEAR(r.hours[0].gpu_energy.at(0).value(), 300.0 * 1800, 1e-3);
  // The split came 50 ms late: those 50 ms at 300 W go to 13:00 by time.
  EXPECT_NEAR(r.hours[1].gpu_energy.at(0).value(), 300.0 * 0.05 + 90.0 * 1799.95, 1e-3);
  m.stop();
  m.stop();
}

TEST_F(HourlyRateMonitorTest, JsonAndCsvLogShapes) {
  auto carbon = std::make_shared<carbon::ConstantRate>(400, carbon::kCarbonIntensityUnit);
  auto price =
      std::make_shared<TableRates>(std::map<carbon::UtcHour, double>{}, carbon::kPriceUnit);
  carbon::HourlyRateMonitor m(inventory_, {carbon, price}, options());
  m.begin_window("w");
  run_until(kNoon + 3600 + 1800, 1.0);  // 12:30 -> 13:30
  const carbon::HourlyMeasurement r = m.end_window("w");

  const auto c = to_json(r.rates[0]);
  EXPECT_EQ(c["unit"], "gCO2eq");
  EXPECT_NEAR(c["gpu"]["1"].get<double>(), 0.3 * 400, 1e-9);
  EXPECT_TRUE(c["error"].is_null());
  const auto p = to_json(r.rates[1]);
  EXPECT_TRUE(p["gpu"].is_null());
  EXPECT_TRUE(p["total"].is_null());
  EXPECT_THAT(p["error"].get<std::string>(), HasSubstr("no rate"));
  const auto hours = carbon::hours_to_json(r);
  ASSERT_EQ(hours.size(), 2U);
  EXPECT_EQ(hours[1]["hour"], "2024-05-01T13:00:00Z");
  EXPECT_EQ(hours[1]["rates"][0], 400);
  EXPECT_TRUE(hours[1]["rates"][1].is_null());

  const std::string path = (std::filesystem::temp_directory_path() /
                            ("zeus_priced_" + std::to_string(getpid()) + ".csv"))
                               .string();
  std::filesystem::remove(path);
  carbon::PricedLog log(path);
  log.append(kNoon + 1800, "w", r);
  log.append(kNoon + 1800, "again, quoted", r);
  const std::string text = read_file(path);
  EXPECT_THAT(text, HasSubstr("start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy,"
                              "gpu0_carbon_gco2eq,gpu1_carbon_gco2eq,total_carbon_gco2eq,"
                              "gpu0_cost_usd,gpu1_cost_usd,total_cost_usd\n"));
  EXPECT_THAT(text, HasSubstr(",\"again, quoted\","));
  EXPECT_THAT(text, HasSubstr(",,,\n")) << "failed provider: empty cells";
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);

  // A log with other columns is refused, not mixed.
  carbon::HourlyRateMonitor one(inventory_, {carbon}, options());
  one.begin_window("x");
  run_until(kNoon + 4 * 3600, 1.0);
  const auto other = one.end_window("x");
  try {
    log.append(kNoon, "x", other);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(read_file(path), text);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace zeus::testing
