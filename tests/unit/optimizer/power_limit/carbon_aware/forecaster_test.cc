#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

constexpr std::int64_t kT0 = 1'672'531'200;  // 2023-01-01T00:00:00Z

// A series that follows the linear model exactly: y_i = 50 + 20 sin + 10 cos + 0.5 y_{i-1}.
std::vector<double> linear_series(int n, std::int64_t step) {
  std::vector<double> y = {300.0};
  for (int i = 1; i < n; ++i) {
    const auto f = carbon_aware::forecast_features(kT0 + i * step, y.back());
    y.push_back(50 + 20 * f[0] + 10 * f[1] + 0.5 * f[2]);
  }
  return y;
}

TEST(Forecaster, FeaturesAreUtcTimeOfDay) {
  const auto f = carbon_aware::forecast_features(kT0 + 6 * 3600, 42.0);
  EXPECT_NEAR(f[0], 1.0, 1e-12);  // 06:00 is a quarter day
  EXPECT_NEAR(f[1], 0.0, 1e-12);
  EXPECT_EQ(f[2], 42.0);
  EXPECT_NEAR(carbon_aware::forecast_features(kT0 + 86400 + 6 * 3600, 0)[0], 1.0, 1e-12);
}

TEST(Forecaster, PersistenceAndItsMape) {
  carbon_aware::PersistenceForecaster p;
  EXPECT_FALSE(p.mape());
  p.fit(std::vector<double>{100, 110, 99}, kT0, 3600);
  EXPECT_EQ(p.predict(kT0, 123.0), 123.0);
  // |100-110|/110 and |110-99|/99, averaged, in percent.
  EXPECT_NEAR(*p.mape(), 100.0 * (10.0 / 110 + 11.0 / 99) / 2, 1e-9);
}

TEST(Forecaster, LinearRecoversAnExactModel) {
  const auto y = linear_series(25, 3600);
  carbon_aware::LinearForecaster lin;
  lin.fit(y, kT0, 3600);
  ASSERT_TRUE(lin.fitted());
  EXPECT_NEAR(lin.coefficients()[0], 50, 1e-6);
  EXPECT_NEAR(lin.coefficients()[1], 20, 1e-6);
  EXPECT_NEAR(lin.coefficients()[2], 10, 1e-6);
  EXPECT_NEAR(lin.coefficients()[3], 0.5, 1e-8);
  EXPECT_NEAR(*lin.mape(), 0.0, 1e-6);
  const double next = lin.predict(kT0 + 25 * 3600, y.back());
  EXPECT_NEAR(next,
              50 + 20 * std::sin(std::numbers::pi / 12) + 10 * std::cos(std::numbers::pi / 12) +
                  0.5 * y.back(),
              1e-6);
}

TEST(Forecaster, LinearFallsBackToPersistence) {
  carbon_aware::LinearForecaster lin;
  lin.fit(linear_series(10, 3600), kT0, 3600);  // less than a day
  EXPECT_FALSE(lin.fitted());
  EXPECT_EQ(lin.predict(kT0, 77.0), 77.0);
  lin.fit(std::vector<double>(48, 200.0), kT0, 1800);  // constant: singular
  EXPECT_FALSE(lin.fitted());
  EXPECT_EQ(lin.predict(kT0, 77.0), 77.0);
}

TEST(Forecaster, OracleReturnsTheTruth) {
  const carbon_aware::GridSignal truth(carbon_aware::SignalKind::kCarbon, "gCO2/kWh", kT0, 3600,
                                       {5, 6, 7}, "t");
  carbon_aware::OracleForecaster o(truth);
  EXPECT_EQ(o.predict(kT0 + 3600, 0.0), 6.0);
  EXPECT_THROW(o.predict(kT0 + 3 * 3600, 0.0), Error);
  EXPECT_THROW(carbon_aware::make_forecaster("oracle"), Error);
  EXPECT_THROW(carbon_aware::make_forecaster("arima"), Error);
}

TEST(Forecaster, SvrOnTheChaseTrace) {
  if (!carbon_aware::SvrForecaster::available()) {
    EXPECT_THROW(carbon_aware::SvrForecaster(), Error);
    GTEST_SKIP() << "built without libsvm";
  }
  // The released code's setting: fit on 48 points (24 h of 30-min data), then
  // forecast one step ahead from the true previous value.
  const carbon_aware::GridSignal s = carbon_aware::read_signal_csv(
      std::string(ZEUS_SOURCE_DIR) + "/data/grid-signals/miso-carbon-intensity-2022-10-chase.csv");
  const auto v = s.values();
  carbon_aware::SvrForecaster svr;
  svr.fit(v.subspan(12, 48), s.sample_start(12), 1800);
  ASSERT_TRUE(svr.fitted());
  ASSERT_TRUE(svr.mape());
  EXPECT_LT(*svr.mape(), 2.0);
  // Out of sample over the rest of the trace: close to the paper's ~1 % class.
  double sum = 0;
  int n = 0;
  for (std::size_t i = 61; i < v.size(); ++i) {
    const double f = svr.predict(s.sample_start(i), v[i - 1]);
    sum += std::abs(f - v[i]) / v[i];
    ++n;
  }
  EXPECT_LT(100.0 * sum / n, 3.0);
  // Unscaled features with gamma 1e-4: the RBF sees mostly the previous value,
  // so a forecast moves with it.
  EXPECT_LT(svr.predict(s.sample_start(70), 560.0), svr.predict(s.sample_start(70), 660.0));
}

}  // namespace
}  // namespace zeus
