// Replayer: one job replayed against a grid signal, on the synthetic
// three-limit job (synthetic_job_helpers.h) and hourly signals small enough to
// work out by hand. Charges are in grams: J x (g/kWh) / 3.6e6 J/kWh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/error_of.h"
#include "synthetic_job_helpers.h"
#include "zeus/sim/carbon_aware/replay.h"
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

ReplayOptions with_epochs(double epochs) {
  ReplayOptions o;
  o.epochs = epochs;
  return o;
}

// Cheap (10 g/kWh) in even hours, dear (100) in odd ones, for three days.
zeus::carbon_aware::GridSignal alternating(int hours = 72) {
  return hourly_signal(hours, [](int h) { return h % 2 == 0 ? 10.0 : 100.0; });
}

using zeus::testing::error_of;

TEST(ChaseReplay, MaxOnAConstantSignalIsEpochsTimesTheTopLimitFromAnyStart) {
  const auto signal = hourly_signal(72, [](int) { return 100.0; });
  const Replayer rp(three_limit_profile(), signal, with_epochs(2.5));
  EXPECT_EQ(rp.period_s(), kHour);  // period 0: the signal's resolution
  // A day of history (the default window) before the first start.
  EXPECT_EQ(rp.first_start(), kT0 + kDay);
  // 2.5 epochs at 300 W (the top limit, though listed second): 2.5 x 1800 s,
  // 2.5 x 540 kJ = 1.35 MJ = 0.375 kWh, at 100 g/kWh = 37.5 g.
  for (const std::int64_t start :
       {kT0 + kDay, kT0 + kDay + 1234, kT0 + 40 * kHour + 1799, kT0 + 69 * kHour}) {
    const ReplayResult r = rp.run(parse_policy("max"), start);
    EXPECT_NEAR(r.time.count(), 4500.0, 1e-9) << start;
    EXPECT_NEAR(r.energy.value(), 1'350'000.0, 1e-6) << start;
    EXPECT_NEAR(r.charge, 37.5, 37.5 * 1e-12) << start;
    EXPECT_FALSE(r.forecast_mape);   // only Chase fits a forecaster
    EXPECT_TRUE(r.periods.empty());  // not asked to record
  }
  // A fixed limit the profile has: 2.5 x 2000 s at 250 W.
  const ReplayResult r250 = rp.run(parse_policy("limit:250"), kT0 + kDay);
  EXPECT_NEAR(r250.time.count(), 5000.0, 1e-9);
  EXPECT_NEAR(r250.charge, 2.5 * 500'000.0 * 100.0 / kJoulesPerKwh, 1e-9);
}

TEST(ChaseReplay, BadProfilesOptionsAndPoliciesAreInvalidArguments) {
  const auto signal = hourly_signal(72, [](int) { return 100.0; });
  // The decision period must be a positive multiple of the resolution; the
  // message names the period, the signal and its resolution.
  for (const std::int64_t period : {std::int64_t{1800}, std::int64_t{5400}, -kHour}) {
    ReplayOptions o = with_epochs(1);
    o.period_s = period;
    const Error e = error_of([&] { (void)Replayer(three_limit_profile(), signal, o); });
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << period;
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(period) + " s")) << period;
    EXPECT_THAT(e.what(), HasSubstr(kSource + "'s resolution (3600 s)")) << period;
  }
  ReplayOptions two_hours = with_epochs(1);
  two_hours.period_s = 2 * kHour;
  EXPECT_EQ(Replayer(three_limit_profile(), signal, two_hours).period_s(), 2 * kHour);

  const auto rejects = [&](JobProfile p, ReplayOptions o) {
    EXPECT_EQ(error_of([&] { (void)Replayer(std::move(p), signal, o); }).code(),
              ErrorCode::kInvalidArgument);
  };
  rejects(JobProfile{}, with_epochs(1));  // no limits
  JobProfile zero_time = three_limit_profile();
  zero_time.per_epoch[0].time = Seconds(0.0);
  rejects(zero_time, with_epochs(1));
  rejects(three_limit_profile(), with_epochs(0));
  rejects(three_limit_profile(), with_epochs(NAN));
  ReplayOptions short_history = with_epochs(1);
  short_history.history_s = kHour - 1;  // less than one period
  rejects(three_limit_profile(), short_history);

  // A fixed limit the profile lacks fails the run, naming the limit.
  const Replayer rp(three_limit_profile(), signal, with_epochs(1));
  const Error e = error_of([&] { rp.run(parse_policy("limit:275"), kT0 + kDay); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("275 W is not in the job's profile"));
}

