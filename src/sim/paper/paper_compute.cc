// compute_paper: plans the replays of every selected figure into one batch,
// runs it, and reduces each figure's per-seed results to means and spreads.
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "zeus/sim/paper/paper.h"
#include "zeus/sim/sweep.h"
#include "zeus/util/error.h"

namespace zeus::sim::paper {

namespace {

constexpr double kEta = 0.5;   // the paper's default trade-off
constexpr double kBeta = 2.0;  // and early-stopping factor
constexpr int kDriftWindow = 10;
constexpr int kDriftFollowSpan = 60;

// The replays of all figures, each with the sink that keeps what its figure
// needs from the result (called on a worker thread; each sink writes only
// its own slot).
class JobList {
 public:
  void add(const WorkloadTrace& trace, Strategy strategy, const SimOptions& options,
           std::function<void(SimResult&&)> sink) {
    jobs_.push_back({&trace, strategy, options});
    sinks_.push_back(std::move(sink));
  }
  void run(int threads, const PaperProgress& progress) {
    run_simulations(
        jobs_, threads, [&](std::size_t i, SimResult&& r) { sinks_[i](std::move(r)); },
        [&](std::size_t done, std::size_t total) {
          if (progress) progress("simulations", done, total);
        });
  }
  std::size_t size() const { return jobs_.size(); }

 private:
  std::vector<SimJob> jobs_;
  std::vector<std::function<void(SimResult&&)>> sinks_;
};

// Every trace a figure replays, built before anything runs (stable addresses).
class TraceCache {
 public:
  explicit TraceCache(const TraceSet& set) : set_(set) {}
  const WorkloadTrace& get(const std::string& gpu, const WorkloadSpec& spec) {
    const auto key = std::make_pair(gpu, spec.name());
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, set_.workload(gpu, spec)).first;
    return it->second;
  }

 private:
  const TraceSet& set_;
  std::map<std::pair<std::string, std::string>, WorkloadTrace> cache_;
};

SimOptions options_for(double eta, double beta, std::uint64_t seed) {
  SimOptions o;
  o.eta = eta;
  o.beta = beta;
  o.seed = seed;
  return o;
}

// Cumulative regret over C*, per recurrence.
std::vector<double> cum_regret_rel(const SimResult& r, const Reference& ref) {
  std::vector<double> out(r.recurrences.size());
  double cum = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    cum += (r.recurrences[i].cost - ref.opt_cost) / ref.opt_cost;
    out[i] = cum;
  }
  return out;
}

// Per-recurrence spread over seeds of equally long series.
std::vector<Spread> spread_per_index(const std::vector<std::vector<double>>& series) {
  std::vector<Spread> out;
  if (series.empty()) return out;
  const std::size_t n = series.front().size();
  std::vector<double> column(series.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t s = 0; s < series.size(); ++s) column[s] = series[s].at(i);
    out.push_back(spread_of(column));
  }
  return out;
}

template <class T, class F>
std::vector<double> collect(const std::vector<T>& slots, F f) {
  std::vector<double> out;
  out.reserve(slots.size());
  for (const auto& s : slots) out.push_back(f(s));
  return out;
}

// ---- Figures 1/15, 2/16, 5/17/18: the traces alone ----

LandscapePanel landscape_panel(const WorkloadTrace& t) {
  LandscapePanel p;
  p.gpu = t.gpu;
  p.workload = t.name();
  p.default_batch_size = t.default_batch_size;
  p.max_power_limit = t.batch(t.default_batch_size).limits.front().power_limit;
  p.default_eta = opportunity(t).default_eta;
  p.points = configurations(t);
  p.front = pareto_front(p.points);
  bool first = true;
  for (const auto& c : p.points) {
    if (!c.feasible()) continue;
    p.min_average_power = first ? c.average_power : std::min(p.min_average_power, c.average_power);
    p.max_average_power = first ? c.average_power : std::max(p.max_average_power, c.average_power);
    first = false;
  }
  return p;
}

// ---- Figures 6/7/8/19 and 14/23: the strategy matrix ----

struct MatrixSlot {
  double eta_norm = 0, tta_norm = 0, regret_rel = 0;
  std::vector<double> curve;  // cumulative regret / C*, only with Figure 7
};

