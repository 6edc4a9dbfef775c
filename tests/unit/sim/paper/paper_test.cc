// `zeus simulate paper`'s library: the configuration landscape checked
// against a brute force written here from the trace tables, and the defining
// property of each reproduced figure (non-dominated front, beta = 2 is 1.0,
// eta's ends, the ablation's variants) on the project's copy of the traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "zeus/sim/paper/landscape.h"
#include "zeus/sim/paper/paper.h"
#include "zeus/sim/paper/paper_report.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace zeus::sim::paper {
namespace {

const std::string kTraces = std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces";

const TraceSet& traces() {
  static const TraceSet t = TraceSet::load(kTraces, trace_gpus());
  return t;
}

// Expected epochs to target of a batch size when every run reaches it
// (the paper's feasibility), NaN otherwise.
double mean_epochs_if_feasible(const WorkloadTrace& t, const BatchSizeTrace& b) {
  double sum = 0;
  for (double e : b.target_epochs) {
    if (std::isnan(e) || e > t.spec.max_epochs) return std::nan("");
    sum += e;
  }
  return b.target_epochs.empty() ? std::nan("") : sum / static_cast<double>(b.target_epochs.size());
}

TEST(PaperLandscape, OpportunityMatchesABruteForceOverTheTraceTables) {
  int checked = 0;
  for (const auto& gpu : trace_gpus()) {
    for (const auto& spec : paper_workloads()) {
      const WorkloadTrace t = traces().workload(gpu, spec);
      const auto& b0 = t.batch(t.default_batch_size);
      const double b0_epochs = mean_epochs_if_feasible(t, b0);
      if (std::isnan(b0_epochs)) continue;  // default not always converging: not comparable
      const double default_eta = b0_epochs * b0.limits.front().energy_per_epoch.value();
      double best_joint = default_eta, best_bs = default_eta, best_pl = default_eta;
      for (const auto& b : t.batch_sizes) {
        const double epochs = mean_epochs_if_feasible(t, b);
        if (std::isnan(epochs)) continue;
        for (std::size_t i = 0; i < b.limits.size(); ++i) {
          const double e = epochs * b.limits[i].energy_per_epoch.value();
          best_joint = std::min(best_joint, e);
          if (i == 0) best_bs = std::min(best_bs, e);
          if (b.batch_size == t.default_batch_size) best_pl = std::min(best_pl, e);
        }
      }
      const Opportunity o = opportunity(t);
      const std::string where = gpu + " " + t.name();
      EXPECT_NEAR(o.default_eta.value(), default_eta, 1e-9 * default_eta) << where;
      EXPECT_NEAR(o.best_eta.value(), best_joint, 1e-9 * default_eta) << where;
      EXPECT_NEAR(o.best_batch_size_eta.value(), best_bs, 1e-9 * default_eta) << where;
      EXPECT_NEAR(o.best_power_limit_eta.value(), best_pl, 1e-9 * default_eta) << where;
      // Joint tuning is never worse than either knob alone.
      EXPECT_LE(o.best_eta, o.best_batch_size_eta) << where;
      EXPECT_LE(o.best_eta, o.best_power_limit_eta) << where;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);  // 4 GPUs x 6 workloads, less any with a non-converging default
}

TEST(PaperLandscape, ParetoFrontIsExactlyTheNonDominatedFeasiblePoints) {
  for (const auto& spec : paper_workloads()) {
    const WorkloadTrace t = traces().workload("v100", spec);
    const auto points = configurations(t);
    const auto front = pareto_front(points);
    ASSERT_FALSE(front.empty()) << t.name();
    auto dominates = [](const ConfigPoint& a, const ConfigPoint& b) {
      return a.eta <= b.eta && a.tta <= b.tta && (a.eta < b.eta || a.tta < b.tta);
    };
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!points[i].feasible()) {
        EXPECT_EQ(std::count(front.begin(), front.end(), i), 0) << "infeasible on front";
        continue;
      }
      bool dominated = false;
      for (const auto& q : points)
        dominated = dominated || (q.feasible() && dominates(q, points[i]));
      const bool on_front = std::count(front.begin(), front.end(), i) > 0;
      if (dominated) {
        EXPECT_FALSE(on_front) << t.name() << " point " << i;
      }
      // A non-dominated point is on the front or an exact duplicate of one.
      if (!dominated && !on_front) {
        bool duplicate = false;
        for (std::size_t f : front) {
          duplicate =
              duplicate || (points[f].eta == points[i].eta && points[f].tta == points[i].tta);
        }
        EXPECT_TRUE(duplicate) << t.name() << " point " << i << " missing from the front";
      }
    }
    for (std::size_t k = 1; k < front.size(); ++k) {
      EXPECT_LT(points[front[k - 1]].tta, points[front[k]].tta);
      EXPECT_GT(points[front[k - 1]].eta, points[front[k]].eta);
    }
  }
}

