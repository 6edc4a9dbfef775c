// The batch-size search (core of the batch-size optimizer) with scripted costs: RNG, cost model,
// pruning walk, Gaussian Thompson sampling, concurrency and state round-trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <vector>

#include "optimizer/batch_size/state_json.h"
#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/optimizer/batch_size/gaussian_ts.h"
#include "zeus/optimizer/batch_size/pruning_explorer.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Joules kInfJ{kInf};
using namespace zeus::literals;

TEST(Rng, SameSeedSameStreamDifferentStreamDiffers) {
  Rng a(7), b(7), c(7, 1), d(8);
  const auto x = a.next_u64();
  EXPECT_EQ(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  EXPECT_NE(x, d.next_u64());
}

TEST(Rng, KnownFirstOutputPinsTheAlgorithm) {
  // Changing the generator or its seeding would silently change every
  // persisted service state and simulation result; this pins both.
  Rng a(1);
  EXPECT_EQ(a.next_u64(), 0xc84411480fd2be99ULL);
  EXPECT_EQ(rng_to_json(a)["algorithm"], "xoshiro256**");
}

TEST(Rng, JsonRoundTripContinuesTheSameStream) {
  Rng a(42);
  for (int i = 0; i < 17; ++i) a.normal();
  const auto text = rng_to_json(a).dump();
  Rng b = rng_from_json(nlohmann::json::parse(text));
  EXPECT_EQ(a, b);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(a.next_u64(), b.next_u64());
    ASSERT_EQ(a.normal(), b.normal());  // bit-exact
  }
}

TEST(Rng, FromJsonRejectsMalformedState) {
  EXPECT_THROW(rng_from_json(nlohmann::json::parse(R"({"algorithm":"pcg64"})")), Error);
  EXPECT_THROW(rng_from_json(nlohmann::json::parse(
                   R"({"algorithm":"xoshiro256**","state":["0x1","0x2","0x3"]})")),
               Error);
  EXPECT_THROW(rng_from_json(nlohmann::json::parse(
                   R"({"algorithm":"xoshiro256**","state":["0x0","0x0","0x0","0x0"]})")),
               Error);
  EXPECT_THROW(rng_from_json(nlohmann::json::parse(
                   R"({"algorithm":"xoshiro256**","state":["0xzz","0x2","0x3","0x4"]})")),
               Error);
}

TEST(Rng, UniformIntStaysInRangeAndCoversIt) {
  Rng r(3);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const auto v = r.uniform_int(7);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(r.uniform_int(1), 0u);
}

TEST(Rng, NormalHasUnitMomentsOverManyDraws) {
  Rng r(11);
  double s = 0, ss = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double z = r.normal();
    s += z;
    ss += z * z;
  }
  EXPECT_NEAR(s / n, 0.0, 0.03);
  EXPECT_NEAR(ss / n, 1.0, 0.03);
}

TEST(Cost, PythonFloorDivisionMatchesCPython) {
  EXPECT_EQ(python_floor_div(7.0, 1.0), 7.0);
  EXPECT_EQ(python_floor_div(0.7, 0.1), 6.0);  // 0.7/0.1 = 6.999...
  EXPECT_EQ(python_floor_div(1.0, 0.1), 9.0);  // 1/0.1 rounds to 10 but the floor is 9
  EXPECT_EQ(python_floor_div(0.5, 2.0), 0.0);
}

TEST(Cost, EpochsWithinBoundCapsAtMaxEpochsAndFloors) {
  EXPECT_EQ(epochs_within_bound(kInfJ, 10_J, 16), 16.0);
  EXPECT_EQ(epochs_within_bound(95_J, 10_J, 16), 9.0);
  EXPECT_EQ(epochs_within_bound(1000_J, 10_J, 16), 16.0);
  EXPECT_EQ(epochs_within_bound(5_J, 10_J, 16), 0.0);
}

TEST(Cost, UpperBoundIsInfiniteWithoutAMinimumOrBeta) {
  EXPECT_EQ(cost_upper_bound(2.0, kInfJ), kInfJ);
  EXPECT_EQ(cost_upper_bound(kInf, 3_J), kInfJ);
  EXPECT_EQ(cost_upper_bound(2.0, 3_J), 6_J);
  EXPECT_TRUE(exceeds_cost_bound(6.5_J, 6_J));
  EXPECT_FALSE(exceeds_cost_bound(6_J, 6_J));
}

