// The live Chase controller on simulated GPUs: an injected clock, a scripted
// hourly signal, and a source that fails on demand.
#include "zeus/optimizer/power_limit/carbon_aware/chase_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "../test_support.h"
#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/optimizer/power_limit/carbon_aware/provider_source.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus {
namespace {

using testing::SimRig;

constexpr std::int64_t kT0 = 1'704'067'200;  // 2024-01-01T00:00:00Z
constexpr std::int64_t kHour = 3600;
constexpr double kLow = 100.0, kHigh = 900.0;

// 48 h of history at a flat 500 g/kWh, then hours alternating low, high, ...
carbon_aware::GridSignal scripted() {
  std::vector<double> v(48, 500.0);
  for (int h = 0; h < 48; ++h) v.push_back(h % 2 == 0 ? kLow : kHigh);
  return carbon_aware::GridSignal(carbon_aware::SignalKind::kCarbon, "gCO2/kWh", kT0 - 48 * kHour,
                                  kHour, v, "scripted");
}

// A source that fails for the periods starting in `down`.
class FlakySource final : public carbon_aware::SignalSource {
 public:
  explicit FlakySource(carbon_aware::GridSignal s) : inner_(std::move(s)) {}
  double value(std::int64_t start, std::int64_t period) override {
    if (down.count(start)) throw_error(ErrorCode::kIo, "provider unreachable (simulated)");
    return inner_.value(start, period);
  }
  carbon_aware::SignalKind kind() const override { return carbon_aware::SignalKind::kCarbon; }
  std::string description() const override { return "flaky"; }
  std::set<std::int64_t> down;