class Matrix {
 public:
  void plan(JobList& jobs, TraceCache& cache, const std::vector<std::uint64_t>& seeds,
            const std::vector<Strategy>& strategies, bool curves, bool path) {
    for (const auto& gpu : trace_gpus()) {
      for (const auto& spec : paper_workloads()) {
        const WorkloadTrace& t = cache.get(gpu, spec);
        auto cell = std::make_unique<Cell>();
        cell->out.gpu = gpu;
        cell->out.workload = t.name();
        cell->out.default_batch_size = t.default_batch_size;
        cell->out.reference = compute_reference(t, kEta);
        for (Strategy k : strategies) {
          auto& slots = cell->slots[k];
          slots.resize(seeds.size());
          for (std::size_t s = 0; s < seeds.size(); ++s) {
            const bool keep_path = path && k == Strategy::kZeus && s == 0 && gpu == kPaperGpu &&
                                   t.name() == kPaperWorkload;
            jobs.add(t, k, options_for(kEta, kBeta, seeds[s]),
                     [&t, slot = &slots[s], ref = cell->out.reference, curves, keep_path,
                      this](SimResult&& r) {
                       const RunSummary m = summarize_run(t, r, kEta);
                       slot->eta_norm = m.eta_norm;
                       slot->tta_norm = m.tta_norm;
                       slot->regret_rel = m.cum_regret_rel;
                       if (curves) slot->curve = cum_regret_rel(r, ref);
                       if (keep_path) path_runs_ = std::move(r.runs);
                     });
          }
        }
        if (path && gpu == kPaperGpu && t.name() == kPaperWorkload) {
          path_ = SearchPath{gpu, t.name(), seeds.front(), cell->out.reference, {}};
        }
        cells_.push_back(std::move(cell));
      }
    }
  }
  std::vector<BaselineCell> finish() {
    std::vector<BaselineCell> out;
    for (auto& c : cells_) {
      for (auto& [k, slots] : c->slots) {
        StrategySummary& s = c->out.strategies[k];
        s.eta_norm = spread_of(collect(slots, [](const MatrixSlot& x) { return x.eta_norm; }));
        s.tta_norm = spread_of(collect(slots, [](const MatrixSlot& x) { return x.tta_norm; }));
        s.regret_rel = spread_of(collect(slots, [](const MatrixSlot& x) { return x.regret_rel; }));
        if (!slots.front().curve.empty()) {
          std::vector<std::vector<double>> curves;
          for (auto& x : slots) curves.push_back(std::move(x.curve));
          s.cum_regret_rel = spread_per_index(curves);
        }
      }
      out.push_back(std::move(c->out));
    }
    return out;
  }
  std::optional<SearchPath> path() {
    if (path_) path_->runs = std::move(path_runs_);
    return path_;
  }

 private:
  struct Cell {
    BaselineCell out;
    std::map<Strategy, std::vector<MatrixSlot>> slots;
  };
  std::vector<std::unique_ptr<Cell>> cells_;
  std::optional<SearchPath> path_;
  std::vector<RunRecord> path_runs_;
};

// ---- Figure 10: drift ----

class Drift {
 public:
  void plan(JobList& jobs, const std::vector<std::uint64_t>& seeds) {
    trace_ = make_drifting_workload();
    before_ = compute_reference(trace_, kEta, false);
    after_ = compute_reference(trace_, kEta, true);
    for (int window : {kDriftWindow, 0}) {
      auto& slots = slots_[window];
      slots.resize(seeds.size());
      for (std::size_t s = 0; s < seeds.size(); ++s) {
        SimOptions o = options_for(kEta, kBeta, seeds[s]);
        o.window_size = window;
        jobs.add(trace_, Strategy::kZeus, o, [this, slot = &slots[s]](SimResult&& r) {
          double cum = 0;
          for (std::size_t i = 0; i < r.recurrences.size(); ++i) {
            const bool drifted = static_cast<int>(i) >= *trace_.drift_at;
            const Reference& ref = drifted ? after_ : before_;
            cum += (r.recurrences[i].cost - ref.opt_cost) / ref.opt_cost;
            slot->regret.push_back(cum);
            slot->batch_sizes.push_back(r.recurrences[i].batch_size);
          }
        });
      }
    }
  }
  DriftFigure finish() {
    DriftFigure f;
    f.num_recurrence = trace_.num_recurrence;
    f.drift_at = *trace_.drift_at;
    for (int i = 0; i < f.num_recurrence; ++i) {
      f.optimal_batch_size.push_back(i < f.drift_at ? before_.opt_batch_size
                                                    : after_.opt_batch_size);
    }
    for (int window : {kDriftWindow, 0}) {
      const auto& slots = slots_[window];
      DriftVariant v;
      v.window_size = window;
      std::vector<std::vector<double>> curves;
      for (const auto& s : slots) curves.push_back(s.regret);
      v.cum_regret_rel = spread_per_index(curves);
      int hits = 0, total = 0;
      for (int i = 0; i < f.num_recurrence; ++i) {
        double logs = 0;
        for (const auto& s : slots) {
          const int b = s.batch_sizes[static_cast<std::size_t>(i)];
          logs += std::log2(static_cast<double>(b));
          if (i >= f.drift_at && i < f.drift_at + kDriftFollowSpan) {
            hits += b == after_.opt_batch_size;
            ++total;
          }
        }
        v.geo_mean_batch_size.push_back(std::exp2(logs / static_cast<double>(slots.size())));
      }
      v.share_optimal_after_drift = total > 0 ? static_cast<double>(hits) / total : 0.0;
      f.variants.push_back(std::move(v));
    }
    return f;
  }

