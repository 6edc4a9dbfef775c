#include "zeus/optimizer/power_limit/carbon_aware/chase.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "zeus/util/error.h"

namespace zeus {
namespace {

// ResNet-50/ImageNet, batch 128, on an A40 (data/zeus-traces/summary_power_a40.csv,
// adadelta): per-epoch energy (time x average power) and time at each limit.
std::vector<power_limit::PowerLimitMeasurement> a40_resnet50() {
  const double rows[][3] = {{300, 3739.5, 244.26058546458663},  {275, 3777.29, 230.7632940180274},
                            {250, 3804.21, 216.21927459289037}, {225, 3862.42, 198.38104893564224},
                            {200, 3992.39, 179.22631615034337}, {175, 4463.24, 160.86341752430866},
                            {150, 6147.46, 144.2607231260645},  {125, 9375.09, 125.06183716668464},
                            {100, 11009.39, 114.70916054489874}};
  std::vector<power_limit::PowerLimitMeasurement> out;
  for (const auto& r : rows) {
    out.push_back(
        {Milliwatts(static_cast<std::int64_t>(r[0]) * 1000), Joules(r[1] * r[2]), Seconds(r[1])});
  }
  return out;
}

// The argmin of the paper's eq. 6 written out, independent of the selectors.
Milliwatts paper_argmin(const std::vector<power_limit::PowerLimitMeasurement>& m, double eta,
                        double ci, double ci_max, double max_power) {
  Milliwatts best{0};
  double best_cost = INFINITY;
  for (const auto& x : m) {  // highest limit first: ties keep it
    const double avg_power = x.energy.value() / x.time.count();
    const double cost =
        (eta * avg_power * ci + (1 - eta) * max_power * ci_max) / (1.0 / x.time.count());
    if (cost < best_cost) {
      best_cost = cost;
      best = x.power_limit;
    }
  }
  return best;
}

struct Vector {
  double eta, ci, eta_eff;
  int watts;
};

TEST(Chase, ReferenceVectorsMatchEtaEffAndChoice) {
  // docs/reference table (MaxPower 300 W, CImax 750 g/kWh).
  const Vector vectors[] = {
      {0.25, 200, 0.0816, 300},  {0.25, 400, 0.1509, 300}, {0.25, 530, 0.1906, 250},
      {0.25, 620, 0.2160, 250},  {0.25, 680, 0.2321, 250}, {0.25, 750, 0.2500, 225},
      {0.25, 1000, 0.3077, 225}, {0.5, 200, 0.2105, 250},  {0.5, 400, 0.3478, 225},
      {0.5, 530, 0.4141, 225},   {0.5, 620, 0.4526, 200},  {0.5, 680, 0.4755, 200},
      {0.5, 750, 0.5, 200},      {0.5, 1000, 0.5714, 200}};
  const auto m = a40_resnet50();
  for (const auto& v : vectors) {
    const carbon_aware::ChasePolicy chase(v.eta, 750.0);
    const auto choice = chase.choose(m, v.ci);
    EXPECT_NEAR(choice.eta_eff, v.eta_eff, 5e-5) << v.eta << " " << v.ci;
    EXPECT_NEAR(carbon_aware::chase_eta_eff(v.eta, v.ci, 750.0), v.eta_eff, 5e-5);
    EXPECT_EQ(choice.power_limit, Milliwatts(v.watts * 1000)) << v.eta << " " << v.ci;
  }
}

TEST(Chase, ReferenceCostValues) {
  const auto m = a40_resnet50();
  const carbon_aware::ChasePolicy chase(0.25, 750.0);
  EXPECT_NEAR(chase.cost(m[0], 620, Watts(300)), 7.7262e8, 5e4);  // 300 W
  EXPECT_NEAR(chase.cost(m[2], 620, Watts(300)), 7.6945e8, 5e4);  // 250 W, the optimum
}

TEST(Chase, IdentityWithZeusCostOfEtaEff) {
  // Chase's choice == ZeusCost(eta_eff)'s == the paper's eq. 6 argmin, for
  // random profiles, knobs and signals (1 and 4 GPUs).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<power_limit::PowerLimitMeasurement> m;
    double t = 100.0;
    for (int w = 300; w >= 100; w -= 25) {
      t *= 1.0 + 0.3 * u(rng) * u(rng);
      const double power = w * (0.6 + 0.4 * u(rng));
      m.push_back({Milliwatts(w * 1000), Joules(power * t), Seconds(t)});
    }
    const int world = trial % 2 == 0 ? 1 : 4;
    const double eta = u(rng);
    const double ci_max = 50 + 900 * u(rng);
    const double ci = 1200 * u(rng);
    const carbon_aware::ChasePolicy chase(eta, ci_max, world);
    const auto choice = chase.choose(m, ci);
    EXPECT_EQ(choice.power_limit, power_limit::ZeusCostSelector(choice.eta_eff, world).select(m));
    EXPECT_EQ(choice.power_limit, paper_argmin(m, eta, ci, ci_max, 300.0 * world));
  }
}

TEST(Chase, NegativePriceRunsFast) {
  const auto m = a40_resnet50();
  const carbon_aware::ChasePolicy chase(0.25, 0.5);
  // A slightly negative price: eta_eff < 0, cheaper to burn energy: the top limit.
  const auto mild = chase.choose(m, -0.05);
  EXPECT_LT(mild.eta_eff, 0.0);
  EXPECT_EQ(mild.power_limit, Milliwatts(300000));
  EXPECT_EQ(mild.power_limit, paper_argmin(m, 0.25, -0.05, 0.5, 300));
  // So negative that k <= 0: no knob, but still the paper's argmin.
  const auto extreme = chase.choose(m, -10.0);
  EXPECT_TRUE(std::isnan(extreme.eta_eff));
  EXPECT_EQ(extreme.power_limit, paper_argmin(m, 0.25, -10.0, 0.5, 300));
}

TEST(Chase, RejectsBadParameters) {
  EXPECT_THROW(carbon_aware::ChasePolicy(1.5, 750), Error);
  EXPECT_THROW(carbon_aware::ChasePolicy(0.5, 0.0), Error);
  EXPECT_THROW(carbon_aware::ChasePolicy(0.5, NAN), Error);
  EXPECT_THROW(carbon_aware::ChasePolicy(0.5, 750, 0), Error);
  EXPECT_THROW(carbon_aware::ChasePolicy(0.5, 750).choose({}, 500), Error);
  EXPECT_THROW(carbon_aware::chase_eta_eff(0.5, -1.0, 1.0), Error);  // k == 0
}

}  // namespace
}  // namespace zeus