TEST(Cost, EpochCostIsEtaAvgPowerPlusMaxPowerTimesTime) {
  EXPECT_DOUBLE_EQ(epoch_cost(0.5, Watts(100), Seconds(10), Watts(250)).value(),
                   (0.5 * 100 + 0.5 * 250) * 10);
}

TEST(Cost, JitChoiceTakesTheCheapestEpochAndTiesGoHigher) {
  // At eta = 1 cost = energy per epoch; 150 W and 200 W tie at 1500 J.
  std::vector<PowerLimitEpoch> e = {{Milliwatts(250000), Seconds(8), Watts(250)},
                                    {Milliwatts(200000), Seconds(10), Watts(150)},
                                    {Milliwatts(150000), Seconds(12.5), Watts(120)}};
  EXPECT_EQ(choose_power_limit(1.0, e), Milliwatts(200000));
  // At eta = 0 cost = MaxPower * time: the fastest.
  EXPECT_EQ(choose_power_limit(0.0, e), Milliwatts(250000));
  EXPECT_THROW(choose_power_limit(1.5, e), Error);
}

// Drives the explorer sequentially with a cost per batch size; returns the walk.
std::vector<int> walk(PruningExplorer& p, const std::map<int, std::pair<double, bool>>& outcome,
                      int max_steps = 100) {
  std::vector<int> order;
  std::int64_t id = 1;
  for (int i = 0; i < max_steps; ++i) {
    const auto s = p.next();
    if (s.action == PruningExplorer::Action::kDone) break;
    EXPECT_EQ(s.action, PruningExplorer::Action::kExplore);
    order.push_back(s.batch_size);
    p.dispatched(id, s.batch_size);
    const auto& [cost, ok] = outcome.at(s.batch_size);
    p.finished(id++, Joules(cost), ok);
  }
  return order;
}

TEST(Pruning, WalksDownThenUpThenRestartsFromTheCheapest) {
  PruningExplorer p({8, 16, 32, 64, 128}, 32, 2);
  const auto order = walk(
      p, {{8, {5, true}}, {16, {3, true}}, {32, {4, true}}, {64, {6, true}}, {128, {7, true}}});
  // Round 1 from 32: down 32,16,8 then up 64,128. Round 2 from the cheapest, 16.
  EXPECT_EQ(order, (std::vector<int>{32, 16, 8, 64, 128, 16, 8, 32, 64, 128}));
  EXPECT_EQ(p.survivors(), (std::vector<int>{8, 16, 32, 64, 128}));
}

TEST(Pruning, StopsADirectionAtTheFirstFailure) {
  PruningExplorer p({8, 16, 32, 64, 128}, 32, 1);
  const auto order = walk(
      p, {{8, {1, true}}, {16, {9, false}}, {32, {4, true}}, {64, {6, false}}, {128, {1, true}}});
  EXPECT_EQ(order, (std::vector<int>{32, 16, 64}));  // 8 and 128 are never tried
  EXPECT_EQ(p.survivors(), (std::vector<int>{32}));
}

TEST(Pruning, SecondRoundDropsSurvivorsThatFailAgain) {
  PruningExplorer p({16, 32, 64}, 32, 2);
  std::map<int, int> seen;
  std::int64_t id = 1;
  for (;;) {
    const auto s = p.next();
    if (s.action == PruningExplorer::Action::kDone) break;
    p.dispatched(id, s.batch_size);
    const int n = ++seen[s.batch_size];
    // 64 converges in round 1 but not in round 2.
    const bool ok = !(s.batch_size == 64 && n == 2);
    p.finished(id++, Joules(s.batch_size == 16 ? 1.0 : 2.0), ok);
  }
  EXPECT_EQ(p.survivors(), (std::vector<int>{16, 32}));
}

TEST(Pruning, ZeroRoundsKeepsEveryBatchSize) {
  PruningExplorer p({16, 32, 64}, 32, 0);
  EXPECT_EQ(p.next().action, PruningExplorer::Action::kDone);
  EXPECT_EQ(p.survivors(), (std::vector<int>{16, 32, 64}));
}

TEST(Pruning, RejectsADefaultOutsideTheList) {
  EXPECT_THROW(PruningExplorer({16, 32}, 48, 2), Error);
  EXPECT_THROW(PruningExplorer({}, 48, 2), Error);
}

