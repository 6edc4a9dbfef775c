// The Zeus NSDI '23 trace-driven evaluation, figure by figure: what each
// reproduced figure shows, computed from the traces (the landscape and
// oracle figures) or from replays of the one simulator (every search figure,
// the ablations included: they are options of the same Zeus strategy). All
// replays of all selected figures run as one batch over the worker threads;
// the result does not depend on the number of threads. Formatting and
// plotting live in paper_report.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/sim/paper/landscape.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"

namespace zeus::sim::paper {

// One reproduced figure (several paper figures show the same thing for
// other GPUs or workloads in the appendix).
enum class PaperFigure {
  kOpportunity,         // 1, 15: oracle energy savings per GPU
  kParetoFront,         // 2, 16: ETA vs TTA of every configuration, Pareto front
  kEtaPerKnob,          // 5, 17, 18: ETA per batch size, per power limit
  kBaselines,           // 6, 7, 8, 19: Zeus vs Default and the grid searches
  kDrift,               // 10: a drifting workload (synthetic, for Capriccio)
  kEtaSweep,            // 11: eta moves the choice along the Pareto front
  kBetaSweep,           // 12: cumulative ETA across beta
  kAblation,            // 13: no early stopping, no pruning, no JIT profiling
  kGpuGenerations,      // 14, 23: normalized ETA/TTA per GPU generation
  kImprovementFactors,  // 22: energy and time improvement across eta
};

struct PaperFigureInfo {
  PaperFigure figure;
  std::vector<int> paper_numbers;  // the paper's figure numbers it reproduces
  std::string_view title;
};
// Every reproducible figure, in the paper's order.
const std::vector<PaperFigureInfo>& paper_figure_catalog();
const PaperFigureInfo& paper_figure_info(PaperFigure figure);
// "all", or a comma list of paper figure numbers ("11,12"; "15" selects
// Figure 1/15). kInvalidArgument naming an unknown or repeated number;
// Figure 9 is refused with the reason (its Alibaba trace is unavailable).
std::vector<PaperFigure> parse_paper_figures(std::string_view list);

// Where the paper's single-GPU, single-workload figures look.
inline constexpr std::string_view kPaperGpu = "v100";
inline constexpr std::string_view kPaperWorkload = "librispeech/deepspeech2";

struct PaperOptions {
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<PaperFigure> figures;  // empty: all
  int threads = 0;                   // <= 0: one per core
  std::vector<double> etas = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};  // 11, 22
  std::vector<double> betas = {1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0};                // 12
};
// kInvalidArgument naming the field: no seeds or a repeated one, more than
// 10,000 seeds, eta outside [0, 1] or not sorted ascending, betas without 2
// (Figure 12's reference) or outside (0, kMaxBeta], threads beyond 1024.
void validate(const PaperOptions& options);

// Mean and spread over seeds (sample standard deviation; 0 for one value).
struct Spread {
  double mean = 0, sd = 0, min = 0, max = 0;
  int n = 0;
};
Spread spread_of(const std::vector<double>& values);
// exp(mean(log x)) of positive values; exactly 1 when every value is 1.
double geometric_mean(const std::vector<double>& values);

// Figures 1 / 15: per GPU and workload.
struct OpportunityRow {
  std::string gpu, workload;
  int default_batch_size = 0;
  Opportunity opportunity;
};

// Figures 2 / 16, 5 / 17 / 18 and the backdrop of 11: one trace's landscape.
struct LandscapePanel {
  std::string gpu, workload;
  int default_batch_size = 0;
  Milliwatts max_power_limit{0};
  Joules default_eta{0.0};
  std::vector<ConfigPoint> points;  // configurations(trace)
  std::vector<std::size_t> front;   // pareto_front(points)
  // Least and largest average power over the feasible points: every point
  // lies between the lines ETA = P_min * TTA and ETA = P_max * TTA.
  Watts min_average_power{0.0}, max_average_power{0.0};
};

// Figures 6 / 7 / 8 / 19 and 14 / 23: one (GPU, workload) over seeds.
struct StrategySummary {
  Spread eta_norm, tta_norm, regret_rel;  // regret_rel = cumulative regret / C*
  std::vector<Spread> cum_regret_rel;     // per recurrence (Figure 7)
};
struct BaselineCell {
  std::string gpu, workload;
  int default_batch_size = 0;
  Reference reference;  // at eta 0.5
  std::map<Strategy, StrategySummary> strategies;
};
struct SearchPath {  // Figure 8: every run of Zeus on one job, one seed
  std::string gpu, workload;
  std::uint64_t seed = 0;
  Reference reference;
  std::vector<RunRecord> runs;
};

