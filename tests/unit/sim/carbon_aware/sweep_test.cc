// sweep_starts and run_study: a job replayed from every start of a signal,
// summarised against the baseline (max), and the study's headline built on
// it. Inputs are the synthetic three-limit job and hourly signals of three
// days (synthetic_job_helpers.h); the study's files are written in the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "synthetic_job_helpers.h"
#include "util/iso8601.h"
#include "zeus/sim/carbon_aware/study.h"
#include "zeus/sim/carbon_aware/sweep.h"
#include "zeus/util/error.h"

namespace zeus::sim::carbon_aware {
namespace {

using ::testing::HasSubstr;
using testing::hourly_signal;
using testing::kDay;
using testing::kHour;
using testing::kJoulesPerKwh;
using testing::kSource;
using testing::kT0;
using testing::three_limit_profile;

std::vector<Policy> policies(const std::vector<std::string>& specs) {
  std::vector<Policy> out;
  for (const auto& s : specs) out.push_back(parse_policy(s));
  return out;
}

ReplayOptions with_epochs(double epochs) {
  ReplayOptions o;
  o.epochs = epochs;
  return o;
}

TEST(ChaseSweep, DistributionIsTheSampleSdAndNumpysPercentiles) {
  const Distribution d = distribution({5, 1, 4, 2, 3});
  EXPECT_EQ(d.n, 5u);
  EXPECT_DOUBLE_EQ(d.mean, 3.0);
  EXPECT_DOUBLE_EQ(d.sd, std::sqrt(2.5));  // n - 1 in the denominator
  EXPECT_DOUBLE_EQ(d.p5, 1.2);             // 1 + 0.05 x 4 x (2 - 1)
  EXPECT_DOUBLE_EQ(d.p50, 3.0);
  EXPECT_DOUBLE_EQ(d.p95, 4.8);
  const Distribution one = distribution({7});
  EXPECT_EQ(one.sd, 0.0);
  EXPECT_EQ(one.p5, 7.0);
  EXPECT_EQ(one.p95, 7.0);
  EXPECT_EQ(distribution({}).n, 0u);
}

TEST(ChaseSweep, OneResultPerCoveredStartWithOutlastingStartsCounted) {
  const auto signal = hourly_signal(72, [](int) { return 100.0; });
  const Replayer rp(three_limit_profile(), signal, with_epochs(2));  // max: 1 h, 250 W: 4000 s
  // max is put first (added when absent): the baseline of every change.
  const SweepResult s =
      sweep_starts(rp, policies({"limit:250"}), kT0, kT0 + 72 * kHour, kHour, /*threads=*/2);
  ASSERT_EQ(s.policies.size(), 2u);
  EXPECT_EQ(s.policies[0].spec, "max");
  EXPECT_EQ(s.policies[1].spec, "limit:250");
  // Candidates: 24 h (the first with a day of history) to 71 h; from 71 h the
  // 4000 s job outlasts the series, so 47 starts, one skipped.
  ASSERT_EQ(s.starts.size(), 47u);
  EXPECT_EQ(s.skipped_outlasting, 1u);
  for (std::size_t i = 0; i < s.starts.size(); ++i) {
    EXPECT_EQ(s.starts[i], kT0 + kDay + static_cast<std::int64_t>(i) * kHour);
  }
  ASSERT_EQ(s.results.size(), 2u);
  for (std::size_t p = 0; p < 2; ++p) {
    ASSERT_EQ(s.results[p].size(), s.starts.size());
    for (std::size_t i = 0; i < s.starts.size(); i += 11) {  // each is that start's replay
      const ReplayResult r = rp.run(s.policies[p], s.starts[i]);
      EXPECT_EQ(s.results[p][i].charge, r.charge);
      EXPECT_EQ(s.results[p][i].time, r.time);
    }
  }
  // On a constant signal the charge follows the energy: 1.0 MJ against 1.08.
  ASSERT_EQ(s.summary.size(), 2u);
  EXPECT_EQ(s.summary[0].policy, "max");
  EXPECT_NEAR(s.summary[0].time_change_pct, 0.0, 1e-12);
  EXPECT_NEAR(s.summary[0].charge_change_pct, 0.0, 1e-12);
  const PolicySummary& l = s.summary[1];
  EXPECT_EQ(l.policy, "limit:250");
  EXPECT_NEAR(l.mean_time_s, 4000.0, 1e-9);
  EXPECT_NEAR(l.mean_energy_j, 1'000'000.0, 1e-6);
  EXPECT_NEAR(l.mean_charge, 1'000'000.0 * 100 / kJoulesPerKwh, 1e-9);
  EXPECT_NEAR(l.time_change_pct, 100.0 * (4000.0 / 3600 - 1), 1e-9);
  EXPECT_NEAR(l.energy_change_pct, 100.0 * (1.0 / 1.08 - 1), 1e-9);
  EXPECT_NEAR(l.charge_change_pct, 100.0 * (1.0 / 1.08 - 1), 1e-9);
  EXPECT_EQ(l.charge_change.n, 47u);  // every baseline charge is positive
  EXPECT_NEAR(l.charge_change.p50, 100.0 * (1.0 / 1.08 - 1), 1e-9);
  EXPECT_NEAR(l.time_change.sd, 0.0, 1e-9);
  EXPECT_FALSE(l.mean_forecast_mape);

  // max alone fits from 71 h too: it ends exactly on the series' end.
  const SweepResult m = sweep_starts(rp, policies({"max"}), kT0, kT0 + 72 * kHour, kHour, 2);
  EXPECT_EQ(m.starts.size(), 48u);
  EXPECT_EQ(m.skipped_outlasting, 0u);
  // max given elsewhere in the list moves to the front; the rest keep order.
  // From a start off the grid, the next period start; every step_s after it.
  const SweepResult moved = sweep_starts(rp, policies({"limit:250", "max", "limit:200"}),
                                         kT0 + 30 * kHour + 1, kT0 + 40 * kHour, 2 * kHour, 2);
  ASSERT_EQ(moved.policies.size(), 3u);
  EXPECT_EQ(moved.policies[0].spec, "max");
  EXPECT_EQ(moved.policies[1].spec, "limit:250");
  EXPECT_EQ(moved.policies[2].spec, "limit:200");
  EXPECT_EQ(moved.starts,
            (std::vector<std::int64_t>{kT0 + 31 * kHour, kT0 + 33 * kHour, kT0 + 35 * kHour,
                                       kT0 + 37 * kHour, kT0 + 39 * kHour}));
}

TEST(ChaseSweep, BadStepsAndJobsThatFitNowhereAreInvalidArguments) {
  const auto signal = hourly_signal(72, [](int) { return 100.0; });
  const Replayer rp(three_limit_profile(), signal, with_epochs(2));
  for (const std::int64_t step : {std::int64_t{0}, std::int64_t{1800}, std::int64_t{5400}}) {
    try {
      sweep_starts(rp, policies({"max"}), kT0, kT0 + 72 * kHour, step, 1);
      ADD_FAILURE() << step;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << step;
      EXPECT_THAT(e.what(), HasSubstr("multiple of the decision period (3600 s)"));
    }
  }
  // 100 epochs at 300 W are 50 h: after a day of history only 48 h are left.
  const Replayer long_job(three_limit_profile(), signal, with_epochs(100));
  try {
    sweep_starts(long_job, policies({"max"}), kT0, kT0 + 72 * kHour, kHour, 2);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr(kSource + ": no start leaves the job inside the series"));
  }
}

TEST(ChaseSweep, ResultsDoNotDependOnTheNumberOfThreads) {
  const auto signal = hourly_signal(96, [](int h) { return 50.0 + 40.0 * std::sin(h * 0.7); });
  const Replayer rp(three_limit_profile(), signal, with_epochs(5.5));
  const auto specs = policies({"chase:0.6", "chase:0.6:linear", "chase:0.9:oracle", "limit:200"});
  const SweepResult one = sweep_starts(rp, specs, kT0, kT0 + 96 * kHour, kHour, 1);
  const SweepResult four = sweep_starts(rp, specs, kT0, kT0 + 96 * kHour, kHour, 4);
  ASSERT_EQ(one.starts, four.starts);
  EXPECT_EQ(one.skipped_outlasting, four.skipped_outlasting);
  for (std::size_t p = 0; p < one.policies.size(); ++p) {
    for (std::size_t i = 0; i < one.starts.size(); ++i) {
      EXPECT_EQ(one.results[p][i].charge, four.results[p][i].charge) << p << " " << i;
      EXPECT_EQ(one.results[p][i].time, four.results[p][i].time) << p << " " << i;
    }
    EXPECT_EQ(one.summary[p].charge_change_pct, four.summary[p].charge_change_pct);
    EXPECT_EQ(one.summary[p].mean_forecast_mape, four.summary[p].mean_forecast_mape);
  }
}

TEST(ChaseSweep, ChargeChangesAreOverTheAbsoluteBaselineAndOnlyPositiveOnesPerStart) {
  // A price of -0.1 GBP/kWh: running earns money. 250 W uses less energy than
  // max (1.0 MJ against 1.08), so earns less: its change must read as worse
  // (+7.4 %), not as a saving, whatever the baseline's sign.
  const zeus::carbon_aware::GridSignal negative(zeus::carbon_aware::SignalKind::kPrice, "GBP/kWh",
                                                kT0, kHour, std::vector<double>(72, -0.1), kSource);
  const Replayer rp(three_limit_profile(), negative, with_epochs(2));
  const SweepResult s = sweep_starts(rp, policies({"limit:250"}), kT0, kT0 + 72 * kHour, kHour, 2);
  EXPECT_NEAR(s.summary[0].mean_charge, -0.1 * 1.08e6 / kJoulesPerKwh, 1e-12);
  EXPECT_NEAR(s.summary[1].charge_change_pct, 100.0 * (1.0 - 1.0 / 1.08), 1e-9);
  // Per-start changes only where the baseline's charge is positive: none here.
  EXPECT_EQ(s.summary[1].charge_change.n, 0u);
  EXPECT_EQ(s.summary[1].time_change.n, s.starts.size());

  // Free in even hours, 0.2 in odd ones: a one-hour max job from an even
  // hour costs nothing, and those starts have no per-start change.
  const zeus::carbon_aware::GridSignal free_at_even(
      zeus::carbon_aware::SignalKind::kPrice, "GBP/kWh", kT0, kHour,
      [] {
        std::vector<double> v;
        for (int h = 0; h < 72; ++h) v.push_back(h % 2 == 0 ? 0.0 : 0.2);
        return v;
      }(),
      kSource);
  const Replayer half(three_limit_profile(), free_at_even, with_epochs(2));
  const SweepResult h = sweep_starts(half, policies({"max"}), kT0, kT0 + 72 * kHour, kHour, 2);
  ASSERT_EQ(h.starts.size(), 48u);
  EXPECT_EQ(h.summary[0].charge_change.n, 24u);  // the odd hours 25, 27, ..., 71
}

// The study's inputs written where it reads them: an hourly signal CSV (plain
// timestamp,value, unit given) and a Zeus trace of one batch size with the
// three limits of three_limit_profile() (energy = time x average power).
struct StudyFiles {
  ::zeus::testing::TempDir dir{"zeus_chase_study"};
  StudySpec spec;