TEST(GaussianTs, FitUsesPopulationVarianceAndFlatPrior) {
  GaussianThompsonSampling ts({32, 64}, {});
  const std::vector<Joules> costs = {10_J, 14_J};
  ts.fit(32, costs);
  const auto& a = ts.arms()[0];
  EXPECT_DOUBLE_EQ(a.mean, -12.0);
  EXPECT_DOUBLE_EQ(a.reward_precision, 1.0 / 4.0);  // var = 4 (ddof 0)
  EXPECT_DOUBLE_EQ(a.precision, 2.0 / 4.0);
}

TEST(GaussianTs, ZeroVarianceGivesInfinitePrecisionAndDeterministicDraws) {
  GaussianThompsonSampling ts({32, 64}, {});
  const std::vector<Joules> same = {5_J, 5_J}, worse = {6_J, 6_J};
  ts.fit(32, same);
  ts.fit(64, worse);
  EXPECT_TRUE(std::isinf(ts.arms()[0].precision));
  EXPECT_EQ(ts.arms()[0].mean, -5.0);
  Rng r(1);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(ts.predict(r), 32);
}

TEST(GaussianTs, PriorShrinksTheMean) {
  GaussianTsOptions o;
  o.prior_mean = 0.0;
  o.prior_precision = 1.0;
  GaussianThompsonSampling ts({32}, o);
  const std::vector<Joules> costs = {1_J, 3_J};  // rewards -1, -3: var 1, sum -4
  ts.fit(32, costs);
  EXPECT_DOUBLE_EQ(ts.arms()[0].precision, 1.0 + 2.0);
  EXPECT_DOUBLE_EQ(ts.arms()[0].mean, -4.0 / 3.0);
}

TEST(GaussianTs, WindowKeepsOnlyTheMostRecentObservations) {
  GaussianTsOptions o;
  o.window_size = 3;
  GaussianThompsonSampling ts({32}, o);
  for (double c : {100.0, 100.0, 1.0, 2.0, 3.0}) ts.observe(32, Joules(c));
  const auto& a = ts.arms()[0];
  ASSERT_EQ(a.rewards.size(), 3u);
  EXPECT_EQ(a.rewards.front(), -1_J);
  EXPECT_DOUBLE_EQ(a.mean, -2.0);
}

TEST(GaussianTs, ExploresUnderObservedArmsFirst) {
  GaussianThompsonSampling ts({32, 64, 128}, {});
  const std::vector<Joules> two = {1_J, 2_J}, one = {50_J};
  ts.fit(32, two);
  ts.fit(64, two);
  ts.fit(128, one);  // needs a second observation despite its high cost
  Rng r(5);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(ts.predict(r), 128);
}

TEST(GaussianTs, PrefersTheCheaperArmWhenWellSeparated) {
  GaussianThompsonSampling ts({32, 64}, {});
  const std::vector<Joules> cheap = {10_J, 11_J, 10_J, 11_J}, dear = {20_J, 21_J, 20_J, 21_J};
  ts.fit(32, cheap);
  ts.fit(64, dear);
  Rng r(9);
  int n32 = 0;
  for (int i = 0; i < 200; ++i) n32 += ts.predict(r) == 32;
  EXPECT_EQ(n32, 200);
}

BatchSizeSearchOptions small_options() {
  BatchSizeSearchOptions o;
  o.batch_sizes = {16, 32, 64, 128};
  o.default_batch_size = 64;
  o.seed = 77;
  return o;
}

// Cost with noise, cheapest at 32 but 64 close behind.
Joules scripted_cost(int bs, Rng& noise) {
  const double base = bs == 16 ? 14 : bs == 32 ? 10 : bs == 64 ? 10.5 : 13;
  return Joules(base + noise.normal());
}

void drive(BatchSizeSearch& p, Rng& noise, int n, std::vector<int>* chosen = nullptr) {
  for (int i = 0; i < n; ++i) {
    const auto t = p.next_trial();
    if (chosen) chosen->push_back(t.batch_size);
    p.report(t.id, scripted_cost(t.batch_size, noise), true);
  }
}

TEST(BatchSizeSearch, PrunesThenSamplesAmongSurvivors) {
  BatchSizeSearch p(small_options());
  Rng noise(1);
  std::vector<int> chosen;
  drive(p, noise, 8, &chosen);  // two full rounds over four sizes
  EXPECT_EQ(std::vector<int>(chosen.begin(), chosen.begin() + 4),
            (std::vector<int>{64, 32, 16, 128}));
  EXPECT_EQ(p.stage(), SearchStage::kPruning);
  const auto t = p.next_trial();
  EXPECT_EQ(p.stage(), SearchStage::kSampling);
  EXPECT_EQ(t.kind, TrialKind::kSampling);
  EXPECT_EQ(p.bandit()->arms().size(), 4u);
  EXPECT_EQ(p.bandit()->arms()[1].rewards.size(), 2u);
}