TEST(PaperFigures, SelectionParsesPaperNumbersAndRefusesFigureNine) {
  EXPECT_EQ(parse_paper_figures("12,11"),
            (std::vector<PaperFigure>{PaperFigure::kEtaSweep, PaperFigure::kBetaSweep}));
  EXPECT_EQ(parse_paper_figures("15"), std::vector<PaperFigure>{PaperFigure::kOpportunity});
  EXPECT_EQ(parse_paper_figures("all").size(), paper_figure_catalog().size());
  try {
    parse_paper_figures("9");
    ADD_FAILURE() << "figure 9 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Alibaba"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_paper_figures("42"), Error);
  EXPECT_THROW(parse_paper_figures("1,15"), Error);  // one figure twice
  EXPECT_THROW(parse_paper_figures(""), Error);
}

TEST(PaperFigures, OptionsWithoutBetaTwoOrWithBadEtasAreRefused) {
  PaperOptions o;
  o.betas = {1.5, 3.0};
  EXPECT_THROW(validate(o), Error);
  o = PaperOptions{};
  o.etas = {0.5, 0.2};
  EXPECT_THROW(validate(o), Error);
  o = PaperOptions{};
  o.seeds = {1, 1};
  EXPECT_THROW(validate(o), Error);
  EXPECT_NO_THROW(validate(PaperOptions{}));
}

TEST(PaperFigures, BetaTwoIsExactlyOneAndEveryRowHasEverySeed) {
  PaperOptions o;
  o.seeds = {1, 2, 3};
  o.figures = {PaperFigure::kBetaSweep};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_TRUE(d.beta.has_value());
  EXPECT_EQ(d.beta->rows.size(), paper_workloads().size() * o.betas.size());
  for (const auto& row : d.beta->rows) {
    EXPECT_EQ(row.ratio.n, 3) << row.workload;
    if (row.beta == 2.0) {
      EXPECT_EQ(row.ratio.mean, 1.0) << row.workload;
      EXPECT_EQ(row.ratio.sd, 0.0) << row.workload;
    } else {
      EXPECT_GT(row.ratio.mean, 0.0) << row.workload;
    }
  }
  EXPECT_EQ(d.beta->geo_mean.at(2.0), 1.0);
  EXPECT_FALSE(d.ablation.has_value());  // only what was selected
  EXPECT_EQ(d.simulations, paper_workloads().size() * o.betas.size() * o.seeds.size());
}