 private:
  struct Slot {
    std::vector<double> regret;
    std::vector<int> batch_sizes;
  };
  WorkloadTrace trace_;
  Reference before_, after_;
  std::map<int, std::vector<Slot>> slots_;
};

// ---- Figures 11 and 22: eta sweeps ----

class EtaSweeps {
 public:
  void plan(JobList& jobs, TraceCache& cache, const PaperOptions& o,
            const std::vector<const WorkloadSpec*>& workloads) {
    for (const WorkloadSpec* spec : workloads) {
      const WorkloadTrace& t = cache.get(std::string(kPaperGpu), *spec);
      auto sweep = std::make_unique<Sweep>();
      sweep->out.gpu = t.gpu;
      sweep->out.workload = t.name();
      sweep->out.max_power = t.max_power;
      sweep->slots.resize(o.etas.size());
      for (std::size_t e = 0; e < o.etas.size(); ++e) {
        const double eta = o.etas[e];
        EtaPoint p;
        p.eta = eta;
        p.oracle = compute_reference(t, eta);
        const auto& b = t.batch(p.oracle.opt_batch_size);
        double epochs = 0;
        for (double x : b.target_epochs) epochs += x;
        epochs /= static_cast<double>(b.target_epochs.size());
        const auto& pl = b.at(p.oracle.opt_power_limit);
        p.oracle_eta = epochs * pl.energy_per_epoch;
        p.oracle_tta = epochs * pl.time_per_epoch;
        p.oracle_energy_factor = p.oracle.default_eta / p.oracle_eta;
        p.oracle_time_factor = p.oracle.default_tta / p.oracle_tta;
        sweep->out.points.push_back(p);
        auto& slots = sweep->slots[e];
        slots.resize(o.seeds.size());
        for (std::size_t s = 0; s < o.seeds.size(); ++s) {
          jobs.add(t, Strategy::kZeus, options_for(eta, kBeta, o.seeds[s]),
                   [&t, eta, ref = p.oracle, slot = &slots[s]](SimResult&& r) {
                     const RunSummary m = summarize_run(t, r, eta);
                     slot->eta_j = m.eta_norm * ref.default_eta.value();
                     slot->tta_s = m.tta_norm * ref.default_tta.count();
                     slot->final_bs = m.final_batch_size;
                     slot->final_pl = m.final_power_limit;
                     slot->energy_factor = 1.0 / m.eta_norm;
                     slot->time_factor = 1.0 / m.tta_norm;
                   });
        }
      }
      sweeps_.push_back(std::move(sweep));
    }
  }
  std::vector<EtaSweep> finish() {
    std::vector<EtaSweep> out;
    for (auto& sw : sweeps_) {
      for (std::size_t e = 0; e < sw->out.points.size(); ++e) {
        EtaPoint& p = sw->out.points[e];
        const auto& slots = sw->slots[e];
        p.zeus_eta_j = spread_of(collect(slots, [](const Slot& x) { return x.eta_j; }));
        p.zeus_tta_s = spread_of(collect(slots, [](const Slot& x) { return x.tta_s; }));
        p.energy_factor = spread_of(collect(slots, [](const Slot& x) { return x.energy_factor; }));
        p.time_factor = spread_of(collect(slots, [](const Slot& x) { return x.time_factor; }));
        std::map<std::pair<int, std::int64_t>, int> counts;
        for (const auto& x : slots) ++counts[{x.final_bs, x.final_pl.value()}];
        int best = 0;
        for (const auto& [cfg, n] : counts) {  // ties: the smaller configuration
          if (n > best) {
            best = n;
            p.mode_batch_size = cfg.first;
            p.mode_power_limit = Milliwatts(cfg.second);
          }
        }
      }
      out.push_back(std::move(sw->out));
    }
    return out;
  }