TEST(BatchSizeSearch, ConcurrentJobDuringPruningGetsTheBestKnownBatchSize) {
  BatchSizeSearch p(small_options());
  const auto a = p.next_trial();  // exploring 64
  const auto b = p.next_trial();  // the walk waits on 64
  EXPECT_EQ(a.kind, TrialKind::kExploration);
  EXPECT_EQ(b.kind, TrialKind::kConcurrent);
  EXPECT_EQ(b.batch_size, 64);
  p.report(a.id, 10_J, true);
  const auto c = p.next_trial();
  EXPECT_EQ(c.kind, TrialKind::kExploration);
  EXPECT_EQ(c.batch_size, 32);
  p.report(c.id, 5_J, true);
  const auto d = p.next_trial();  // waits? no: 16 is next
  EXPECT_EQ(d.batch_size, 16);
  const auto e = p.next_trial();  // waits on 16: best known is now 32
  EXPECT_EQ(e.kind, TrialKind::kConcurrent);
  EXPECT_EQ(e.batch_size, 32);
  p.report(b.id, 9_J, true);  // out-of-order report of the concurrent job is accepted
}

TEST(BatchSizeSearch, ConcurrentJobsInTheSamplingStageSpreadOverArms) {
  BatchSizeSearch p(small_options());
  // Two rounds of scripted costs: 32 and 64 tie on average, 16 and 128 are dear.
  std::map<int, std::vector<double>> costs = {
      {16, {20, 22}}, {32, {10, 13}}, {64, {11, 12}}, {128, {20, 22}}};
  std::map<int, std::size_t> used;
  for (int i = 0; i < 8; ++i) {
    const auto t = p.next_trial();
    p.report(t.id, Joules(costs[t.batch_size][used[t.batch_size]++]), true);
  }
  std::set<int> dispatched;
  std::vector<Trial> open;
  for (int i = 0; i < 12; ++i) {
    open.push_back(p.next_trial());  // none reports before the next starts
    dispatched.insert(open.back().batch_size);
  }
  EXPECT_EQ(open.front().kind, TrialKind::kSampling);
  EXPECT_GE(dispatched.size(), 2u);  // independent draws, not one repeated choice
  EXPECT_EQ(p.num_in_flight(), 12u);
  for (const auto& t : open) p.report(t.id, 11_J, true);
}

TEST(BatchSizeSearch, CancelledExplorationIsIssuedAgain) {
  BatchSizeSearch p(small_options());
  const auto a = p.next_trial();
  p.cancel(a.id);
  const auto b = p.next_trial();
  EXPECT_EQ(b.kind, TrialKind::kExploration);
  EXPECT_EQ(b.batch_size, a.batch_size);
  EXPECT_THROW(p.report(a.id, 1_J, true), Error);
  p.report(b.id, 1_J, true);
  EXPECT_THROW(p.report(b.id, 1_J, true), Error);  // twice
}

TEST(BatchSizeSearch, StateRoundTripsBitExactlyAndContinuesIdentically) {
  for (int steps : {0, 3, 8, 30}) {
    BatchSizeSearch a(small_options());
    Rng noise(3);
    drive(a, noise, steps);
    const auto pending = a.next_trial();  // one in flight across the save
    const std::string saved = search_to_json(a).dump();
    BatchSizeSearch b = search_from_json(nlohmann::json::parse(saved));
    EXPECT_EQ(search_to_json(b).dump(), saved) << "steps " << steps;
    Rng noise_a = noise, noise_b = noise;
    a.report(pending.id, 12_J, true);
    b.report(pending.id, 12_J, true);
    std::vector<int> ca, cb;
    drive(a, noise_a, 40, &ca);
    drive(b, noise_b, 40, &cb);
    EXPECT_EQ(ca, cb) << "steps " << steps;
    EXPECT_EQ(search_to_json(a).dump(), search_to_json(b).dump());
  }
}