 private:
  carbon_aware::GridSignalSource inner_;
};

power_limit::GlobalPowerLimitOptimizerOptions small_options() {
  power_limit::GlobalPowerLimitOptimizerOptions o;
  o.wait_steps = 1;
  o.warmup_steps = 2;
  o.profile_steps = 3;
  o.pl_step = Watts(100.0);  // 300, 200, 100 W
  return o;
}

struct Rig {
  SimRig sim;
  power_limit::GlobalPowerLimitOptimizer opt{*sim.monitor, small_options()};
  FlakySource source{scripted()};
  carbon_aware::ChaseController chase;
  explicit Rig(double eta = 0.9, int refit_periods = 0, int check_steps = 1)
      : chase(opt, source, [&] {
          carbon_aware::ChaseControllerOptions o;
          o.eta = eta;
          o.refit_periods = refit_periods;
          o.check_steps = check_steps;
          o.period_s = kHour;
          o.signal_max = kHigh;
          o.unix_now = [this] { return static_cast<double>(kT0) + sim.clock.now().count(); };
          return o;
        }()) {}
  void step() {
    chase.on_step_begin();
    sim.step(50.0);
  }
  // Moves the clock to `unix` (forward) and runs one step there.
  void step_at(std::int64_t unix) {
    sim.clock.set(Seconds(static_cast<double>(unix - kT0)));
    step();
  }
  Milliwatts gpu_limit() { return sim.sims[0]->power_limit(); }
};

TEST(ChaseController, SwitchesLimitsAtPeriodBoundariesFromTheStoredProfile) {
  Rig rig;
  for (int i = 0; i < 1000 && !rig.opt.done(); ++i) rig.step();
  ASSERT_TRUE(rig.opt.done());
  ASSERT_LT(rig.sim.clock.now().count(), 1800.0) << "profiling should end within the first hour";
  const carbon_aware::ChasePolicy policy(0.9, kHigh);
  const Milliwatts fast = policy.choose(rig.opt.measurements(), kLow).power_limit;
  const Milliwatts slow = policy.choose(rig.opt.measurements(), kHigh).power_limit;
  ASSERT_LT(slow, fast) << "the scripted signal must make the choices differ";
  const auto measured = rig.opt.measurements().size();

  rig.step();  // the first step after profiling decides at once
  ASSERT_EQ(rig.chase.decisions().size(), 1u);
  const auto& d0 = rig.chase.decisions()[0];
  EXPECT_EQ(d0.period_start_utc, kT0);
  EXPECT_EQ(d0.signal_seen, 500.0);  // persistence: the last completed hour
  EXPECT_EQ(d0.forecast, 500.0);
  EXPECT_NEAR(d0.eta_eff, 0.9 * 500 / (0.9 * 500 + 0.1 * kHigh), 1e-12);
  EXPECT_EQ(rig.gpu_limit(), d0.power_limit);

  rig.step_at(kT0 + 3000);  // same hour: no new decision
  EXPECT_EQ(rig.chase.decisions().size(), 1u);

  // Hour 1 follows a low hour (persistence forecasts low: run fast), hour 2 a
  // high one (slow down); the GPU follows at each boundary, not before.
  rig.step_at(kT0 + kHour + 5);
  ASSERT_EQ(rig.chase.decisions().size(), 2u);
  EXPECT_EQ(rig.chase.decisions()[1].period_start_utc, kT0 + kHour);
  EXPECT_EQ(rig.chase.decisions()[1].forecast, kLow);
  EXPECT_EQ(rig.gpu_limit(), fast);
  rig.step_at(kT0 + 2 * kHour - 1);
  EXPECT_EQ(rig.gpu_limit(), fast);
  rig.step_at(kT0 + 2 * kHour);
  ASSERT_EQ(rig.chase.decisions().size(), 3u);
  EXPECT_EQ(rig.chase.decisions()[2].forecast, kHigh);
  EXPECT_EQ(rig.gpu_limit(), slow);
  EXPECT_EQ(rig.opt.measurements().size(), measured) << "no re-profiling";

  const std::string csv = rig.chase.decisions_csv();
  EXPECT_THAT(csv,
              ::testing::StartsWith("period_start_utc,signal_seen,forecast,eta_eff,power_limit_w\n"
                                    "2024-01-01T00:00:00Z,500,500,"));
  EXPECT_THAT(csv, ::testing::HasSubstr("2024-01-01T02:00:00Z,900,900,0.9,"));
}

TEST(ChaseController, ProviderFailureKeepsTheLimitWarnsOnceAndRetries) {
  Rig rig;
  for (int i = 0; i < 1000 && !rig.opt.done(); ++i) rig.step();
  rig.step();
  rig.step_at(kT0 + 2 * kHour);  // after a high hour: the slow limit
  const Milliwatts kept = rig.gpu_limit();
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kInfo);
  // The last completed hour's value is what a decision needs: make hours 2-5 unreadable.
  rig.source.down = {kT0 + 2 * kHour, kT0 + 3 * kHour, kT0 + 4 * kHour, kT0 + 5 * kHour};
  rig.step_at(kT0 + 3 * kHour);
  rig.step_at(kT0 + 3 * kHour + 60);  // same period: no retry storm
  rig.step_at(kT0 + 4 * kHour);
  rig.step_at(kT0 + 5 * kHour);
  rig.step_at(kT0 + 6 * kHour);
  EXPECT_EQ(rig.chase.failed_periods(), 4);
  EXPECT_EQ(rig.gpu_limit(), kept);
  EXPECT_EQ(sink->count(log::Level::kWarn, "keeping"), 1u);
  rig.source.down.clear();
  rig.step_at(kT0 + 7 * kHour);  // hour 6 was low: fast again
  EXPECT_EQ(rig.chase.decisions().back().period_start_utc, kT0 + 7 * kHour);
  EXPECT_GT(rig.gpu_limit(), kept);
  EXPECT_EQ(sink->count(log::Level::kInfo, "answers again"), 1u);
}

// Two ranks on two threads: every call waits for the other rank's matching call.
class PairReducer {
 public:
  class Rank final : public power_limit::Reducer {
   public:
    Rank(PairReducer& pair, int rank) : pair_(pair), rank_(rank) {}
    double all_reduce_sum(double local) override { return pair_.reduce(local, false); }
    double all_reduce_max(double local) override { return pair_.reduce(local, true); }
    int rank() const override { return rank_; }
    int world_size() const override { return 2; }

   private:
    PairReducer& pair_;
    int rank_;
  };
  double reduce(double v, bool is_max) {
    std::unique_lock lock(mutex_);
    const long long mine = generation_;
    acc_ = arrived_ == 0 ? v : (is_max ? std::max(acc_, v) : acc_ + v);
    if (++arrived_ == 2) {
      result_ = acc_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != mine; });
    }
    ++calls;
    return result_;
  }
  int calls = 0;  // both ranks' calls

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  long long generation_ = 0;
  int arrived_ = 0;
  double acc_ = 0, result_ = 0;
};

// A source that must never be read (rank 1's: rank 0 decides for everyone).
class CountingSource final : public carbon_aware::SignalSource {
 public:
  double value(std::int64_t, std::int64_t) override {
    ++reads;
    throw_error(ErrorCode::kIo, "rank 1 read its source");
  }
  carbon_aware::SignalKind kind() const override { return carbon_aware::SignalKind::kCarbon; }
  std::string description() const override { return "rank 1's"; }
  int reads = 0;
};