  explicit StudyFiles(const std::vector<double>& hourly) {
    std::string csv = "timestamp,value\n";
    for (std::size_t h = 0; h < hourly.size(); ++h) {
      csv += format_iso8601(kT0 + static_cast<std::int64_t>(h) * kHour) + "," +
             std::to_string(hourly[h]) + "\n";
    }
    std::ofstream(dir / "signal.csv") << csv;
    // Three runs reach the target at 1, 2 and 3 epochs: the median is 2.
    std::ofstream(dir / "summary_train.csv")
        << "dataset,network,batch_size,optimizer,target_metric,target_epoch\n"
           "imagenet,resnet50,128,adadelta,0.65,1\n"
           "imagenet,resnet50,128,adadelta,0.65,3\n"
           "imagenet,resnet50,128,adadelta,0.65,2\n";
    std::ofstream(dir / "summary_power_a40.csv")
        << "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
           "imagenet,resnet50,128,adadelta,300,1800,300\n"
           "imagenet,resnet50,128,adadelta,250,2000,250\n"
           "imagenet,resnet50,128,adadelta,200,2400,200\n";
    spec.signal_path = (dir / "signal.csv").string();
    spec.csv.unit = "g/kWh";
    spec.traces_dir = dir.path();
    spec.gpu = "a40";
    spec.workload = "imagenet/resnet50";
    spec.batch_size = 128;
    spec.threads = 2;
  }
};

TEST(ChaseStudy, HeadlineOnACheapDearSignalMatchesTheHandCount) {
  std::vector<double> hourly;
  for (int h = 0; h < 72; ++h) hourly.push_back(h % 2 == 0 ? 10.0 : 100.0);
  StudyFiles files(hourly);
  files.spec.policies = {"max", "chase:0.9:oracle"};
  files.spec.pareto_etas = {0.9};
  files.spec.pareto_forecaster = "oracle";
  files.spec.target = {{-30.0, 10.0}};
  const StudyResult r = run_study(files.spec);

  EXPECT_EQ(r.epochs, 2.0);  // the trace's median epochs to target
  EXPECT_NEAR(r.profile.profile_time.count(), (1800.0 + 2000 + 2400) / 3, 1e-9);
  EXPECT_THAT(r.workload_label, HasSubstr("imagenet/resnet50"));
  // Starts 24 h to 70 h (from 71 h Chase's 4500 s job outlasts the series).
  ASSERT_EQ(r.main.starts.size(), 47u);
  EXPECT_EQ(r.main.skipped_outlasting, 1u);
  // Per start (cheap hours 10 g/kWh, dear 100; S_max 100; chase picks 300 W
  // when the hour is cheap and 200 W when dear, as in replay_test.cc):
  //  24 even (cheap) starts: max and chase both run 1 h at 300 W: 3 g.
  //  23 odd (dear) starts: max 1 h at 300 W in a dear hour: 30 g; chase 1.5
  //   epochs at 200 W (720 kJ, 20 g), then 0.5 at 300 W in a cheap hour
  //   (900 s, 270 kJ, 0.75 g): 20.75 g in 4500 s.
  const auto g = [](double joules, double value) { return joules * value / kJoulesPerKwh; };
  const double max_charge = 24 * 3.0 + 23 * 30.0;
  const double chase_charge = 24 * 3.0 + 23 * 20.75;
  const double max_time = 47 * 3600.0;
  const double chase_time = 24 * 3600.0 + 23 * 4500.0;
  const double chase_charge_pct = 100.0 * (chase_charge - max_charge) / max_charge;
  const double chase_time_pct = 100.0 * (chase_time / max_time - 1);
  ASSERT_EQ(r.main.summary.size(), 2u);
  const PolicySummary& c = r.main.summary[1];
  EXPECT_NEAR(c.charge_change_pct, chase_charge_pct, 1e-9);
  EXPECT_LT(c.charge_change_pct, 0.0);
  EXPECT_NEAR(c.time_change_pct, chase_time_pct, 1e-9);
  EXPECT_NEAR(c.energy_change_pct, 100.0 * ((24 * 1.08e6 + 23 * 0.99e6) / (47 * 1.08e6) - 1), 1e-9);
  ASSERT_TRUE(c.mean_forecast_mape);
  EXPECT_EQ(*c.mean_forecast_mape, 0.0);

  // The headline: the static cap at the same slowdown is max-slowdown:1.1223
  // (+12.2 %), i.e. 250 W (2000 s <= 1.1223 x 1800 s < 2400 s): per start
  // 3600 s at its first hour's value and 400 s at the next one's.
  ASSERT_EQ(r.headlines.size(), 1u);
  const Headline& h = r.headlines[0];
  EXPECT_EQ(h.chase_policy, "chase:0.9:oracle");
  EXPECT_EQ(h.chase_charge_pct, c.charge_change_pct);
  EXPECT_EQ(h.chase_time_pct, c.time_change_pct);
  EXPECT_EQ(h.static_policy, "max-slowdown:1.1223");
  const double w250 = 250.0;
  const double static_charge = 24 * (g(w250 * 3600, 10) + g(w250 * 400, 100)) +
                               23 * (g(w250 * 3600, 100) + g(w250 * 400, 10));
  const double static_pct = 100.0 * (static_charge - max_charge) / max_charge;
  EXPECT_NEAR(h.static_charge_pct, static_pct, 1e-9);
  EXPECT_NEAR(h.static_time_pct, 100.0 * (4000.0 / 3600 - 1), 1e-9);
  EXPECT_NEAR(h.share, static_pct / chase_charge_pct, 1e-9);
  // The frontier: 250 W (+11.1 %) and 200 W (+33.3 %: 3600 s at 200 W, then
  // 1200 s in the next hour) interpolated at Chase's +12.2 %.
  const double charge200 = 24 * (g(200.0 * 3600, 10) + g(200.0 * 1200, 100)) +
                           23 * (g(200.0 * 3600, 100) + g(200.0 * 1200, 10));
  const double pct200 = 100.0 * (charge200 - max_charge) / max_charge;
  const double t250 = 100.0 * (4000.0 / 3600 - 1), t200 = 100.0 * (4800.0 / 3600 - 1);
  ASSERT_TRUE(h.frontier_charge_pct);
  EXPECT_NEAR(*h.frontier_charge_pct,
              static_pct + (chase_time_pct - t250) / (t200 - t250) * (pct200 - static_pct), 1e-9);
  // Chase beats both static schedules at its slowdown on this signal.
  EXPECT_LT(h.chase_charge_pct, *h.frontier_charge_pct);

  // The Pareto sweep has the same Chase, so the nearest to the target is it.
  ASSERT_TRUE(r.nearest);
  EXPECT_EQ(r.nearest->chase_policy, "chase:0.9:oracle");
  EXPECT_NEAR(r.nearest->chase_charge_pct, h.chase_charge_pct, 1e-9);

  // The single start in detail: the sweep's first, every main policy recorded.
  EXPECT_EQ(r.single_start, kT0 + kDay);
  ASSERT_EQ(r.single.size(), 2u);
  EXPECT_EQ(r.single[1].first, "chase:0.9:oracle");
  ASSERT_EQ(r.single[1].second.periods.size(), 1u);  // 2 epochs fill the cheap hour 24
  EXPECT_EQ(r.single[1].second.periods[0].decision.power_limit, Milliwatts(300'000));

  const std::string table = study_table(r);
  EXPECT_THAT(table, HasSubstr("47 starts, emissions over the maximum limit"));
  EXPECT_THAT(table, HasSubstr("chase:0.9:oracle"));
  EXPECT_THAT(table, HasSubstr("max-slowdown:1.1223"));
}

}  // namespace
}  // namespace zeus::sim::carbon_aware