TEST(BatchSizeSearch, StateWithInfinitePrecisionRoundTrips) {
  auto o = small_options();
  o.num_pruning_rounds = 1;
  BatchSizeSearch a(o);
  for (int i = 0; i < 12; ++i) {
    const auto t = a.next_trial();
    a.report(t.id, 7_J, true);  // identical costs: zero variance
  }
  ASSERT_EQ(a.stage(), SearchStage::kSampling);
  EXPECT_TRUE(std::isinf(a.bandit()->arms()[0].precision));
  const auto saved = search_to_json(a).dump();
  EXPECT_NE(saved.find("\"inf\""), std::string::npos);
  EXPECT_EQ(search_to_json(search_from_json(nlohmann::json::parse(saved))).dump(), saved);
}

TEST(BatchSizeSearch, FromJsonRejectsGarbage) {
  EXPECT_THROW(search_from_json(nlohmann::json::parse("{}")), Error);
  auto j = search_to_json(BatchSizeSearch(small_options()));
  j["stage"] = "bogus";
  EXPECT_THROW(search_from_json(j), Error);
  j = search_to_json(BatchSizeSearch(small_options()));
  j["options"]["seed"] = "x";
  EXPECT_THROW(search_from_json(j), Error);
}

TEST(BatchSizeSearch, RejectsBadOptions) {
  auto o = small_options();
  o.default_batch_size = 48;
  EXPECT_THROW(BatchSizeSearch{o}, Error);
  o = small_options();
  o.mab.window_size = -1;
  EXPECT_THROW(BatchSizeSearch{o}, Error);
}

TEST(BatchSizeSearch, MinCostCountsUnconvergedRunsAsTheServiceDoes) {
  BatchSizeSearch p(small_options());
  EXPECT_FALSE(p.min_cost().has_value());
  EXPECT_EQ(p.min_cost_batch_size(), 64);
  const auto a = p.next_trial();
  p.report(a.id, 3_J, false);  // did not converge, yet sets the minimum (zeus-inventory §4.3)
  EXPECT_EQ(p.min_cost(), 3_J);
  const auto b = p.next_trial();
  p.report(b.id, 5_J, true);
  EXPECT_EQ(p.min_cost(), 3_J);
  EXPECT_EQ(p.min_cost_batch_size(), a.batch_size);
}

TEST(BatchSizeSearch, RoundWithoutSurvivorFailsOnlyWhenAsked) {
  for (bool fail : {false, true}) {
    auto o = small_options();
    o.fail_on_round_without_survivor = fail;
    BatchSizeSearch p(o);
    // 64 fails (down stops), 128 fails (up stops): round 1 has no survivor.
    for (int i = 0; i < 2; ++i) {
      const auto t = p.next_trial();
      p.report(t.id, 10_J, false);
    }
    EXPECT_EQ(p.explorer().round_without_survivor(), 0);
    if (fail) {
      const auto before = search_to_json(p).dump();
      try {
        p.next_trial();
        ADD_FAILURE();
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
        EXPECT_NE(std::string(e.what()).find("round 1"), std::string::npos);
      }
      EXPECT_EQ(search_to_json(p).dump(), before);  // unchanged
    } else {
      EXPECT_NO_THROW(p.next_trial());
    }
  }
}

TEST(StopRule, JudgesEpochsLikeTheService) {
  StopRule r;
  r.beta = 2.0;
  r.max_epochs = 5;
  r.target_metric = 0.5;
  // No minimum yet: the bound is infinite.
  auto v = judge_epoch(r, kInfJ, 1e9_J, 0.1, 1);
  EXPECT_EQ(v.end, TrialEnd::kContinue);
  EXPECT_EQ(judge_epoch(r, 10_J, 15_J, 0.6, 2).end, TrialEnd::kConverged);
  EXPECT_EQ(judge_epoch(r, 10_J, 20_J, 0.1, 2).end, TrialEnd::kContinue);  // bound is inclusive
  EXPECT_EQ(judge_epoch(r, 10_J, 21_J, 0.1, 2).end, TrialEnd::kOverCostBound);
  EXPECT_EQ(judge_epoch(r, 10_J, 21_J, 0.9, 2).end, TrialEnd::kOverCostBound);  // reached, too dear
  EXPECT_EQ(judge_epoch(r, 10_J, 15_J, 0.1, 5).end, TrialEnd::kMaxEpochs);
  r.higher_is_better = false;
  EXPECT_EQ(judge_epoch(r, 10_J, 15_J, 0.4, 1).end, TrialEnd::kConverged);
  r.beta = kInf;
  EXPECT_EQ(judge_epoch(r, 10_J, 1e9_J, 0.9, 1).end, TrialEnd::kContinue);
}

}  // namespace
}  // namespace zeus::batch_size
