// The ledger's known answers and its properties over random timelines:
// exact conservation, no negative share, counter resets, retention and bounds.
#include "zeus/monitor/attribution/ledger.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "zeus/util/error.h"

namespace zeus::attribution {
namespace {

WorkloadLabels cgroup_labels(std::string cgroup) {
  WorkloadLabels labels;
  labels.cgroup = std::move(cgroup);
  return labels;
}

std::vector<std::int64_t> split(std::int64_t total, std::vector<double> weights) {
  std::vector<std::int64_t> out;
  SplitScratch scratch;
  split_exact(total, weights, out, scratch);
  return out;
}

TEST(LedgerSplitExact, KnownAnswers) {
  EXPECT_EQ(split(100, {3, 1}), (std::vector<std::int64_t>{75, 25}));
  EXPECT_EQ(split(10, {1, 1, 1}), (std::vector<std::int64_t>{4, 3, 3}));  // ties: lower index
  EXPECT_EQ(split(10, {1, 0, 1}), (std::vector<std::int64_t>{5, 0, 5}));
  EXPECT_EQ(split(7, {0, 2}), (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(split(0, {1, 2}), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(split(5, {0, 0}), (std::vector<std::int64_t>{0, 0}));  // nobody weighs
  EXPECT_EQ(split(5, {}), (std::vector<std::int64_t>{}));
}

TEST(LedgerSplitExact, PropertyPartsAddUpExactlyAndStayWithinOneOfTheirShare) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t n = 1 + rng() % 70;
    std::vector<double> weights(n);
    for (auto& w : weights) {
      const auto kind = rng() % 4;
      w = kind == 0   ? 0.0
          : kind == 1 ? static_cast<double>(rng() % 100)
                      : std::ldexp(1.0 + static_cast<double>(rng() % 1000) / 7.0,
                                   static_cast<int>(rng() % 40));
    }
    weights[rng() % n] += 1;  // at least one weighs
    // Totals from a few mJ up to a counter of 2^52 mJ (142 years at 1 kW).
    const std::int64_t total = static_cast<std::int64_t>(rng() % (1ULL << (1 + rng() % 52)));
    const auto parts = split(total, weights);
    ASSERT_EQ(std::accumulate(parts.begin(), parts.end(), std::int64_t{0}), total);
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_GE(parts[i], 0);
      const long double exact = static_cast<long double>(total) * weights[i] / sum;
      ASSERT_LE(std::fabs(static_cast<double>(parts[i] - exact)),
                1.0 + 1e-9 * static_cast<double>(total))
          << "round " << round << " part " << i;
      if (weights[i] == 0) {
        ASSERT_EQ(parts[i], 0);
      }
    }
  }
}

struct Booked {
  Ledger ledger;
  DeviceIndex gpu = ledger.add_device("GPU 0");
  WorkloadIndex a = ledger.workload(cgroup_labels("/a"), 0);
  WorkloadIndex b = ledger.workload(cgroup_labels("/b"), 0);
  ProcessIndex pa = ledger.process(100, 1, "train", a, 0);
  ProcessIndex pb = ledger.process(200, 2, "serve", b, 0);
};

TEST(LedgerKnownAnswers, DutySplitSeventyFiveTwentyFiveGetsThatShareOfActiveEnergy) {
  Booked t;
  t.ledger.record({t.gpu, Millijoules(5'000), Millijoules(0), Method::kNone, {}}, 0);
  const Use uses[] = {{t.pa, kNoIndex, 75}, {t.pb, kNoIndex, 25}};
  // 10 J measured, 2 J of it idle: 8 J active, 6 and 2.
  t.ledger.record(
      {t.gpu, Millijoules(15'000), Millijoules(2'000), Method::kProcessUtilization, uses}, 1);
  const auto& d = t.ledger.device(t.gpu);
  EXPECT_EQ(d.before_start.value(), 5'000);
  EXPECT_EQ(d.measured.value(), 15'000);
  EXPECT_EQ(d.idle.value(), 2'000);
  EXPECT_EQ(d.attributed.value(), 8'000);
  EXPECT_EQ(d.unattributed.value(), 0);
  EXPECT_EQ(d.method, Method::kProcessUtilization);
  std::map<std::string, std::int64_t> by_cgroup;
  t.ledger.for_each_workload([&](const Ledger::WorkloadView& w) {
    by_cgroup[w.labels.cgroup] = w.energy[t.gpu].total.value();
  });
  EXPECT_EQ(by_cgroup["/a"], 6'000);
  EXPECT_EQ(by_cgroup["/b"], 2'000);
}

TEST(LedgerKnownAnswers, LoneProcessGetsMeasuredMinusIdleAndIdleIsCappedAtMeasured) {
  Booked t;
  const Use lone[] = {{t.pa, kNoIndex, 3}};
  t.ledger.record({t.gpu, Millijoules(0), Millijoules(0), Method::kNone, {}}, 0);
  t.ledger.record({t.gpu, Millijoules(900), Millijoules(300), Method::kEqualSplit, lone}, 1);
  // Idle larger than what was measured: all of it idle, nothing active.
  t.ledger.record({t.gpu, Millijoules(1'000), Millijoules(500), Method::kEqualSplit, lone}, 2);
  const auto& d = t.ledger.device(t.gpu);
  EXPECT_EQ(d.idle.value(), 400);
  EXPECT_EQ(d.attributed.value(), 600);
  std::int64_t process_total = -1;
  std::int64_t process_last = -1;
  t.ledger.for_each_process([&](const Ledger::ProcessView& p) {
    if (p.pid == 100) {
      process_total = p.energy[t.gpu].total.value();
      process_last = t.ledger.last_interval(p.energy[t.gpu], t.gpu).value();
    }
  });
  EXPECT_EQ(process_total, 600);
  EXPECT_EQ(process_last, 0);  // the last interval was all idle
}

TEST(LedgerKnownAnswers, NobodyWeighsSoActiveEnergyIsUnattributed) {
  Booked t;
  const Use zero[] = {{t.pa, kNoIndex, 0}};
  t.ledger.record({t.gpu, Millijoules(0), Millijoules(0), Method::kNone, {}}, 0);
  t.ledger.record({t.gpu, Millijoules(1'234), Millijoules(234), Method::kNone, zero}, 1);
  EXPECT_EQ(t.ledger.device(t.gpu).unattributed.value(), 1'000);
  EXPECT_EQ(t.ledger.device(t.gpu).attributed.value(), 0);
}

TEST(LedgerKnownAnswers, CounterResetCountsTheNewReadingAndStaysConserved) {
  Booked t;
  const Use both[] = {{t.pa, kNoIndex, 1}, {t.pb, kNoIndex, 1}};
  t.ledger.record({t.gpu, Millijoules(10'000), Millijoules(0), Method::kNone, {}}, 0);
  t.ledger.record({t.gpu, Millijoules(12'000), Millijoules(0), Method::kEqualSplit, both}, 1);
  t.ledger.record({t.gpu, Millijoules(500), Millijoules(100), Method::kEqualSplit, both},
                  2);  // reload
  const auto& d = t.ledger.device(t.gpu);
  EXPECT_EQ(d.counter_resets, 1u);
  EXPECT_EQ(d.last_interval.value(), 500);
  EXPECT_EQ(d.measured.value(), 12'500);
  EXPECT_EQ((d.before_start + d.idle + d.attributed + d.unattributed).value(), d.measured.value());
}

TEST(LedgerInput, BadUsesAreRefusedAndNothingIsBooked) {
  Booked t;
  t.ledger.record({t.gpu, Millijoules(0), Millijoules(0), Method::kNone, {}}, 0);
  const DeviceTotals before = t.ledger.device(t.gpu);
  const Use nan[] = {{t.pa, kNoIndex, std::nan("")}};
  const Use negative[] = {{t.pa, kNoIndex, -1}};
  const Use unknown[] = {{12345, kNoIndex, 1}};
  const Use no_workload[] = {{kNoIndex, 999, 1}};
  for (auto uses : {std::span<const Use>(nan), std::span<const Use>(negative),
                    std::span<const Use>(unknown), std::span<const Use>(no_workload)}) {
    EXPECT_THROW(t.ledger.record({t.gpu, Millijoules(100), Millijoules(0), Method::kNone, uses}, 1),
                 Error);
  }
  EXPECT_THROW(t.ledger.record({t.gpu, Millijoules(100), Millijoules(-1), Method::kNone, {}}, 1),
               Error);
  EXPECT_THROW(t.ledger.record({7, Millijoules(100), Millijoules(0), Method::kNone, {}}, 1), Error);
  EXPECT_EQ(t.ledger.device(t.gpu).measured, before.measured);
  EXPECT_EQ(t.ledger.device(t.gpu).intervals, before.intervals);
}

TEST(LedgerRetention, EndedConsumersKeepTheirEnergyUntilRetiredAndSumsStillReconcile) {
  Ledger ledger(LedgerOptions{.retention = std::chrono::seconds(10)});
  const DeviceIndex gpu = ledger.add_device("GPU 0");
  const WorkloadIndex w = ledger.workload(cgroup_labels("/job"), 0);
  const ProcessIndex p = ledger.process(1, 1, "a", w, 0);
  const Use use[] = {{p, kNoIndex, 1}};
  ledger.record({gpu, Millijoules(0), Millijoules(0), Method::kNone, {}}, 0);
  ledger.record({gpu, Millijoules(700), Millijoules(0), Method::kEqualSplit, use}, 1);
  ledger.expire(5);
  EXPECT_EQ(ledger.live_processes(), 1u);
  ledger.expire(12);  // unseen for more than 10 s
  EXPECT_EQ(ledger.live_processes(), 0u);
  EXPECT_EQ(ledger.live_workloads(), 0u);
  EXPECT_EQ(ledger.device(gpu).retired.value(), 700);
  EXPECT_EQ(ledger.device(gpu).attributed.value(), 700);
  EXPECT_FALSE(ledger.find_workload("/job"));
}

TEST(LedgerRetention, TenThousandShortLivedProcessesStayWithinTheBounds) {
  Ledger ledger(LedgerOptions{
      .retention = std::chrono::seconds(600), .max_processes = 32, .max_workloads = 64});
  const DeviceIndex gpu = ledger.add_device("GPU 0");
  std::int64_t counter = 0;
  ledger.record({gpu, Millijoules(0), Millijoules(0), Method::kNone, {}}, 0);
  for (std::uint32_t i = 0; i < 10'000; ++i) {
    const double now = 1 + i;
    const WorkloadIndex w =
        ledger.workload(cgroup_labels("/burst/" + std::to_string(i % 500)), now);
    const ProcessIndex p = ledger.process(1000 + i, i, "short", w, now);
    const Use use[] = {{p, kNoIndex, 1}};
    counter += 10;
    ledger.record({gpu, Millijoules(counter), Millijoules(1), Method::kEqualSplit, use}, now);
    ledger.expire(now);
    ASSERT_LE(ledger.live_processes(), 32u);
    ASSERT_LE(ledger.live_workloads(), 64u);
  }
  std::int64_t live = 0;
  ledger.for_each_workload(
      [&](const Ledger::WorkloadView& v) { live += v.energy[gpu].total.value(); });
  const auto& d = ledger.device(gpu);
  EXPECT_EQ(live + d.retired.value(), d.attributed.value());
  EXPECT_EQ(d.attributed.value(), 90'000);
}

// Random timelines: devices, consumers that come and go, counters that grow
// (and now and then restart), idle, zero and positive weights, workload and
// process uses. After every step every device is conserved to the mJ.
TEST(LedgerProperty, RandomTimelinesAreConservedExactlyWithNoNegativeShare) {
  std::mt19937_64 rng(2026);
  for (int timeline = 0; timeline < 40; ++timeline) {
    Ledger ledger(LedgerOptions{
        .retention = std::chrono::seconds(20), .max_processes = 50, .max_workloads = 12});
    std::vector<DeviceIndex> devices;
    std::vector<std::int64_t> counters;
    for (int d = 0; d < 3; ++d) {
      devices.push_back(ledger.add_device("dev" + std::to_string(d)));
      counters.push_back(static_cast<std::int64_t>(rng() % 1'000'000));
    }
    for (int step = 0; step < 300; ++step) {
      const double now = step;
      std::vector<Use> uses;
      const int consumers = static_cast<int>(rng() % 8);
      for (int c = 0; c < consumers; ++c) {
        const auto w = ledger.workload(cgroup_labels("/w" + std::to_string(rng() % 20)), now);
        const double weight = rng() % 3 == 0 ? 0.0 : static_cast<double>(rng() % 1000) / 7.0;
        if (rng() % 2) {
          const auto pid = static_cast<std::uint32_t>(rng() % 60);
          uses.push_back({ledger.process(pid, pid % 3, "p", w, now), kNoIndex, weight});
        } else {
          uses.push_back({kNoIndex, w, weight});
        }
      }
      for (std::size_t d = 0; d < devices.size(); ++d) {
        if (rng() % 50 == 0) {
          counters[d] = static_cast<std::int64_t>(rng() % 1000);  // a restart
        } else {
          counters[d] += static_cast<std::int64_t>(rng() % 400'000);
        }
        const Millijoules idle(static_cast<std::int64_t>(rng() % 150'000));
        ledger.record(
            {devices[d], Millijoules(counters[d]), idle, Method::kProcessUtilization, uses}, now);
      }
      ledger.expire(now);
      for (auto d : devices) {
        const auto& t = ledger.device(d);
        ASSERT_EQ((t.before_start + t.idle + t.attributed + t.unattributed).value(),
                  t.measured.value());
        ASSERT_GE(t.idle.value(), 0);
        ASSERT_GE(t.unattributed.value(), 0);
        std::int64_t workloads = 0;
        ledger.for_each_workload([&](const Ledger::WorkloadView& v) {
          ASSERT_GE(v.energy[d].total.value(), 0);
          workloads += v.energy[d].total.value();
        });
        ASSERT_EQ(workloads + t.retired.value(), t.attributed.value()) << "timeline " << timeline;
      }
      ASSERT_LE(ledger.live_processes(), 50u);
    }
  }
}

}  // namespace
}  // namespace zeus::attribution