TEST(ChaseReplay, StartsWithoutHistoryOrRoomForTheJobAreNotFoundNamingTheSignal) {
  const auto signal = hourly_signal(72, [](int) { return 100.0; });  // [kT0, kT0 + 72 h)
  const Replayer rp(three_limit_profile(), signal, with_epochs(2));  // max: 1 h
  const Policy max = parse_policy("max");
  // One second before the first start floors to the period before it, whose
  // history would begin an hour before the series.
  for (const std::int64_t start : {kT0, kT0 + kDay - 1, kT0 - kDay, kT0 + 72 * kHour + 1}) {
    const Error e = error_of([&] { rp.run(max, start); });
    EXPECT_EQ(e.code(), ErrorCode::kNotFound) << start;
    EXPECT_THAT(e.what(), HasSubstr(kSource)) << start;
  }
  // The last hour holds a one-hour job exactly (it ends on the series' end)...
  EXPECT_NEAR(rp.run(max, kT0 + 71 * kHour).time.count(), 3600.0, 1e-9);
  // ...but not one second later, nor a slower limit: the series never wraps.
  for (const auto& [policy, start] : std::vector<std::pair<std::string, std::int64_t>>{
           {"max", kT0 + 71 * kHour + 1}, {"limit:250", kT0 + 71 * kHour}}) {
    // Copies: a lambda may not capture a structured binding before C++20 in clang 14.
    const Error e = error_of([&rp, p = policy, s = start] { rp.run(parse_policy(p), s); });
    EXPECT_EQ(e.code(), ErrorCode::kNotFound) << policy;
    EXPECT_THAT(e.what(), HasSubstr(kSource)) << policy;
  }
  // A longer history window moves the first start.
  ReplayOptions two_days = with_epochs(2);
  two_days.history_s = 2 * kDay;
  const Replayer late(three_limit_profile(), signal, two_days);
  EXPECT_EQ(late.first_start(), kT0 + 2 * kDay);
  EXPECT_EQ(error_of([&] { late.run(max, kT0 + kDay); }).code(), ErrorCode::kNotFound);
}