 private:
  struct Slot {
    double eta_j = 0, tta_s = 0, energy_factor = 0, time_factor = 0;
    int final_bs = 0;
    Milliwatts final_pl{0};
  };
  struct Sweep {
    EtaSweep out;
    std::vector<std::vector<Slot>> slots;  // per eta, per seed
  };
  std::vector<std::unique_ptr<Sweep>> sweeps_;
};

// ---- Figure 12: beta ----

class BetaSweep {
 public:
  void plan(JobList& jobs, TraceCache& cache, const PaperOptions& o) {
    betas_ = o.betas;
    for (const auto& spec : paper_workloads()) {
      const WorkloadTrace& t = cache.get(std::string(kPaperGpu), spec);
      auto& per_beta = energy_[t.name()];
      order_.push_back(t.name());
      for (double beta : o.betas) {
        auto& slots = per_beta[beta];
        slots.resize(o.seeds.size());
        for (std::size_t s = 0; s < o.seeds.size(); ++s) {
          jobs.add(t, Strategy::kZeus, options_for(kEta, beta, o.seeds[s]),
                   [&t, slot = &slots[s]](SimResult&& r) {
                     *slot = summarize_run(t, r, kEta).cum_energy.value();
                   });
        }
      }
    }
  }
  BetaFigure finish() {
    BetaFigure f;
    f.gpu = std::string(kPaperGpu);
    f.betas = betas_;
    std::map<double, std::vector<double>> means;
    for (const auto& w : order_) {
      const auto& per_beta = energy_[w];
      const auto& ref = per_beta.at(2.0);
      for (double beta : betas_) {
        const auto& e = per_beta.at(beta);
        std::vector<double> ratio(e.size());
        for (std::size_t s = 0; s < e.size(); ++s) ratio[s] = e[s] / ref[s];
        BetaRow row{w, beta, spread_of(ratio), spread_of(e)};
        means[beta].push_back(row.ratio.mean);
        f.rows.push_back(row);
      }
    }
    for (const auto& [beta, m] : means) f.geo_mean[beta] = geometric_mean(m);
    return f;
  }

 private:
  std::vector<double> betas_;
  std::vector<std::string> order_;
  std::map<std::string, std::map<double, std::vector<double>>> energy_;
};

// ---- Figure 13: ablation ----

class Ablations {
 public:
  void plan(JobList& jobs, TraceCache& cache, const std::vector<std::uint64_t>& seeds) {
    for (const auto& spec : paper_workloads()) {
      const WorkloadTrace& t = cache.get(std::string(kPaperGpu), spec);
      order_.push_back(t.name());
      auto& per_variant = totals_[t.name()];
      std::vector<std::optional<Ablation>> variants = {std::nullopt};
      for (auto a : all_ablations()) variants.push_back(a);
      for (const auto& v : variants) {
        auto& slots = per_variant[v];
        slots.resize(seeds.size());
        for (std::size_t s = 0; s < seeds.size(); ++s) {
          SimOptions o = options_for(kEta, kBeta, seeds[s]);
          if (v) o = ablated_options(o, *v);
          o.stop_when_stuck = true;
          jobs.add(t, Strategy::kZeus, o, [&t, slot = &slots[s]](SimResult&& r) {
            if (r.stuck_at) {
              slot->stuck_at = *r.stuck_at;
              return;
            }
            const RunSummary m = summarize_run(t, r, kEta);
            slot->totals = {m.cum_energy.value(), m.cum_time.count(), m.cum_cost.value()};
          });
        }
      }
    }
    seeds_ = seeds;
  }
  AblationFigure finish() {
    AblationFigure f;
    f.gpu = std::string(kPaperGpu);
    std::map<Ablation, std::vector<double>> e, t, c;
    for (const auto& w : order_) {
      const auto& per_variant = totals_[w];
      const auto& full = per_variant.at(std::nullopt);
      for (auto a : all_ablations()) {
        const auto& v = per_variant.at(a);
        std::vector<double> re, rt, rc;
        AblationRow row;
        row.workload = w;
        row.ablation = a;
        for (std::size_t s = 0; s < v.size(); ++s) {
          if (v[s].stuck_at || full[s].stuck_at) {
            row.stuck_seeds.push_back(seeds_[s]);
            row.stuck_at.push_back(v[s].stuck_at ? *v[s].stuck_at : *full[s].stuck_at);
            continue;
          }
          re.push_back(v[s].totals[0] / full[s].totals[0]);
          rt.push_back(v[s].totals[1] / full[s].totals[1]);
          rc.push_back(v[s].totals[2] / full[s].totals[2]);
        }
        row.energy_ratio = spread_of(re);
        row.time_ratio = spread_of(rt);
        row.cost_ratio = spread_of(rc);
        if (!re.empty()) {
          e[a].push_back(row.energy_ratio.mean);
          t[a].push_back(row.time_ratio.mean);
          c[a].push_back(row.cost_ratio.mean);
        }
        f.rows.push_back(row);
      }
    }
    for (auto a : all_ablations()) {
      f.geo_mean_energy[a] = geometric_mean(e[a]);
      f.geo_mean_time[a] = geometric_mean(t[a]);
      f.geo_mean_cost[a] = geometric_mean(c[a]);
    }
    return f;
  }