TEST(ChaseController, RanksApplyRankZerosDecisionAtTheSameStep) {
  PairReducer pair;
  PairReducer::Rank r0(pair, 0), r1(pair, 1);
  FlakySource source0(scripted());
  CountingSource source1;
  struct RankRig {
    SimRig sim;
    std::unique_ptr<power_limit::GlobalPowerLimitOptimizer> opt;
    std::unique_ptr<carbon_aware::ChaseController> chase;
    double skew;  // this rank's clock error (s)
  };
  RankRig rank[2];
  rank[1].skew = -2.0;  // rank 1's clock is 2 s behind
  // Built on two threads: construction is collective too (world size).
  auto build = [&](int i, power_limit::Reducer& reducer, carbon_aware::SignalSource& source) {
    auto o = small_options();
    o.reducer = &reducer;
    rank[i].opt = std::make_unique<power_limit::GlobalPowerLimitOptimizer>(*rank[i].sim.monitor, o);
    carbon_aware::ChaseControllerOptions c;
    c.eta = 0.9;
    c.period_s = kHour;
    c.signal_max = kHigh;
    c.reducer = &reducer;
    c.unix_now = [&rig = rank[i]] { return kT0 + rig.skew + rig.sim.clock.now().count(); };
    rank[i].chase = std::make_unique<carbon_aware::ChaseController>(*rank[i].opt, source, c);
  };
  // Both ranks step at the same true times; a step at `unix` (true time).
  auto run = [&](int i) {
    auto& rig = rank[i];
    for (int k = 0; k < 1000 && !rig.opt->done(); ++k) {
      rig.chase->on_step_begin();
      rig.sim.step(50.0);
    }
    for (const std::int64_t t : {kT0 + 60, kT0 + kHour + 1, kT0 + kHour + 30, kT0 + 2 * kHour + 1,
                                 kT0 + 3 * kHour + 1, kT0 + 4 * kHour + 1}) {
      if (t == kT0 + 3 * kHour + 1 && i == 0) source0.down = {kT0 + 2 * kHour};
      if (t == kT0 + 4 * kHour + 1 && i == 0) source0.down.clear();
      rig.sim.clock.set(Seconds(static_cast<double>(t - kT0)));
      rig.chase->on_step_begin();
    }
  };
  {
    std::thread t1([&] {
      build(1, r1, source1);
      run(1);
    });
    build(0, r0, source0);
    run(0);
    t1.join();
  }
  EXPECT_EQ(rank[0].chase->world_size(), 2);  // one GPU on each rank
  EXPECT_EQ(source1.reads, 0);
  const auto& d0 = rank[0].chase->decisions();
  const auto& d1 = rank[1].chase->decisions();
  // kT0 (first step after profiling), hour 1 (rank 1 still saw 00:59:59 at
  // its first step of it), hour 2, hour 3 failed on rank 0, hour 4.
  ASSERT_EQ(d0.size(), 4u);
  ASSERT_EQ(d1.size(), d0.size());
  for (std::size_t k = 0; k < d0.size(); ++k) {
    EXPECT_EQ(d1[k].period_start_utc, d0[k].period_start_utc);
    EXPECT_EQ(d1[k].signal_seen, d0[k].signal_seen);
    EXPECT_EQ(d1[k].forecast, d0[k].forecast);
    EXPECT_EQ(d1[k].power_limit, d0[k].power_limit);
  }
  EXPECT_EQ(d0[1].period_start_utc, kT0 + kHour);
  EXPECT_EQ(d0[3].period_start_utc, kT0 + 4 * kHour);
  EXPECT_EQ(rank[0].chase->failed_periods(), 1);
  EXPECT_EQ(rank[1].chase->failed_periods(), 1);
  EXPECT_EQ(rank[0].sim.sims[0]->power_limit(), rank[1].sim.sims[0]->power_limit());
  EXPECT_EQ(rank[1].sim.sims[0]->power_limit(), d0.back().power_limit);
}