TEST(PaperFigures, EtaEndsPickTheTimeAndEnergyOptima) {
  PaperOptions o;
  o.seeds = {1, 2};
  o.figures = {PaperFigure::kEtaSweep};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_TRUE(d.eta_sweep.has_value());
  const auto& pts = d.eta_sweep->points;
  ASSERT_EQ(pts.size(), o.etas.size());
  const WorkloadTrace t = traces().workload("v100", find_workload(std::string(kPaperWorkload)));
  double min_tta = std::numeric_limits<double>::infinity();
  double min_eta = std::numeric_limits<double>::infinity();
  for (const auto& c : configurations(t)) {
    if (!c.feasible()) continue;
    min_tta = std::min(min_tta, c.tta.count());
    min_eta = std::min(min_eta, c.eta.value());
  }
  EXPECT_NEAR(pts.front().oracle_tta.count(), min_tta, 1e-9 * min_tta);
  EXPECT_NEAR(pts.back().oracle_eta.value(), min_eta, 1e-9 * min_eta);
  // Moving eta from 0 to 1 trades time for energy along the front.
  EXPECT_GE(pts.front().oracle_eta, pts.back().oracle_eta);
  EXPECT_LE(pts.front().oracle_tta, pts.back().oracle_tta);
  // Every optimum in between is on the Pareto front.
  const auto points = configurations(t);
  const auto front = pareto_front(points);
  for (const auto& p : pts) {
    EXPECT_EQ(p.zeus_eta_j.n, 2);
    bool on_front = false;
    for (std::size_t f : front) {
      on_front = on_front || (points[f].batch_size == p.oracle.opt_batch_size &&
                              points[f].power_limit == p.oracle.opt_power_limit);
    }
    EXPECT_TRUE(on_front) << "eta " << p.eta;
  }
}

TEST(PaperFigures, ParetoPanelsLieBetweenThePowerLinesAndLeaveTheDefaultOff) {
  PaperOptions o;
  o.seeds = {1};
  o.figures = {PaperFigure::kParetoFront};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_EQ(d.landscape.size(), paper_workloads().size());
  EXPECT_EQ(d.simulations, 0u);  // the trace alone
  for (const auto& panel : d.landscape) {
    ASSERT_FALSE(panel.front.empty()) << panel.workload;
    for (const auto& c : panel.points) {
      if (!c.feasible()) continue;
      const double tta = c.tta.count(), eta = c.eta.value();
      EXPECT_GE(eta, panel.min_average_power.value() * tta * (1 - 1e-12)) << panel.workload;
      EXPECT_LE(eta, panel.max_average_power.value() * tta * (1 + 1e-12)) << panel.workload;
    }
    for (std::size_t f : panel.front) {
      const auto& c = panel.points[f];
      EXPECT_FALSE(c.batch_size == panel.default_batch_size &&
                   c.power_limit == panel.max_power_limit)
          << panel.workload << ": the default is on the front";
    }
  }
}

TEST(PaperFigures, AblationComparesEachVariantWithFullZeusOnTheSameSeeds) {
  const auto full = SimOptions{};
  EXPECT_TRUE(std::isinf(ablated_options(full, Ablation::kNoEarlyStopping).beta));
  EXPECT_EQ(ablated_options(full, Ablation::kNoPruning).num_pruning_rounds, 0);
  EXPECT_EQ(ablated_options(full, Ablation::kNoJitProfiling).power_limit_search,
            PowerLimitSearch::kOnePerRecurrence);
  PaperOptions o;
  o.seeds = {1, 2};
  o.figures = {PaperFigure::kAblation};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_TRUE(d.ablation.has_value());
  EXPECT_EQ(d.ablation->rows.size(), paper_workloads().size() * all_ablations().size());
  for (const auto& row : d.ablation->rows) {
    EXPECT_EQ(row.energy_ratio.n + static_cast<int>(row.stuck_seeds.size()), 2) << row.workload;
    EXPECT_EQ(row.stuck_seeds.size(), row.stuck_at.size());
  }
  // Without early stopping a failed run burns up to max_epochs: never cheaper
  // than full Zeus across the workloads.
  EXPECT_GE(d.ablation->geo_mean_cost.at(Ablation::kNoEarlyStopping), 1.0);
}

TEST(PaperFigures, AblationsNeverBeatFullZeusOnTheGeometricMean) {
  PaperOptions o;  // the report's ten seeds
  o.figures = {PaperFigure::kAblation};
  const PaperData d = compute_paper(traces(), o);
  for (auto a : all_ablations()) {
    EXPECT_GT(d.ablation->geo_mean_energy.at(a), 1.0) << ablation_name(a);
    EXPECT_GT(d.ablation->geo_mean_cost.at(a), 1.0) << ablation_name(a);
  }
}