 private:
  struct Slot {
    std::array<double, 3> totals{};  // energy, time, cost
    std::optional<int> stuck_at;
  };
  std::vector<std::string> order_;
  std::vector<std::uint64_t> seeds_;
  // workload -> variant (nullopt = full Zeus) -> per seed
  std::map<std::string, std::map<std::optional<Ablation>, std::vector<Slot>>> totals_;
};

}  // namespace

PaperData compute_paper(const TraceSet& traces, const PaperOptions& options,
                        const PaperProgress& progress) {
  validate(options);
  PaperData data;
  data.options = options;
  if (data.options.figures.empty()) data.options.figures = parse_paper_figures("all");
  const PaperOptions& o = data.options;
  auto on = [&](PaperFigure f) { return data.selected(f); };

  // The trace-only figures, and every trace the replays need, before any replay.
  TraceCache cache(traces);
  if (on(PaperFigure::kOpportunity)) {
    for (const auto& gpu : trace_gpus()) {
      for (const auto& spec : paper_workloads()) {
        const WorkloadTrace& t = cache.get(gpu, spec);
        data.opportunity.push_back({gpu, t.name(), t.default_batch_size, opportunity(t)});
      }
    }
  }
  if (on(PaperFigure::kParetoFront) || on(PaperFigure::kEtaPerKnob) || on(PaperFigure::kEtaSweep)) {
    for (const auto& spec : paper_workloads()) {
      data.landscape.push_back(landscape_panel(cache.get(std::string(kPaperGpu), spec)));
    }
  }

  JobList jobs;
  Matrix matrix;
  if (on(PaperFigure::kBaselines) || on(PaperFigure::kGpuGenerations)) {
    const bool all = on(PaperFigure::kBaselines);
    matrix.plan(jobs, cache, o.seeds, all ? all_strategies() : std::vector{Strategy::kZeus}, all,
                all);
  }
  Drift drift;
  if (on(PaperFigure::kDrift)) drift.plan(jobs, o.seeds);
  EtaSweeps focus, improvement;
  const WorkloadSpec& focus_spec = find_workload(std::string(kPaperWorkload));
  if (on(PaperFigure::kEtaSweep)) focus.plan(jobs, cache, o, {&focus_spec});
  if (on(PaperFigure::kImprovementFactors)) {
    std::vector<const WorkloadSpec*> all;
    for (const auto& w : paper_workloads()) all.push_back(&w);
    improvement.plan(jobs, cache, o, all);
  }
  BetaSweep beta;
  if (on(PaperFigure::kBetaSweep)) beta.plan(jobs, cache, o);
  Ablations ablation;
  if (on(PaperFigure::kAblation)) ablation.plan(jobs, cache, o.seeds);

  jobs.run(o.threads, progress);
  data.simulations = jobs.size();

  if (on(PaperFigure::kBaselines) || on(PaperFigure::kGpuGenerations)) {
    data.baselines = matrix.finish();
    data.search_path = matrix.path();
  }
  if (on(PaperFigure::kDrift)) data.drift = drift.finish();
  if (on(PaperFigure::kEtaSweep)) data.eta_sweep = focus.finish().front();
  if (on(PaperFigure::kImprovementFactors)) data.improvement = improvement.finish();
  if (on(PaperFigure::kBetaSweep)) data.beta = beta.finish();
  if (on(PaperFigure::kAblation)) data.ablation = ablation.finish();
  return data;
}

}  // namespace zeus::sim::paper