TEST(ChaseController, RefitsTheForecasterEveryNPeriods) {
  // The history before kT0 is flat (persistence's one-step MAPE 0); the hours
  // after it alternate, so a refit that sees them reports a MAPE above 0.
  for (const int refit : {0, 2}) {
    SCOPED_TRACE(refit);
    Rig rig(0.9, refit);
    for (int i = 0; i < 1000 && !rig.opt.done(); ++i) rig.step();
    rig.step();
    ASSERT_NE(rig.chase.forecaster(), nullptr);
    EXPECT_EQ(rig.chase.forecaster()->mape(), 0.0);
    rig.step_at(kT0 + kHour);
    EXPECT_EQ(rig.chase.forecaster()->mape(), 0.0) << "one period after the fit: not due";
    rig.step_at(kT0 + 2 * kHour);
    const auto at2 = rig.chase.forecaster()->mape();
    rig.step_at(kT0 + 3 * kHour);
    EXPECT_EQ(rig.chase.forecaster()->mape(), at2);
    rig.step_at(kT0 + 4 * kHour);
    const auto at4 = rig.chase.forecaster()->mape();
    ASSERT_TRUE(at2 && at4);
    if (refit == 0) {
      EXPECT_EQ(*at4, 0.0);  // fitted once
    } else {
      EXPECT_GT(*at2, 0.0);
      EXPECT_GT(*at4, *at2);  // two more alternating hours in the window
    }
    EXPECT_EQ(rig.chase.decisions().size(), 5u);
    EXPECT_EQ(rig.chase.decisions().back().forecast, kHigh);  // hour 3 was high
  }
  SimRig sim;
  power_limit::GlobalPowerLimitOptimizer opt(*sim.monitor, small_options());
  carbon_aware::GridSignalSource source(scripted());
  carbon_aware::ChaseControllerOptions bad;
  bad.refit_periods = -1;
  EXPECT_THROW(carbon_aware::ChaseController(opt, source, bad), Error);
}

TEST(ChaseController, LooksAtTheClockEveryCheckSteps) {
  Rig rig(0.9, 0, 3);
  for (int i = 0; i < 1000 && !rig.opt.done(); ++i) rig.step();
  ASSERT_EQ(rig.chase.decisions().size(), 1u);  // the step that ended profiling looked
  rig.step_at(kT0 + kHour);
  rig.step_at(kT0 + kHour + 1);
  EXPECT_EQ(rig.chase.decisions().size(), 1u) << "the next two steps do not look";
  rig.step_at(kT0 + kHour + 2);
  ASSERT_EQ(rig.chase.decisions().size(), 2u);
  EXPECT_EQ(rig.chase.decisions().back().period_start_utc, kT0 + kHour);
  SimRig sim;
  power_limit::GlobalPowerLimitOptimizer opt(*sim.monitor, small_options());
  carbon_aware::GridSignalSource source(scripted());
  carbon_aware::ChaseControllerOptions bad;
  bad.check_steps = 0;
  EXPECT_THROW(carbon_aware::ChaseController(opt, source, bad), Error);
}

TEST(ChaseController, RejectsBadOptionsAndEarlyApply) {
  SimRig sim;
  power_limit::GlobalPowerLimitOptimizer opt(*sim.monitor, small_options());
  carbon_aware::GridSignalSource source(scripted());
  carbon_aware::ChaseControllerOptions bad;
  bad.eta = 2;
  EXPECT_THROW(carbon_aware::ChaseController(opt, source, bad), Error);
  carbon_aware::ChaseControllerOptions oracle;
  oracle.forecaster = "oracle";
  EXPECT_THROW(carbon_aware::ChaseController(opt, source, oracle), Error);
  carbon_aware::ChaseControllerOptions period;
  period.period_s = 0;
  EXPECT_THROW(carbon_aware::ChaseController(opt, source, period), Error);
  // A normaliser of 0, below 0 or not finite would make every decision fail,
  // counted as signal outages: refused up front instead.
  for (double smax : {0.0, -1.0, std::nan(""), double{INFINITY}}) {
    carbon_aware::ChaseControllerOptions normaliser;
    normaliser.signal_max = smax;
    EXPECT_THROW(carbon_aware::ChaseController(opt, source, normaliser), Error) << smax;
  }
  try {
    opt.apply_power_limit(Milliwatts(200000));
    ADD_FAILURE() << "applied before profiling ended";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  }
}

TEST(ChaseController, ProviderSourceAveragesHours) {
  carbon::ConstantRate rate(250.0, carbon::kCarbonIntensityUnit);
  carbon_aware::ProviderSignalSource s(rate);
  EXPECT_EQ(s.kind(), carbon_aware::SignalKind::kCarbon);
  EXPECT_DOUBLE_EQ(s.value(kT0 + 1800, 3600), 250.0);
  carbon::ConstantRate price(0.3, carbon::kPriceUnit);
  EXPECT_EQ(carbon_aware::ProviderSignalSource(price).kind(), carbon_aware::SignalKind::kPrice);
  carbon_aware::GridSignalSource g(scripted());
  EXPECT_DOUBLE_EQ(g.value(kT0 + 1800, 3600), 0.5 * kLow + 0.5 * kHigh);  // spans two hours
}

}  // namespace
}  // namespace zeus
