// Figures 6 / 7 / 8 / 19 (Zeus against Default and the grid searches): the
// table and the regret curves against replays made here, one per seed and
// strategy, reduced with the normalizers and the optimum of a brute force
// over the raw trace files; the CSV columns the plots draw; the search
// path's invariants; and the report's claims over its ten seeds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "raw_traces_helpers.h"
#include "util/csv.h"
#include "zeus/sim/paper/paper.h"
#include "zeus/sim/paper/paper_report.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"

namespace zeus::sim::paper {
namespace {

constexpr double kEta = 0.5;
// Not 1..n, so that a seed taken by its index is caught.
const std::vector<std::uint64_t> kSeeds = {3, 8};

const TraceSet& traces() {
  static const TraceSet t =
      TraceSet::load(std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces", trace_gpus());
  return t;
}

struct Report {
  PaperData data;
  PaperFiles files;
};
const Report& report() {
  static const Report r = [] {
    PaperOptions o;
    o.seeds = kSeeds;
    o.figures = {PaperFigure::kBaselines};
    Report out{compute_paper(traces(), o), {}};
    out.files = format_paper_report(out.data, {});
    return out;
  }();
  return r;
}

CsvTable report_csv(const std::string& name) {
  const std::string* text = report().files.find("csv/" + name);
  if (text == nullptr) throw std::runtime_error("no csv/" + name);
  return CsvTable::parse(*text, name);
}

// One replay reduced here from its runs alone: per recurrence the sums of
// its runs, the cost eta*E + (1-eta)*max power*T, and the raw normalizers.
struct Replay {
  double eta_norm = 0, tta_norm = 0;
  std::vector<double> cum_regret_rel;  // per recurrence
};
Replay replay(const WorkloadTrace& t, const raw::RawWorkload& w, Strategy k, std::uint64_t seed) {
  SimOptions o;
  o.seed = seed;
  const SimResult r = simulate(t, k, o);
  std::vector<double> e(static_cast<std::size_t>(t.num_recurrence)), s(e.size());
  for (const auto& run : r.runs) {
    e.at(static_cast<std::size_t>(run.recurrence)) += run.energy.value();
    s.at(static_cast<std::size_t>(run.recurrence)) += run.time.count();
  }
  Replay out;
  for (std::size_t i = e.size() - 5; i < e.size(); ++i) {
    out.eta_norm += e[i] / 5 / w.default_eta_j();
    out.tta_norm += s[i] / 5 / w.default_tta_s();
  }
  const double opt = raw::raw_optimum(w, kEta).cost;
  double cum = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    cum += (kEta * e[i] + (1 - kEta) * w.gpu_max_limit_w * s[i] - opt) / opt;
    out.cum_regret_rel.push_back(cum);
  }
  return out;
}

// Mean and sample sd, written here.
std::pair<double, double> mean_sd(const std::vector<double>& v) {
  double m = 0, q = 0;
  for (double x : v) m += x / static_cast<double>(v.size());
  for (double x : v) q += (x - m) * (x - m);
  return {m, v.size() > 1 ? std::sqrt(q / static_cast<double>(v.size() - 1)) : 0.0};
}

// Per cell ("gpu workload"), strategy and seed, the replays made here.
using Replays = std::map<std::string, std::map<Strategy, std::vector<Replay>>>;
const Replays& independent() {
  static const Replays all = [] {
    Replays out;
    for (const auto& gpu : trace_gpus()) {
      for (const auto& spec : paper_workloads()) {
        const WorkloadTrace t = traces().workload(gpu, spec);
        const raw::RawWorkload w = raw::raw_workload(gpu, spec);
        for (Strategy k : all_strategies()) {
          for (auto seed : kSeeds) out[gpu + " " + spec.name()][k].push_back(replay(t, w, k, seed));
        }
      }
    }
    return out;
  }();
  return all;
}

template <class F>
std::pair<double, double> over_seeds(const std::vector<Replay>& rs, F f) {
  std::vector<double> v;
  for (const auto& r : rs) v.push_back(f(r));
  return mean_sd(v);
}

void expect_rel(double actual, double expected, double tol, const std::string& where) {
  EXPECT_NEAR(actual, expected, tol * std::max(1.0, std::abs(expected))) << where;
}

// Would fail for a normalizer other than the expected Default at (b0, the
// largest limit) over all of b0's runs, a window other than the last five
// recurrences, an optimum C* over configurations that do not always converge
// or costed with the job's limit instead of the GPU's maximum, a population
// sd, seeds taken by index, or a strategy's numbers filed under another.
TEST(PaperBaselines, EveryCellIsTheSpreadOfReplaysReducedOverTheRawTraces) {
  const auto& cells = report().data.baselines;
  ASSERT_EQ(cells.size(), trace_gpus().size() * paper_workloads().size());
  for (const auto& c : cells) {
    const std::string cell = c.gpu + " " + c.workload;
    const raw::RawWorkload w = raw::raw_workload(c.gpu, find_workload(c.workload));
    const raw::RawOptimum opt = raw::raw_optimum(w, kEta);
    EXPECT_EQ(c.default_batch_size, w.b0) << cell;
    EXPECT_EQ(c.reference.opt_batch_size, opt.batch_size) << cell;
    EXPECT_EQ(to_watts(c.reference.opt_power_limit).value(), opt.limit_w) << cell;
    ASSERT_EQ(c.strategies.size(), all_strategies().size()) << cell;
    for (const auto& [k, s] : c.strategies) {
      const std::string where = cell + " " + std::string(strategy_name(k));
      const auto& rs = independent().at(cell).at(k);
      const auto eta = over_seeds(rs, [](const Replay& r) { return r.eta_norm; });
      const auto tta = over_seeds(rs, [](const Replay& r) { return r.tta_norm; });
      const auto reg = over_seeds(rs, [](const Replay& r) { return r.cum_regret_rel.back(); });
      EXPECT_EQ(s.eta_norm.n, static_cast<int>(kSeeds.size())) << where;
      expect_rel(s.eta_norm.mean, eta.first, 1e-9, where + " eta mean");
      expect_rel(s.eta_norm.sd, eta.second, 1e-9, where + " eta sd");
      expect_rel(s.tta_norm.mean, tta.first, 1e-9, where + " tta mean");
      expect_rel(s.tta_norm.sd, tta.second, 1e-9, where + " tta sd");
      expect_rel(s.regret_rel.mean, reg.first, 1e-9, where + " regret mean");
      expect_rel(s.regret_rel.sd, reg.second, 1e-9, where + " regret sd");
    }
  }
}

// Would fail for swapped columns in the CSVs the table and the bars are
// drawn from (ETA under TTA, Grid under Directional), a ratio to another
// strategy than Zeus, or a row missing for a strategy.
TEST(PaperBaselines, SummaryAndBarCsvsHoldEachStrategyInItsOwnColumns) {
  const CsvTable summary = report_csv("fig06-summary.csv");
  const CsvTable bars = report_csv("fig06-bars.csv");
  ASSERT_EQ(summary.num_rows(), report().data.baselines.size() * all_strategies().size());
  ASSERT_EQ(bars.num_rows(), report().data.baselines.size());
  auto col = [](const CsvTable& t, std::size_t r, const char* name) {
    return t.as_double(r, t.column(name));
  };
  for (std::size_t r = 0; r < summary.num_rows(); ++r) {
    const std::string cell =
        summary.cell(r, summary.column("gpu")) + " " + summary.cell(r, summary.column("workload"));
    const Strategy k = parse_strategy(summary.cell(r, summary.column("strategy")));
    const auto& rs = independent().at(cell).at(k);
    const std::string where = cell + " " + std::string(strategy_name(k));
    const auto reg = over_seeds(rs, [](const Replay& x) { return x.cum_regret_rel.back(); });
    const auto zeus = over_seeds(independent().at(cell).at(Strategy::kZeus),
                                 [](const Replay& x) { return x.cum_regret_rel.back(); });
    expect_rel(col(summary, r, "eta_norm_mean"),
               over_seeds(rs, [](const Replay& x) { return x.eta_norm; }).first, 1e-5, where);
    expect_rel(col(summary, r, "tta_norm_mean"),
               over_seeds(rs, [](const Replay& x) { return x.tta_norm; }).first, 1e-5, where);
    expect_rel(col(summary, r, "cum_regret_rel_mean"), reg.first, 1e-5, where);
    expect_rel(col(summary, r, "regret_over_zeus"), reg.first / zeus.first, 1e-5, where);
    EXPECT_EQ(summary.as_int(r, summary.column("seeds")), static_cast<int>(kSeeds.size()));
  }
  const std::vector<std::pair<std::string, Strategy>> columns = {
      {"zeus", Strategy::kZeus},
      {"grid", Strategy::kGrid},
      {"griddir", Strategy::kGridDirectional}};
  for (std::size_t r = 0; r < bars.num_rows(); ++r) {
    const std::string cell =
        bars.cell(r, bars.column("gpu")) + " " + bars.cell(r, bars.column("workload"));
    for (const auto& [prefix, k] : columns) {
      const auto& rs = independent().at(cell).at(k);
      const auto eta = over_seeds(rs, [](const Replay& x) { return x.eta_norm; });
      const auto tta = over_seeds(rs, [](const Replay& x) { return x.tta_norm; });
      const std::string where = cell + " " + prefix;
      expect_rel(col(bars, r, (prefix + "_eta").c_str()), eta.first, 1e-5, where);
      expect_rel(col(bars, r, (prefix + "_eta_sd").c_str()), eta.second, 1e-5, where);
      expect_rel(col(bars, r, (prefix + "_tta").c_str()), tta.first, 1e-5, where);
      expect_rel(col(bars, r, (prefix + "_tta_sd").c_str()), tta.second, 1e-5, where);
    }
  }
}

// Default runs one configuration, so its energy and time over the expected
// Default are the same ratio of epochs, between b0's fastest and slowest run
// over their mean. Would fail for energy and time normalized by different
// configurations, a Default that profiles, or one cut by early stopping
// (a cut run plus its retry exceeds the slowest run).
TEST(PaperBaselines, DefaultIsTheTracesDefaultConfiguration) {
  for (const auto& c : report().data.baselines) {
    const std::string cell = c.gpu + " " + c.workload;
    const raw::RawWorkload w = raw::raw_workload(c.gpu, find_workload(c.workload));
    const auto& runs = w.epochs.at(w.b0);
    const double lo = *std::min_element(runs.begin(), runs.end()) / w.mean_epochs(w.b0);
    const double hi = *std::max_element(runs.begin(), runs.end()) / w.mean_epochs(w.b0);
    const auto& d = c.strategies.at(Strategy::kDefault);
    EXPECT_NEAR(d.eta_norm.mean, d.tta_norm.mean, 1e-12) << cell;
    EXPECT_NEAR(d.eta_norm.sd, d.tta_norm.sd, 1e-12) << cell;
    EXPECT_GE(d.eta_norm.min, lo - 1e-12) << cell;
    EXPECT_LE(d.eta_norm.max, hi + 1e-12) << cell;
  }
}

// Figure 7. Every grid search starts with the default configuration with no
// cap yet, so on the same seed its first recurrence is Default's and the
// curves start at Default's first regret. Would fail for a curve that is not
// cumulative or is shifted by a recurrence, a grid search that does not
// start at (b0, max limit), a curve CSV with columns swapped, or a curve
// whose end is not the table's regret.
TEST(PaperBaselines, RegretCurvesAccumulateEveryRecurrenceAndAgreeWithTheTable) {
  for (const auto& gpu : trace_gpus()) {
    const CsvTable csv = report_csv("fig07-regret-" + gpu + ".csv");
    std::size_t row = 0;
    for (const auto& c : report().data.baselines) {
      if (c.gpu != gpu) continue;
      const std::string cell = c.gpu + " " + c.workload;
      const int n = traces().workload(c.gpu, find_workload(c.workload)).num_recurrence;
      const auto& def = independent().at(cell).at(Strategy::kDefault);
      const double def_first =
          over_seeds(def, [](const Replay& x) { return x.cum_regret_rel.front(); }).first;
      const std::vector<std::pair<Strategy, std::string>> columns = {
          {Strategy::kZeus, "zeus"},
          {Strategy::kGrid, "grid"},
          {Strategy::kGridNoEarlyStop, "grid_noes"},
          {Strategy::kGridDirectional, "grid_dir"},
          {Strategy::kGridDirectionalNoEarlyStop, "grid_dir_noes"}};
      for (const auto& [k, prefix] : columns) {
        const std::string where = cell + " " + std::string(strategy_name(k));
        const auto& curve = c.strategies.at(k).cum_regret_rel;
        ASSERT_EQ(static_cast<int>(curve.size()), n) << where;
        const auto& rs = independent().at(cell).at(k);
        for (std::size_t i = 0; i < curve.size(); ++i) {
          const auto m = over_seeds(rs, [i](const Replay& x) { return x.cum_regret_rel[i]; });
          expect_rel(curve[i].mean, m.first, 1e-9, where + " at " + std::to_string(i));
          expect_rel(curve[i].sd, m.second, 1e-9, where + " at " + std::to_string(i));
        }
        expect_rel(curve.back().mean, c.strategies.at(k).regret_rel.mean, 1e-9, where);
        if (k != Strategy::kZeus) expect_rel(curve.front().mean, def_first, 1e-9, where);
      }
      for (int i = 0; i < n; ++i, ++row) {
        ASSERT_LT(row, csv.num_rows()) << cell;
        EXPECT_EQ(csv.cell(row, csv.column("workload")), c.workload);
        EXPECT_EQ(csv.as_int(row, csv.column("recurrence")), i + 1) << cell;
        for (const auto& [k, prefix] : columns) {
          const auto& p = c.strategies.at(k).cum_regret_rel[static_cast<std::size_t>(i)];
          const std::string where = cell + " " + prefix + " at " + std::to_string(i + 1);
          expect_rel(csv.as_double(row, csv.column(prefix + "_mean")), p.mean, 1e-5, where);
          expect_rel(csv.as_double(row, csv.column(prefix + "_sd")), p.sd, 1e-5, where);
        }
      }
    }
    EXPECT_EQ(row, csv.num_rows()) << gpu;
  }
}

// Figure 8. Would fail for the path of another seed or workload, recurrences
// numbered off by one or ending before the last, a recurrence that goes on
// after reaching the target, profiling a batch size more than once, or a
// just-in-time limit chosen with the wrong maximum power, the wrong eta or
// ties broken toward the lower limit.
TEST(PaperBaselines, SearchPathIsOneSeedsZeusReplayWithOneProfiledLimitPerBatchSize) {
  ASSERT_TRUE(report().data.search_path.has_value());
  const SearchPath& p = *report().data.search_path;
  EXPECT_EQ(p.gpu, kPaperGpu);
  EXPECT_EQ(p.workload, kPaperWorkload);
  EXPECT_EQ(p.seed, kSeeds.front());
  const WorkloadSpec& spec = find_workload(p.workload);
  const WorkloadTrace t = traces().workload(p.gpu, spec);
  const raw::RawWorkload w = raw::raw_workload(p.gpu, spec);
  SimOptions o;
  o.seed = p.seed;
  const SimResult again = simulate(t, Strategy::kZeus, o);
  ASSERT_EQ(p.runs.size(), again.runs.size());
  const CsvTable csv = report_csv("fig08-search-path.csv");
  ASSERT_EQ(csv.num_rows(), p.runs.size());
  std::map<int, double> limit_of;  // batch size -> its one power limit (W)
  int recurrence = 1, failed = 0;
  for (std::size_t r = 0; r < csv.num_rows(); ++r) {
    const std::string where = "run " + std::to_string(r + 1);
    EXPECT_EQ(csv.as_int(r, csv.column("run")), static_cast<long long>(r + 1));
    const int bs = static_cast<int>(csv.as_int(r, csv.column("batch_size")));
    const double pl = csv.as_double(r, csv.column("power_limit_W"));
    EXPECT_EQ(bs, again.runs[r].batch_size) << where;
    EXPECT_EQ(pl, to_watts(again.runs[r].power_limit).value()) << where;
    ASSERT_TRUE(w.limits.count(bs) && w.limits.at(bs).count(pl)) << where << " not in the trace";
    const bool first_use = limit_of.count(bs) == 0;
    EXPECT_EQ(csv.cell(r, csv.column("profiled")) == "1", first_use) << where;
    if (first_use) limit_of[bs] = pl;
    EXPECT_EQ(pl, limit_of[bs]) << where << ": the limit of a batch size changed";
    EXPECT_EQ(csv.as_int(r, csv.column("recurrence")), recurrence) << where;
    const bool reached = csv.cell(r, csv.column("reached")) == "1";
    failed += !reached;
    if (reached) ++recurrence;
  }
  EXPECT_EQ(recurrence - 1, t.num_recurrence);
  // The just-in-time choice: least (eta * P_avg + (1 - eta) * max power) * T per
  // epoch at that batch size, ties to the higher limit.
  for (const auto& [bs, pl] : limit_of) {
    double best = std::numeric_limits<double>::infinity(), best_pl = 0;
    const auto& limits = w.limits.at(bs);
    for (auto it = limits.rbegin(); it != limits.rend(); ++it) {
      const double c = w.epoch_cost(kEta, bs, it->first);
      if (c < best) {
        best = c;
        best_pl = it->first;
      }
    }
    EXPECT_EQ(pl, best_pl) << "batch size " << bs;
  }
  const std::string* md = report().files.find("report.md");
  ASSERT_NE(md, nullptr);
  EXPECT_NE(md->find(fmt::format("{} runs over {} recurrences, {} of them did not reach",
                                 p.runs.size(), t.num_recurrence, failed)),
            std::string::npos);
}

// What the report says of this figure over its ten seeds: Zeus's normalized
// ETA is below Default's on every GPU and workload, and Grid Search
// accumulates more regret than Zeus on every pair. Would fail if a change
// to the strategies or the metrics made the report's sentences untrue.
TEST(PaperBaselines, TheReportsClaimsHoldOverItsTenSeeds) {
  PaperOptions o;  // the report's seeds
  o.figures = {PaperFigure::kBaselines};
  const PaperData d = compute_paper(traces(), o);
  for (const auto& c : d.baselines) {
    const std::string cell = c.gpu + " " + c.workload;
    const auto& z = c.strategies.at(Strategy::kZeus);
    EXPECT_LT(z.eta_norm.mean, 1.0) << cell;
    EXPECT_GT(c.strategies.at(Strategy::kGrid).regret_rel.mean, z.regret_rel.mean) << cell;
  }
}

}  // namespace
}  // namespace zeus::sim::paper