TEST(PaperFigures, DriftWindowFollowsTheMove) {
  PaperOptions o;
  o.figures = {PaperFigure::kDrift};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_TRUE(d.drift.has_value());
  ASSERT_EQ(d.drift->variants.size(), 2u);
  const auto& windowed = d.drift->variants[0];
  const auto& unwindowed = d.drift->variants[1];
  EXPECT_EQ(windowed.window_size, 10);
  EXPECT_EQ(unwindowed.window_size, 0);
  EXPECT_NE(d.drift->optimal_batch_size.front(), d.drift->optimal_batch_size.back());
  EXPECT_GT(windowed.share_optimal_after_drift, 0.75);
  EXPECT_GT(windowed.share_optimal_after_drift, unwindowed.share_optimal_after_drift);
  EXPECT_LT(windowed.cum_regret_rel.back().mean, unwindowed.cum_regret_rel.back().mean);
}

TEST(PaperFigures, GpuGenerationsNormalizeByTheSameGpu) {
  PaperOptions o;
  o.seeds = {4, 7};
  o.figures = {PaperFigure::kGpuGenerations};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_EQ(d.baselines.size(), trace_gpus().size() * paper_workloads().size());
  for (const auto& cell : d.baselines) {
    ASSERT_EQ(cell.strategies.size(), 1u);  // only Zeus for this figure
    const WorkloadTrace t = traces().workload(cell.gpu, find_workload(cell.workload));
    // Independently: Zeus's last five recurrences over this GPU's expected Default.
    const auto& b0 = t.batch(t.default_batch_size);
    double epochs = 0;
    for (double e : b0.target_epochs) epochs += e;
    epochs /= static_cast<double>(b0.target_epochs.size());
    const double default_eta = epochs * b0.limits.front().energy_per_epoch.value();
    std::vector<double> norm;
    for (std::uint64_t seed : o.seeds) {
      SimOptions so;
      so.seed = seed;
      const SimResult r = simulate(t, Strategy::kZeus, so);
      double last5 = 0;
      for (std::size_t i = r.recurrences.size() - 5; i < r.recurrences.size(); ++i) {
        last5 += r.recurrences[i].energy.value();
      }
      norm.push_back(last5 / 5 / default_eta);
    }
    const auto& z = cell.strategies.at(Strategy::kZeus);
    EXPECT_NEAR(z.eta_norm.mean, spread_of(norm).mean, 1e-9) << cell.gpu << " " << cell.workload;
    EXPECT_EQ(z.eta_norm.n, 2);
  }
}

TEST(PaperFigures, ImprovementFactorsMoveMonotonicallyWithEta) {
  PaperOptions o;
  o.seeds = {1};
  o.figures = {PaperFigure::kImprovementFactors};
  const PaperData d = compute_paper(traces(), o);
  ASSERT_EQ(d.improvement.size(), paper_workloads().size());
  for (const auto& sweep : d.improvement) {
    for (std::size_t i = 1; i < sweep.points.size(); ++i) {
      const auto& a = sweep.points[i - 1];
      const auto& b = sweep.points[i];
      EXPECT_LE(a.oracle_energy_factor, b.oracle_energy_factor * (1 + 1e-12)) << sweep.workload;
      EXPECT_GE(a.oracle_time_factor * (1 + 1e-12), b.oracle_time_factor) << sweep.workload;
    }
    EXPECT_GT(sweep.points.back().oracle_energy_factor, 1.0) << sweep.workload;
  }
}

// The options the report's baselines and ablations add to the simulator.
TEST(PaperSimulator, DirectionalGridSearchTriesB0ThenSmallerSizesDescending) {
  const WorkloadTrace t = traces().workload("v100", find_workload("librispeech/deepspeech2"));
  SimOptions o;
  o.beta = std::numeric_limits<double>::infinity();
  const SimResult r = simulate(t, Strategy::kGridDirectionalNoEarlyStop, o);
  const auto& b0 = t.batch(t.default_batch_size);
  ASSERT_GT(r.runs.size(), b0.limits.size());
  for (std::size_t i = 0; i < b0.limits.size(); ++i) {
    EXPECT_EQ(r.runs[i].batch_size, t.default_batch_size) << i;
    EXPECT_EQ(r.runs[i].power_limit, b0.limits[i].power_limit) << i;
  }
  int next_smaller = 0;
  for (const auto& b : t.batch_sizes) {
    if (b.batch_size < t.default_batch_size) next_smaller = b.batch_size;
  }
  EXPECT_EQ(r.runs[b0.limits.size()].batch_size, next_smaller);
  EXPECT_EQ(strategy_name(Strategy::kGridDirectional), "grid-dir");
  EXPECT_EQ(parse_strategy("grid-dir-noes"), Strategy::kGridDirectionalNoEarlyStop);
  EXPECT_TRUE(uses_early_stopping(Strategy::kGridDirectional));
  EXPECT_FALSE(uses_early_stopping(Strategy::kGridDirectionalNoEarlyStop));
}

