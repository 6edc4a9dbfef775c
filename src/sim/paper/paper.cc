// The figure catalog, option checks, small statistics and the ablation
// options; compute_paper itself is in paper_compute.cc.
#include "zeus/sim/paper/paper.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "util/parse.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::sim::paper {

const std::vector<PaperFigureInfo>& paper_figure_catalog() {
  static const std::vector<PaperFigureInfo> catalog = {
      {PaperFigure::kOpportunity, {1, 15}, "Energy an oracle could save, per GPU"},
      {PaperFigure::kParetoFront,
       {2, 16},
       "ETA vs TTA of every configuration and the Pareto front"},
      {PaperFigure::kEtaPerKnob, {5, 17, 18}, "ETA per batch size and per power limit"},
      {PaperFigure::kBaselines,
       {6, 7, 8, 19},
       "Zeus against Default and grid search: ETA, TTA, cumulative regret, search path"},
      {PaperFigure::kDrift, {10}, "A drifting workload (synthetic stand-in for Capriccio)"},
      {PaperFigure::kEtaSweep, {11}, "The eta knob moves the choice along the Pareto front"},
      {PaperFigure::kBetaSweep, {12}, "Cumulative ETA across the early-stopping factor beta"},
      {PaperFigure::kAblation,
       {13},
       "Ablation: no early stopping, no pruning, no just-in-time profiling"},
      {PaperFigure::kGpuGenerations, {14, 23}, "Normalized ETA and TTA per GPU generation"},
      {PaperFigure::kImprovementFactors, {22}, "Energy and time improvement across eta"},
  };
  return catalog;
}

const PaperFigureInfo& paper_figure_info(PaperFigure figure) {
  for (const auto& f : paper_figure_catalog()) {
    if (f.figure == figure) return f;
  }
  throw_error(ErrorCode::kInternal, "unknown paper figure");
}

std::vector<PaperFigure> parse_paper_figures(std::string_view list) {
  std::vector<PaperFigure> out;
  if (list == "all") {
    for (const auto& f : paper_figure_catalog()) out.push_back(f.figure);
    return out;
  }
  std::vector<std::string> known;
  for (const auto& f : paper_figure_catalog()) {
    for (int n : f.paper_numbers) known.push_back(std::to_string(n));
  }
  for (const auto& word : split_list(list, "--figures")) {
    std::string_view w = word;
    if (w.size() > 3 && (w.substr(0, 3) == "fig" || w.substr(0, 3) == "Fig")) w.remove_prefix(3);
    if (w == "9") {
      throw_error(ErrorCode::kInvalidArgument,
                  "--figures: Figure 9 needs the Alibaba job-group trace "
                  "(alibaba_groups.csv.xz), which is not available (see "
                  "data/zeus-traces/README.md); it is left out");
    }
    const PaperFigureInfo* match = nullptr;
    for (const auto& f : paper_figure_catalog()) {
      for (int n : f.paper_numbers) {
        if (std::to_string(n) == w) match = &f;
      }
    }
    if (match == nullptr) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("--figures: unknown figure '{}'; expected all or some of {}",
                              printable(word), fmt::join(known, ",")));
    }
    if (std::find(out.begin(), out.end(), match->figure) != out.end()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("--figures: figure '{}' is selected twice (the paper's figures "
                              "{} are one reproduced figure)",
                              printable(word), fmt::join(match->paper_numbers, "/")));
    }
    out.push_back(match->figure);
  }
  // The paper's order, whatever order they were given in.
  std::sort(out.begin(), out.end());
  return out;
}

void validate(const PaperOptions& o) {
  auto fail = [](const std::string& m) { throw_error(ErrorCode::kInvalidArgument, m); };
  if (o.seeds.empty()) fail("seeds: give at least one seed");
  if (o.seeds.size() > 10'000) fail("seeds: at most 10000");
  if (std::set<std::uint64_t>(o.seeds.begin(), o.seeds.end()).size() != o.seeds.size()) {
    fail("seeds: a seed is given twice");
  }
  if (o.threads > 1024) fail(fmt::format("threads must be in [0, 1024], got {}", o.threads));
  if (o.etas.empty()) fail("eta: give at least one value");
  for (std::size_t i = 0; i < o.etas.size(); ++i) {
    if (!(o.etas[i] >= 0.0 && o.etas[i] <= 1.0)) {
      fail(fmt::format("eta: {:g} is outside [0, 1]", o.etas[i]));
    }
    if (i > 0 && !(o.etas[i] > o.etas[i - 1])) fail("eta: values must ascend without repeats");
  }
  if (std::find(o.betas.begin(), o.betas.end(), 2.0) == o.betas.end()) {
    fail("beta: Figure 12 is relative to beta = 2, so the list must contain 2");
  }
  for (std::size_t i = 0; i < o.betas.size(); ++i) {
    if (!(o.betas[i] > 0.0 && o.betas[i] <= kMaxBeta)) {
      fail(fmt::format("beta: {:g} is outside (0, {:g}]", o.betas[i], kMaxBeta));
    }
    if (i > 0 && !(o.betas[i] > o.betas[i - 1])) fail("beta: values must ascend without repeats");
  }
  for (auto f : o.figures) paper_figure_info(f);
}

Spread spread_of(const std::vector<double>& v) {
  Spread s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  return s;
}

double geometric_mean(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double logs = 0;
  for (double x : v) logs += std::log(x);
  return std::exp(logs / static_cast<double>(v.size()));
}

std::string_view ablation_name(Ablation a) {
  switch (a) {
    case Ablation::kNoEarlyStopping:
      return "no early stopping";
    case Ablation::kNoPruning:
      return "no pruning";
    case Ablation::kNoJitProfiling:
      return "no JIT profiling";
  }
  return "unknown";
}

const std::vector<Ablation>& all_ablations() {
  static const std::vector<Ablation> all = {Ablation::kNoEarlyStopping, Ablation::kNoPruning,
                                            Ablation::kNoJitProfiling};
  return all;
}

SimOptions ablated_options(SimOptions o, Ablation a) {
  switch (a) {
    case Ablation::kNoEarlyStopping:
      o.beta = std::numeric_limits<double>::infinity();
      break;
    case Ablation::kNoPruning:
      o.num_pruning_rounds = 0;
      break;
    case Ablation::kNoJitProfiling:
      o.power_limit_search = PowerLimitSearch::kOnePerRecurrence;
      break;
  }
  return o;
}

bool PaperData::selected(PaperFigure f) const {
  return std::find(options.figures.begin(), options.figures.end(), f) != options.figures.end();
}

}  // namespace zeus::sim::paper