TEST(ChaseReplay, EnergyIsChargedAtEachSamplesOwnValueNotThePeriodMean) {
  // 100 g/kWh in even hours, 400 in odd ones; two-hour decision periods, so
  // each period's mean is 250 but its two halves charge differently.
  const auto signal = hourly_signal(72, [](int h) { return h % 2 == 0 ? 100.0 : 400.0; });
  ReplayOptions o = with_epochs(2);
  o.period_s = 2 * kHour;
  const Replayer rp(three_limit_profile(), signal, o);
  // max, 2 epochs = 3600 s at 300 W, from 24:45 (hour 24 is even): 900 s
  // (270 kJ) at 100 plus 2700 s (810 kJ) at 400 = 7.5 + 90 = 97.5 g. The
  // period mean would give 75 g, the first sample's value 30 g.
  const ReplayResult r = rp.run(parse_policy("max"), kT0 + 24 * kHour + 2700, true);
  EXPECT_NEAR(r.charge, 97.5, 1e-9);
  ASSERT_EQ(r.periods.size(), 1u);
  EXPECT_EQ(r.periods[0].decision.period_start_utc, kT0 + 24 * kHour);
  EXPECT_DOUBLE_EQ(r.periods[0].signal, 250.0);  // the record shows the period's mean
  EXPECT_NEAR(r.periods[0].charge, 97.5, 1e-9);

  // 7.3 epochs at 250 W (14,600 s) from 30:16:40 to 34:20:00 run 2600 s in
  // hour 30 (100), 3600 in 31 (400), 32 (100) and 33 (400), and 1200 in 34
  // (100), in three periods: [30 h, 32 h) 6200 s, [32 h, 34 h) 7200 s and
  // [34 h, 36 h) 1200 s. At 250 W, g = 250 x sum(s x value) / 3.6e6.
  const std::int64_t start = kT0 + 30 * kHour + 1000;
  const ReplayResult rec = [&] {
    ReplayOptions longer = o;
    longer.epochs = 7.3;
    return Replayer(three_limit_profile(), signal, longer)
        .run(parse_policy("limit:250"), start, true);
  }();
  const double g = 250.0 / kJoulesPerKwh;
  EXPECT_NEAR(rec.time.count(), 14'600.0, 1e-9);
  EXPECT_NEAR(rec.energy.value(), 7.3 * 500'000.0, 1e-6);
  EXPECT_NEAR(rec.charge, g * (7400.0 * 100 + 7200.0 * 400), 1e-9);
  ASSERT_EQ(rec.periods.size(), 3u);
  const double want_time[] = {6200, 7200, 1200};
  const double want_charge[] = {g * (2600.0 * 100 + 3600.0 * 400),
                                g * (3600.0 * 100 + 3600.0 * 400), g * 1200.0 * 100};
  double t = 0, e = 0, c = 0;
  for (std::size_t i = 0; i < rec.periods.size(); ++i) {
    const PeriodRecord& p = rec.periods[i];
    EXPECT_EQ(p.decision.period_start_utc, kT0 + (30 + 2 * static_cast<std::int64_t>(i)) * kHour);
    EXPECT_EQ(p.decision.power_limit, Milliwatts(250'000));
    EXPECT_TRUE(std::isnan(p.decision.forecast));  // not a Chase policy
    EXPECT_FALSE(p.profiling);
    EXPECT_DOUBLE_EQ(p.signal, 250.0);
    EXPECT_NEAR(p.time.count(), want_time[i], 1e-9) << i;
    EXPECT_NEAR(p.energy.value(), 250.0 * want_time[i], 1e-6) << i;
    EXPECT_NEAR(p.charge, want_charge[i], 1e-9) << i;
    t += p.time.count();
    e += p.energy.value();
    c += p.charge;
  }
  // The records are the result, split: they add up to its totals.
  EXPECT_NEAR(t, rec.time.count(), 1e-9 * rec.time.count());
  EXPECT_NEAR(e, rec.energy.value(), 1e-9 * rec.energy.value());
  EXPECT_NEAR(c, rec.charge, 1e-9 * rec.charge);
}

TEST(ChaseReplay, AJobWhoseWorkEndsOnASampleBoundaryEndsThere) {
  // Work is counted down in epochs, slot by slot (here 1.8 epochs an hour at
  // 250 W), and the subtractions round: a job whose last epoch ends exactly
  // on a sample boundary can be left 1e-13 epochs short. Those must not spill
  // into the next sample: at the series' end that is a kNotFound (a start the
  // sweep would count as outlasting the series), elsewhere an extra period.
  const auto signal = hourly_signal(72, [](int h) { return 10.0 + h; });
  for (int k = 1; k <= 200; ++k) {
    const std::int64_t start = kT0 + 48 * kHour + 7 * k;
    const double seconds = static_cast<double>(kT0 + 72 * kHour - start);  // to the series' end
    const Replayer rp(three_limit_profile(), signal, with_epochs(seconds / 2000.0));
    const Policy l250 = parse_policy("limit:250");
    ReplayResult r;
    ASSERT_NO_THROW(r = rp.run(l250, start, true)) << "start +" << 7 * k << " s";
    EXPECT_NEAR(r.time.count(), seconds, 1e-6) << k;
    // The periods it runs in: the rest of its first hour and every later one.
    EXPECT_EQ(r.periods.size(), static_cast<std::size_t>(24 - (7 * k) / kHour)) << k;
    // The same job a day earlier ends at 48 h, inside the series: the same
    // periods, none of them empty.
    const ReplayResult earlier = rp.run(l250, start - kDay, true);
    EXPECT_EQ(earlier.periods.size(), r.periods.size()) << k;
    EXPECT_GT(earlier.periods.back().time.count(), 1.0) << k;
  }
}

TEST(ChaseReplay, ChargedProfilingEpochComesFirstAndIsOneOfTheJobsEpochs) {
  const auto signal = hourly_signal(72, [](int) { return 100.0; });
  ReplayOptions o = with_epochs(3);
  o.charge_profiling = true;
  const Replayer rp(three_limit_profile(), signal, o);
  // limit:300 from 24:00: the profiling epoch (3000 s, 750 kJ) first, then
  // the other 2 epochs at 300 W: 600 s in the rest of hour 24, 3000 s in 25.
  const ReplayResult r = rp.run(parse_policy("limit:300"), kT0 + kDay, true);
  EXPECT_NEAR(r.time.count(), 3000.0 + 2 * 1800.0, 1e-9);
  EXPECT_NEAR(r.energy.value(), 750'000.0 + 2 * 540'000.0, 1e-6);
  EXPECT_NEAR(r.charge, (750'000.0 + 2 * 540'000.0) * 100.0 / kJoulesPerKwh, 1e-9);
  ASSERT_EQ(r.periods.size(), 3u);
  EXPECT_TRUE(r.periods[0].profiling);
  EXPECT_NEAR(r.periods[0].time.count(), 3000.0, 1e-9);
  EXPECT_NEAR(r.periods[0].energy.value(), 750'000.0, 1e-6);
  EXPECT_FALSE(r.periods[1].profiling);
  EXPECT_EQ(r.periods[1].decision.period_start_utc, kT0 + kDay);
  EXPECT_NEAR(r.periods[1].time.count(), 600.0, 1e-9);
  EXPECT_EQ(r.periods[2].decision.period_start_utc, kT0 + kDay + kHour);
  EXPECT_NEAR(r.periods[2].time.count(), 3000.0, 1e-6);
  // "max" is the baseline and never profiles; nor does a profile that has
  // no profiling epoch (time 0).
  EXPECT_NEAR(rp.run(parse_policy("max"), kT0 + kDay).time.count(), 3 * 1800.0, 1e-9);
  JobProfile saved = three_limit_profile();
  saved.profile_time = Seconds(0.0);
  const Replayer no_profiling(saved, signal, o);
  EXPECT_NEAR(no_profiling.run(parse_policy("limit:300"), kT0 + kDay).time.count(), 3 * 1800.0,
              1e-9);
}

TEST(ChaseReplay, OracleChaseRunsFastWhenCheapAndSlowWhenDear) {
  // Cheap (10) even hours, dear (100) odd ones, and one spike of 1000 at
  // hour 40: after the job, outside the day before it that sets S_max.
  std::vector<double> v;
  for (int h = 0; h < 72; ++h) v.push_back(h % 2 == 0 ? 10.0 : 100.0);
  v[40] = 1000.0;
  const auto signal = hourly_signal(v);
  const Replayer rp(three_limit_profile(), signal, with_epochs(3.5));
  // S_max = 100 (the day before), eta 0.9: eta_eff = 0.9 F / (0.9 F + 0.1 x 100)
  // is 9/19 (300 W) at F = 10 and 0.9 (200 W) at F = 100. From 24:00 the
  // oracle sees hour 24 cheap: 2 epochs at 300 W fill it (1.08 MJ at 10 = 3 g);
  // hour 25 is dear: the last 1.5 epochs at 200 W fill it (720 kJ at 100 = 20 g).
  const ReplayResult chase = rp.run(parse_policy("chase:0.9:oracle"), kT0 + kDay, true);
  EXPECT_NEAR(chase.time.count(), 7200.0, 1e-9);
  EXPECT_NEAR(chase.energy.value(), 1'800'000.0, 1e-6);
  EXPECT_NEAR(chase.charge, 23.0, 1e-9);
  ASSERT_EQ(chase.periods.size(), 2u);
  const double want_signal[] = {10, 100}, want_seen[] = {100, 10}, want_eta[] = {9.0 / 19, 0.9};
  const Milliwatts want_limit[] = {Milliwatts(300'000), Milliwatts(200'000)};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& d = chase.periods[i].decision;
    EXPECT_EQ(d.power_limit, want_limit[i]) << i;
    EXPECT_DOUBLE_EQ(d.forecast, want_signal[i]) << i;  // the oracle knows the period
    EXPECT_DOUBLE_EQ(chase.periods[i].signal, want_signal[i]) << i;
    EXPECT_DOUBLE_EQ(d.signal_seen, want_seen[i]) << i;  // the period before
    EXPECT_NEAR(d.eta_eff, want_eta[i], 1e-12) << i;
  }
  ASSERT_TRUE(chase.forecast_mape);
  EXPECT_EQ(*chase.forecast_mape, 0.0);  // the oracle is never wrong

  // max: 3.5 x 1800 s = 6300 s: hour 24 (3 g), then 2700 s at 300 W in
  // hour 25 (810 kJ at 100 = 22.5 g).
  const ReplayResult max = rp.run(parse_policy("max"), kT0 + kDay);
  EXPECT_NEAR(max.time.count(), 6300.0, 1e-9);
  EXPECT_NEAR(max.charge, 25.5, 1e-9);
  EXPECT_LT(chase.charge, max.charge);
  // Chase only ever picks measured limits: its time lies between the job's
  // time at the fastest and at the slowest.
  EXPECT_GE(chase.time.count(), 3.5 * 1800.0);
  EXPECT_LE(chase.time.count(), 3.5 * 2400.0);

  // A normaliser of 1000 (given, or the spike if the window included it)
  // puts eta_eff at F = 100 at 90/190 < 0.6: 300 W throughout, as max.
  ReplayOptions fixed_max = with_epochs(3.5);
  fixed_max.signal_max = 1000.0;
  const ReplayResult flat = Replayer(three_limit_profile(), signal, fixed_max)
                                .run(parse_policy("chase:0.9:oracle"), kT0 + kDay);
  EXPECT_NEAR(flat.time.count(), 6300.0, 1e-9);
  EXPECT_NEAR(flat.charge, 25.5, 1e-9);
}

TEST(ChaseReplay, PersistenceForecastsTheLastCompletedPeriod) {
  // On the alternating signal persistence is always wrong-footed: it expects
  // hour 24 dear (hour 23 was) and runs it at 200 W (1.5 epochs, 720 kJ at
  // 10 = 2 g), and hour 25 cheap: 2 epochs at 300 W (1.08 MJ at 100 = 30 g).
  const auto signal = alternating();
  const Replayer rp(three_limit_profile(), signal, with_epochs(3.5));
  const ReplayResult r = rp.run(parse_policy("chase:0.9"), kT0 + kDay, true);
  EXPECT_NEAR(r.time.count(), 7200.0, 1e-9);
  EXPECT_NEAR(r.charge, 32.0, 1e-9);
  ASSERT_EQ(r.periods.size(), 2u);
  EXPECT_EQ(r.periods[0].decision.power_limit, Milliwatts(200'000));
  EXPECT_DOUBLE_EQ(r.periods[0].decision.forecast, 100.0);
  EXPECT_EQ(r.periods[1].decision.power_limit, Milliwatts(300'000));
  EXPECT_DOUBLE_EQ(r.periods[1].decision.forecast, 10.0);
  // Its in-sample MAPE is over the 24 h of history before the job (hours
  // 0-23): 12 dear hours forecast at 10 (|10-100|/100 = 0.9) and 11 cheap
  // hours after the first forecast at 100 (|100-10|/10 = 9).
  ASSERT_TRUE(r.forecast_mape);
  EXPECT_NEAR(*r.forecast_mape, 100.0 * (12 * 0.9 + 11 * 9.0) / 23, 1e-9);
}

}  // namespace
}  // namespace zeus::sim::carbon_aware