TEST(PaperSimulator, OneLimitPerRecurrenceNeverProfilesAndTriesLimitsHighestFirst) {
  const WorkloadTrace t = traces().workload("v100", find_workload("cifar100/shufflenetv2"));
  SimOptions o;
  o.power_limit_search = PowerLimitSearch::kOnePerRecurrence;
  const SimResult r = simulate(t, Strategy::kZeus, o);
  std::map<int, std::vector<Milliwatts>> seen;  // per batch size, in run order
  for (const auto& run : r.runs) {
    EXPECT_FALSE(run.profiled);
    seen[run.batch_size].push_back(run.power_limit);
  }
  for (const auto& [b, limits] : seen) {
    const auto& all = t.batch(b).limits;
    const std::size_t n = std::min(limits.size(), all.size());
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(limits[i], all[i].power_limit) << b << " " << i;
  }
  SimOptions jit;
  const SimResult j = simulate(t, Strategy::kZeus, jit);
  EXPECT_TRUE(
      std::any_of(j.runs.begin(), j.runs.end(), [](const RunRecord& x) { return x.profiled; }));
}

TEST(PaperSimulator, AStuckReplayStopsWhereAskedAndRaisesOtherwise) {
  const WorkloadTrace t = traces().workload("v100", find_workload("librispeech/deepspeech2"));
  int stuck = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SimOptions o = ablated_options(SimOptions{}, Ablation::kNoPruning);
    o.seed = seed;
    o.stop_when_stuck = true;
    const SimResult r = simulate(t, Strategy::kZeus, o);
    if (!r.stuck_at) {
      EXPECT_EQ(static_cast<int>(r.recurrences.size()), t.num_recurrence);
      continue;
    }
    ++stuck;
    EXPECT_EQ(static_cast<int>(r.recurrences.size()), *r.stuck_at) << seed;
    o.stop_when_stuck = false;
    EXPECT_THROW(simulate(t, Strategy::kZeus, o), Error) << seed;
  }
  EXPECT_GT(stuck, 0);  // the report's "5 of 10 seeds stuck"
  SimOptions bad;
  bad.num_pruning_rounds = -1;
  EXPECT_THROW(simulate(t, Strategy::kZeus, bad), Error);
}

TEST(PaperSimulator, CumulativeTotalsSumEveryRecurrence) {
  const WorkloadTrace t = traces().workload("v100", find_workload("squad/bert_base_uncased"));
  const SimResult r = simulate(t, Strategy::kZeus, SimOptions{});
  double e = 0, s = 0;
  for (const auto& rec : r.recurrences) {
    e += rec.energy.value();
    s += rec.time.count();
  }
  const RunSummary m = summarize_run(t, r, 0.5);
  EXPECT_NEAR(m.cum_energy.value(), e, 1e-9 * e);
  EXPECT_NEAR(m.cum_time.count(), s, 1e-9 * s);
}

TEST(PaperFigures, StatisticsHelpers) {
  const Spread s = spread_of({1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
  EXPECT_DOUBLE_EQ(s.sd, 1.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 3.0);
  EXPECT_EQ(spread_of({5.0}).sd, 0.0);
  EXPECT_DOUBLE_EQ(geometric_mean({2.0, 8.0}), 4.0);
  EXPECT_EQ(geometric_mean({1.0, 1.0, 1.0}), 1.0);
}

}  // namespace
}  // namespace zeus::sim::paper