// Figure 10: the synthetic drifting workload, Zeus with and without a window.
struct DriftVariant {
  int window_size = 0;
  std::vector<Spread> cum_regret_rel;       // per recurrence, over seeds
  std::vector<double> geo_mean_batch_size;  // per recurrence, over seeds
  double share_optimal_after_drift = 0;     // recurrences on the new optimum, 60 after
};
struct DriftFigure {
  int num_recurrence = 0, drift_at = 0;
  std::vector<int> optimal_batch_size;  // per recurrence
  std::vector<DriftVariant> variants;   // window 10, then no window
};

// Figures 11 and 22: Zeus at each eta on one workload.
struct EtaPoint {
  double eta = 0;
  Reference oracle;  // the optimum at this eta
  Joules oracle_eta{0.0};
  Seconds oracle_tta{0.0};
  Spread zeus_eta_j, zeus_tta_s;      // mean of the last 5 recurrences, over seeds
  Spread energy_factor, time_factor;  // expected Default / Zeus's last-5 mean, per seed
  double oracle_energy_factor = 0, oracle_time_factor = 0;
  int mode_batch_size = 0;  // most common final configuration over seeds
  Milliwatts mode_power_limit{0};
};
struct EtaSweep {
  std::string gpu, workload;
  Watts max_power{0.0};
  std::vector<EtaPoint> points;  // by ascending eta
};

// Figure 12: cumulative ETA over all recurrences, per seed relative to the
// same seed at beta = 2.
struct BetaRow {
  std::string workload;
  double beta = 0;
  Spread ratio;
  Spread cum_eta_j;
};
struct BetaFigure {
  std::string gpu;
  std::vector<double> betas;
  std::vector<BetaRow> rows;          // workload-major, betas ascending
  std::map<double, double> geo_mean;  // per beta, over workloads' mean ratios
};

// Figure 13: each ablated Zeus against full Zeus on the same seed.
enum class Ablation { kNoEarlyStopping, kNoPruning, kNoJitProfiling };
std::string_view ablation_name(Ablation a);  // "no early stopping", ...
const std::vector<Ablation>& all_ablations();
// The options of the one Zeus implementation that make the ablated variant.
SimOptions ablated_options(SimOptions full, Ablation a);
struct AblationRow {
  std::string workload;
  Ablation ablation = Ablation::kNoEarlyStopping;
  // Cumulative over all recurrences, ablated / full, per seed; over the
  // seeds whose ablated replay finished.
  Spread energy_ratio, time_ratio, cost_ratio;
  // Seeds whose ablated replay got stuck (a recurrence failed max_tries runs
  // in a row, the reference's limit) and the recurrence where it did.
  std::vector<std::uint64_t> stuck_seeds;
  std::vector<int> stuck_at;
};
struct AblationFigure {
  std::string gpu;
  std::vector<AblationRow> rows;  // workload-major, all_ablations() order
  std::map<Ablation, double> geo_mean_energy, geo_mean_time, geo_mean_cost;
};

struct PaperData {
  PaperOptions options;  // seeds, figures (resolved), etas, betas
  std::vector<OpportunityRow> opportunity;
  std::vector<LandscapePanel> landscape;  // kPaperGpu, every workload
  std::vector<BaselineCell> baselines;    // every GPU x workload
  std::optional<SearchPath> search_path;
  std::optional<DriftFigure> drift;
  std::optional<EtaSweep> eta_sweep;  // kPaperWorkload (Figure 11)
  std::vector<EtaSweep> improvement;  // every workload (Figure 22)
  std::optional<BetaFigure> beta;
  std::optional<AblationFigure> ablation;
  std::size_t simulations = 0;  // replays run
  bool selected(PaperFigure f) const;
};

// progress(stage, done, total): stage "simulations"; serialized.
using PaperProgress = std::function<void(std::string_view stage, std::size_t, std::size_t)>;
// Loads every trace the selected figures need before any replay (a missing
// workload or GPU is kNotFound), then computes them. Options are validated.
PaperData compute_paper(const TraceSet& traces, const PaperOptions& options,
                        const PaperProgress& progress = {});

}  // namespace zeus::sim::paper
