// Figures computed from the traces alone: 1/15 (oracle savings), 2/16
// (Pareto front), 5/17/18 (ETA per batch size and per power limit).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include "paper_sections.h"

namespace zeus::sim::paper {

namespace {

// The paper's Figure 1 ranges on V100 (Section 2.2), as savings in percent.
struct PaperRange {
  double lo, hi;
};
constexpr PaperRange kPaperBatchSize{3.4, 65.0};
constexpr PaperRange kPaperPowerLimit{3.0, 31.5};
constexpr PaperRange kPaperJoint{23.8, 74.7};

std::string range_text(const std::vector<double>& normalized) {
  const auto [lo, hi] = std::minmax_element(normalized.begin(), normalized.end());
  return fmt::format("{:.1f}–{:.1f}%", 100.0 * (1.0 - *hi), 100.0 * (1.0 - *lo));
}

// Units that keep a panel's numbers readable.
struct Units {
  double time_s, energy_j;
  std::string time, energy;
};
Units units_for(const LandscapePanel& p) {
  double tmax = 0, emax = 0;
  for (const auto& c : p.points) {
    if (!c.feasible()) continue;
    tmax = std::max(tmax, c.tta.count());
    emax = std::max(emax, c.eta.value());
  }
  Units u{3600.0, 1e6, "h", "MJ"};
  if (tmax < 2 * 3600.0) u = {60.0, u.energy_j, "min", u.energy};
  if (emax < 2e6) u = {u.time_s, 1e3, u.time, "kJ"};
  return u;
}

// Each GPU's ETA relative to the default: at the best batch size, at the
// best power limit, and at the best of both.
using NormsPerGpu = std::map<std::string, std::array<std::vector<double>, 3>>;

// The opportunity CSV and what the figure and the tables take from it.
struct OpportunityTables {
  std::string csv;
  NormsPerGpu per_gpu;
  std::vector<std::string> order;  // GPUs in the order of their rows
  std::vector<std::vector<std::string>> v100_rows;
};

OpportunityTables opportunity_tables(const PaperData& d) {
  OpportunityTables t;
  Csv csv({"gpu", "workload", "label", "b0", "default_eta_J", "best_bs", "best_bs_eta_J",
           "best_pl_W", "best_pl_eta_J", "best_joint_bs", "best_joint_pl_W", "best_joint_eta_J",
           "norm_bs", "norm_pl", "norm_joint"});
  for (const auto& r : d.opportunity) {
    const auto& o = r.opportunity;
    const double nb = o.best_batch_size_eta / o.default_eta;
    const double np = o.best_power_limit_eta / o.default_eta;
    const double nj = o.best_eta / o.default_eta;
    csv.row({r.gpu, r.workload, short_name(r.workload), std::to_string(r.default_batch_size),
             num(o.default_eta.value()), std::to_string(o.best_batch_size),
             num(o.best_batch_size_eta.value()), watts_text(o.best_power_limit),
             num(o.best_power_limit_eta.value()), std::to_string(o.best_joint_batch_size),
             watts_text(o.best_joint_power_limit), num(o.best_eta.value()), num(nb), num(np),
             num(nj)});
    if (!t.per_gpu.count(r.gpu)) t.order.push_back(r.gpu);
    auto& g = t.per_gpu[r.gpu];
    g[0].push_back(nb);
    g[1].push_back(np);
    g[2].push_back(nj);
    if (r.gpu == kPaperGpu) {
      t.v100_rows.push_back({r.workload, std::to_string(r.default_batch_size),
                             fmt::format("{} ({})", r.opportunity.best_batch_size, saving(nb)),
                             fmt::format("{} W ({})", watts_text(o.best_power_limit), saving(np)),
                             fmt::format("{} @ {} W ({})", o.best_joint_batch_size,
                                         watts_text(o.best_joint_power_limit), saving(nj))});
    }
  }
  t.csv = csv.text();
  return t;
}

std::string opportunity_script(const OpportunityTables& t) {
  const PanelGrid grid{2, 2, 740, 2};
  std::string body = grid.begin(
                         "Figures 1 and 15: energy to accuracy an oracle could save, relative "
                         "to the default configuration (b0 at the maximum power limit)") +
                     "set style data histograms\nset style histogram clustered gap 1\n"
                     "set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
                     "set yrange [0:1.1]\nset ylabel 'ETA / default ETA'\n"
                     "set xtics rotate by 25 right scale 0\n" +
                     std::string(kUnitLine);
  std::size_t row = 0;
  int index = 0;
  for (const auto& gpu : t.order) {
    const std::size_t n = t.per_gpu.at(gpu)[0].size();
    body += grid.panel(index++) +
            fmt::format(
                "set title '{0}'\n"
                "plot 'csv/fig01-opportunity.csv' skip 1 every ::{1}::{2} using 13:xtic(3) "
                "notitle lc rgb '{3}', '' skip 1 every ::{1}::{2} using 14 notitle lc rgb '{4}', "
                "'' skip 1 every ::{1}::{2} using 15 notitle lc rgb '{5}'\n",
                gpu_label(gpu), row, row + n - 1, kGridNoEsColour, kGridDirColour, kZeusColour);
    row += n;
  }
  body += grid.key({box_entry(kGridNoEsColour, "best batch size (at the maximum power limit)"),
                    box_entry(kGridDirColour, "best power limit (at b0)"),
                    box_entry(kZeusColour, "best of both"),
                    line_entry("lines dt 2 lw 1.5 lc rgb 'black'", "default")});
  return gnuplot_script("fig01-opportunity", 1100, 740, body);
}

// Per GPU the range of savings of each knob, with the paper's V100 ranges.
std::vector<std::vector<std::string>> opportunity_ranges(const OpportunityTables& t) {
  std::vector<std::vector<std::string>> ranges;
  for (const auto& gpu : t.order) {
    const auto& g = t.per_gpu.at(gpu);
    ranges.push_back({gpu_label(gpu), range_text(g[0]), range_text(g[1]), range_text(g[2])});
    if (gpu == kPaperGpu) {
      ranges.push_back({"V100, the paper",
                        fmt::format("{}–{}%", kPaperBatchSize.lo, kPaperBatchSize.hi),
                        fmt::format("{}–{}%", kPaperPowerLimit.lo, kPaperPowerLimit.hi),
                        fmt::format("{}–{}%", kPaperJoint.lo, kPaperJoint.hi)});
    }
  }
  return ranges;
}

}  // namespace

Section opportunity_section(const PaperData& d) {
  Section s;
  OpportunityTables t = opportunity_tables(d);
  s.csvs.emplace_back("fig01-opportunity.csv", std::move(t.csv));
  s.scripts.emplace_back("fig01-opportunity", opportunity_script(t));

  const std::vector<std::vector<std::string>> ranges = opportunity_ranges(t);
  const auto& v = t.per_gpu[std::string(kPaperGpu)];
  const double our_pl_hi = 100.0 * (1.0 - *std::min_element(v[1].begin(), v[1].end()));
  const double our_bs_hi = 100.0 * (1.0 - *std::min_element(v[0].begin(), v[0].end()));
  const double our_j_lo = 100.0 * (1.0 - *std::max_element(v[2].begin(), v[2].end()));
  s.markdown = fmt::format(
      "## Figure 1 / 15 — {title}\n\n"
      "For every GPU and workload, the expected ETA (mean epochs to target over the trace's "
      "runs × energy per epoch) of the default configuration against the best batch size at the "
      "maximum power limit, the best power limit at b0, and the best configuration overall, each "
      "among configurations whose runs all reach the target. No search: this is what an oracle "
      "could save (the paper's motivation). Figure 1 is V100; Figure 15 the other GPUs.\n\n"
      "{fig}"
      "Savings over the default (range over the six workloads):\n\n{ranges}\n"
      "V100 per workload (configuration and saving):\n\n{v100}\n"
      "**Against the paper.** The paper gives the V100 ranges in its Section 2.2 (the "
      "power-limit one in the words \"can reduce energy consumption by 3.0%–31.5%\"). Ours: "
      "batch size up to {bs_hi:.1f}% (paper {pbs_hi}%), power limit up to {pl_hi:.1f}% (paper "
      "{ppl_hi}%), both at least {j_lo:.1f}% (paper {pj_lo}%). The ranges come from the same "
      "traces; where an end differs, the reasons are ours: we count only configurations whose "
      "runs *all* reach the target within max_epochs (the rule of the optimum C*), use the "
      "mean over the trace's runs, and cap b0 at the GPU's largest batch size; the paper's "
      "figure was drawn from its own measurement runs, whose exact filter it does not state.\n\n",
      fmt::arg("title", paper_figure_info(PaperFigure::kOpportunity).title),
      fmt::arg("fig", md_figure("fig01-opportunity",
                                "Figure 1/15: ETA of best batch size, best power limit and both, "
                                "relative to the default, per GPU",
                                {"fig01-opportunity.csv"})),
      fmt::arg("ranges", md_table({"GPU", "best batch size", "best power limit", "both"}, ranges)),
      fmt::arg("v100", md_table({"workload", "b0", "best batch size", "best power limit", "both"},
                                t.v100_rows)),
      fmt::arg("bs_hi", our_bs_hi), fmt::arg("pbs_hi", kPaperBatchSize.hi),
      fmt::arg("pl_hi", our_pl_hi), fmt::arg("ppl_hi", kPaperPowerLimit.hi),
      fmt::arg("j_lo", our_j_lo), fmt::arg("pj_lo", kPaperJoint.lo));
  return s;
}

namespace {

// Rows [first, last] of each panel in the configurations CSV (V100, workload order).
struct Block {
  std::size_t first, last;
};

std::string configurations_csv(const PaperData& d, std::vector<Block>& blocks,
                               std::vector<Block>& front_blocks, std::string& front_text,
                               std::string& bounds_text) {
  Csv csv({"gpu", "workload", "batch_size", "power_limit_W", "average_power_W", "runs",
           "runs_converged", "feasible", "on_front", "eta_J", "tta_s", "eta_min_J", "eta_max_J",
           "eta_norm"});
  Csv front({"gpu", "workload", "rank", "batch_size", "power_limit_W", "eta_J", "tta_s"});
  Csv bounds({"gpu", "workload", "min_average_power_W", "max_average_power_W", "feasible",
              "on_front", "b0", "max_power_limit_W", "default_eta_J"});
  for (const auto& p : d.landscape) {
    const std::size_t first = csv.rows();
    int feasible = 0;
    for (std::size_t i = 0; i < p.points.size(); ++i) {
      const auto& c = p.points[i];
      const bool on = std::find(p.front.begin(), p.front.end(), i) != p.front.end();
      feasible += c.feasible();
      csv.row({p.gpu, p.workload, std::to_string(c.batch_size), watts_text(c.power_limit),
               num(c.average_power.value()), std::to_string(c.runs),
               std::to_string(c.runs_converged), c.feasible() ? "1" : "0", on ? "1" : "0",
               num(c.eta.value()), num(c.tta.count()), num(c.eta_min.value()),
               num(c.eta_max.value()), num(c.eta / p.default_eta)});
    }
    blocks.push_back({first, csv.rows() - 1});
    const std::size_t ffirst = front.rows();
    for (std::size_t k = 0; k < p.front.size(); ++k) {
      const auto& c = p.points[p.front[k]];
      front.row({p.gpu, p.workload, std::to_string(k + 1), std::to_string(c.batch_size),
                 watts_text(c.power_limit), num(c.eta.value()), num(c.tta.count())});
    }
    front_blocks.push_back({ffirst, front.rows() - 1});
    bounds.row({p.gpu, p.workload, num(p.min_average_power.value()),
                num(p.max_average_power.value()), std::to_string(feasible),
                std::to_string(p.front.size()), std::to_string(p.default_batch_size),
                watts_text(p.max_power_limit), num(p.default_eta.value())});
  }
  front_text = front.text();
  bounds_text = bounds.text();
  return csv.text();
}

// The key goes top left: points lie between the two power lines through the
// origin, so the corner above the steeper one holds no point.
std::string pareto_panel(const LandscapePanel& p, const Block& b, const Block& fb, int font) {
  const Units u = units_for(p);
  const double k = u.time_s / u.energy_j;  // ETA[unit] = P[W] * TTA[unit] * k
  return fmt::format(
      "set title '{0} on {1}'\nset xlabel 'TTA ({2})'\nset ylabel 'ETA ({3})'\n{4}\n"
      "plot 'csv/fig02-configurations.csv' skip 1 every ::{5}::{6} using ($8==1 ? $11/{7} : "
      "1/0):($10/{8}) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration "
      "(all runs reach the target)', "
      "'csv/fig02-front.csv' skip 1 every ::{9}::{10} using ($7/{7}):($6/{8}) with linespoints "
      "pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', "
      "{11}*x*{12} with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA "
      "(least average power)', {11}), "
      "{13}*x*{12} with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA "
      "(largest average power)', {13}), "
      "'csv/fig02-configurations.csv' skip 1 every ::{5}::{6} using (($3=={14} && $4=={15}) ? "
      "$11/{7} : 1/0):($10/{8}) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, "
      "max power limit)'\n",
      p.workload, p.gpu, u.time, u.energy,
      fmt::format("set key top left Left reverse samplen 2 font ',{}'", font), b.first, b.last,
      u.time_s, u.energy_j, fb.first, fb.last, num(p.min_average_power.value()), num(k),
      num(p.max_average_power.value()), p.default_batch_size, watts_text(p.max_power_limit));
}

}  // namespace

Section pareto_section(const PaperData& d) {
  Section s;
  std::vector<Block> blocks, fblocks;
  std::string front, bounds;
  s.csvs.emplace_back("fig02-configurations.csv",
                      configurations_csv(d, blocks, fblocks, front, bounds));
  s.csvs.emplace_back("fig02-front.csv", front);
  s.csvs.emplace_back("fig02-bounds.csv", bounds);

  std::size_t focus = 0;
  for (std::size_t i = 0; i < d.landscape.size(); ++i) {
    if (d.landscape[i].workload == kPaperWorkload) focus = i;
  }
  const auto& fp = d.landscape[focus];
  s.scripts.emplace_back(
      "fig02-pareto",
      gnuplot_script("fig02-pareto", 900, 560, pareto_panel(fp, blocks[focus], fblocks[focus], 9)));
  std::string all =
      "set multiplot layout 2,3 title 'Figure 16: ETA vs TTA of every "
      "configuration and the Pareto front (V100)'\n";
  for (std::size_t i = 0; i < d.landscape.size(); ++i) {
    all += pareto_panel(d.landscape[i], blocks[i], fblocks[i], 8);
  }
  s.scripts.emplace_back("fig16-pareto-all", gnuplot_script("fig16-pareto-all", 1350, 780, all));

  std::vector<std::vector<std::string>> rows;
  for (const auto& p : d.landscape) {
    int feasible = 0;
    for (const auto& c : p.points) feasible += c.feasible();
    std::string front_list;
    for (auto i : p.front) {
      front_list += fmt::format("{}{}@{}", front_list.empty() ? "" : ", ", p.points[i].batch_size,
                                watts_text(p.points[i].power_limit));
    }
    rows.push_back(
        {p.workload, std::to_string(feasible), std::to_string(p.front.size()),
         fmt::format("{:.0f}–{:.0f} W", p.min_average_power.value(), p.max_average_power.value()),
         front_list});
  }
  s.markdown = fmt::format(
      "## Figure 2 / 16 — {}\n\n"
      "Every (batch size, power limit) of V100 whose runs all reach the target, at its expected "
      "TTA and ETA; the Pareto front (no other configuration is both faster and cheaper in "
      "energy); and the two lines ETA = P·TTA through the origin at the least and the largest "
      "average power among them: since ETA/TTA is a configuration's average power, every point "
      "lies between the lines. Figure 2 is DeepSpeech2 on LibriSpeech; Figure 16 all six "
      "workloads. The cross marks the default configuration.\n\n{}{}\n{}\n"
      "**Against the paper.** Its text gives no numbers for these figures; the defining "
      "properties (the front is non-dominated, every point lies between the power lines, the "
      "default is far from the front) are checked by tests. The paper draws all configurations "
      "it measured; we draw those the simulator's optimum may choose (all runs converge), "
      "which removes a few slow batch sizes.\n\n",
      paper_figure_info(PaperFigure::kParetoFront).title,
      md_figure("fig02-pareto", "Figure 2: ETA vs TTA, DeepSpeech2 on V100",
                {"fig02-configurations.csv", "fig02-front.csv", "fig02-bounds.csv"}),
      md_figure("fig16-pareto-all", "Figure 16: ETA vs TTA, all workloads on V100", {}),
      md_table({"workload (V100)", "configurations", "on the front", "average power",
                "front (batch size@W, fastest first)"},
               rows));
  return s;
}

namespace {

// The two CSVs of Figures 5/17/18, each panel's rows in them, and the table
// of the report.
struct EtaPerKnobTables {
  std::string per_batch_size, per_power_limit;
  std::vector<Block> bs_blocks, pl_b0_blocks, pl_best_blocks;
  std::vector<int> best_batch_sizes;  // per panel
  std::vector<std::vector<std::string>> rows;
};

EtaPerKnobTables eta_per_knob_tables(const PaperData& d) {
  EtaPerKnobTables t;
  Csv per_bs({"gpu", "workload", "batch_size", "power_limit_W", "runs", "runs_converged",
              "feasible", "eta_J", "eta_min_J", "eta_max_J", "eta_norm", "eta_norm_min",
              "eta_norm_max"});
  Csv per_pl(
      {"gpu", "workload", "series", "batch_size", "power_limit_W", "eta_J", "tta_s", "eta_norm"});
  for (const auto& p : d.landscape) {
    const std::size_t first = per_bs.rows();
    const ConfigPoint* best = nullptr;
    for (const auto& c : p.points) {
      if (c.feasible() && (best == nullptr || c.eta < best->eta)) best = &c;
      if (c.power_limit != p.max_power_limit || c.runs_converged == 0) continue;
      per_bs.row({p.gpu, p.workload, std::to_string(c.batch_size), watts_text(c.power_limit),
                  std::to_string(c.runs), std::to_string(c.runs_converged),
                  c.feasible() ? "1" : "0", num(c.eta.value()), num(c.eta_min.value()),
                  num(c.eta_max.value()), num(c.eta / p.default_eta),
                  num(c.eta_min / p.default_eta), num(c.eta_max / p.default_eta)});
    }
    t.bs_blocks.push_back({first, per_bs.rows() - 1});
    auto series = [&](int batch_size, const std::string& name, std::vector<Block>& out) {
      const std::size_t f = per_pl.rows();
      for (const auto& c : p.points) {
        if (c.batch_size != batch_size) continue;
        per_pl.row({p.gpu, p.workload, name, std::to_string(c.batch_size),
                    watts_text(c.power_limit), num(c.eta.value()), num(c.tta.count()),
                    num(c.eta / p.default_eta)});
      }
      out.push_back({f, per_pl.rows() - 1});
    };
    series(p.default_batch_size, "b0", t.pl_b0_blocks);
    series(best->batch_size, "energy-optimal batch size", t.pl_best_blocks);
    t.best_batch_sizes.push_back(best->batch_size);
    const ConfigPoint* b0_best = nullptr;
    for (const auto& c : p.points) {
      if (c.batch_size == p.default_batch_size && (!b0_best || c.eta < b0_best->eta)) b0_best = &c;
    }
    t.rows.push_back({p.workload, std::to_string(p.default_batch_size),
                      fmt::format("{} @ {} W", best->batch_size, watts_text(best->power_limit)),
                      fmt::format("{} W", watts_text(b0_best->power_limit)),
                      saving(b0_best->eta / p.default_eta)});
  }
  t.per_batch_size = per_bs.text();
  t.per_power_limit = per_pl.text();
  return t;
}

// A log axis where a curve spans more than a factor of 20 (a small batch
// size that barely converges), so the rest of the curve stays readable.
bool needs_log_y(const LandscapePanel& p) {
  double lo = 0, hi = 0;
  for (const auto& c : p.points) {
    if (c.power_limit != p.max_power_limit || c.runs_converged == 0) continue;
    const double a = c.eta_min / p.default_eta, b = c.eta_max / p.default_eta;
    lo = lo == 0 ? a : std::min(lo, a);
    hi = std::max(hi, b);
  }
  return lo > 0 && hi / lo > 20;
}

// Panel i of the ETA per batch size (Figures 5 left and 17).
std::string batch_size_panel(const PaperData& d, const EtaPerKnobTables& t, std::size_t i) {
  const auto& p = d.landscape[i];
  return fmt::format(
      "set title '{0}'\nset logscale x 2\n{4}set xlabel 'batch size'\n"
      "set ylabel 'ETA / default ETA{5}'\n"
      "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n{6}"
      "plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::{1}::{2} using 3:11:12:13 with "
      "yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '{3}' notitle, '' skip 1 every ::{1}::{2} using "
      "($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle\n"
      "unset logscale\nunset arrow\n",
      p.workload, t.bs_blocks[i].first, t.bs_blocks[i].last, kZeusColour,
      needs_log_y(p) ? "set logscale y 10\n" : "", needs_log_y(p) ? " (log scale)" : "", kUnitLine);
}

// Panel i of the ETA per power limit (Figures 5 right and 18).
std::string power_limit_panel(const PaperData& d, const EtaPerKnobTables& t, std::size_t i) {
  const auto& p = d.landscape[i];
  return fmt::format(
      "set title '{0} (b0 = {6}, energy-optimal {8})'\n"
      "set xlabel 'power limit (W)'\nset ylabel 'ETA / default ETA'\n"
      "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n{9}"
      "plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::{1}::{2} using 5:8 with "
      "linespoints pt 7 ps 0.8 lw 1.5 lc rgb '{5}' notitle, '' skip 1 every ::{3}::{4} "
      "using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '{7}' notitle\nunset arrow\n",
      short_name(p.workload), t.pl_b0_blocks[i].first, t.pl_b0_blocks[i].last,
      t.pl_best_blocks[i].first, t.pl_best_blocks[i].last, kGridColour, p.default_batch_size,
      kZeusColour, t.best_batch_sizes[i], kUnitLine);
}

std::vector<std::string> batch_size_key() {
  const std::string bs_entries_curve =
      fmt::format("yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '{}'", kZeusColour);
  return {"(NaN):(NaN):(NaN):(NaN) with " + bs_entries_curve +
              " title 'max limit (bars: fastest/slowest run)'",
          line_entry("points pt 6 ps 2 lc rgb 'black'", "some runs miss the target"),
          line_entry("lines dt 2 lw 1.5 lc rgb 'black'", "default ETA")};
}

std::vector<std::string> power_limit_key() {
  return {
      line_entry(fmt::format("linespoints pt 7 ps 0.8 lw 1.5 lc rgb '{}'", kGridColour), "at b0"),
      line_entry(fmt::format("linespoints pt 5 ps 0.8 lw 1.5 lc rgb '{}'", kZeusColour),
                 "at the energy-optimal batch size"),
      line_entry("lines dt 2 lw 1.5 lc rgb 'black'", "default ETA")};
}

// Figure 5: both knobs of the paper's workload (DeepSpeech2), side by side.
std::string fig05_script(const PaperData& d, const EtaPerKnobTables& t) {
  std::size_t focus = 0;
  for (std::size_t i = 0; i < d.landscape.size(); ++i) {
    if (d.landscape[i].workload == kPaperWorkload) focus = i;
  }
  const PanelGrid one{1, 2, 470, 2};
  const std::vector<std::string> pl_key = power_limit_key();
  std::vector<std::string> both_keys = batch_size_key();
  both_keys.insert(both_keys.end(), pl_key.begin(), pl_key.end() - 1);
  return gnuplot_script(
      "fig05-eta-per-knob", 1100, 470,
      one.begin("Figure 5: ETA per batch size and per power limit, DeepSpeech2 on V100") +
          one.panel(0) + batch_size_panel(d, t, focus) + one.panel(1) +
          power_limit_panel(d, t, focus) + one.key(both_keys));
}

// Figures 17 and 18: each knob for every workload.
void add_fig17_fig18_scripts(const PaperData& d, const EtaPerKnobTables& t, Section& s) {
  const PanelGrid six{2, 3, 800, 1};
  std::string all_bs = six.begin("Figure 17: ETA per batch size at the maximum power limit (V100)");
  std::string all_pl = six.begin("Figure 18: ETA per power limit (V100)");
  for (std::size_t i = 0; i < d.landscape.size(); ++i) {
    all_bs += six.panel(static_cast<int>(i)) + batch_size_panel(d, t, i);
    all_pl += six.panel(static_cast<int>(i)) + power_limit_panel(d, t, i);
  }
  all_bs += six.key(batch_size_key());
  all_pl += six.key(power_limit_key());
  s.scripts.emplace_back("fig17-eta-per-batch-size",
                         gnuplot_script("fig17-eta-per-batch-size", 1350, 800, all_bs));
  s.scripts.emplace_back("fig18-eta-per-power-limit",
                         gnuplot_script("fig18-eta-per-power-limit", 1350, 800, all_pl));
}

}  // namespace

Section eta_per_knob_section(const PaperData& d) {
  Section s;
  EtaPerKnobTables t = eta_per_knob_tables(d);
  s.csvs.emplace_back("fig05-eta-per-batch-size.csv", std::move(t.per_batch_size));
  s.csvs.emplace_back("fig05-eta-per-power-limit.csv", std::move(t.per_power_limit));
  s.scripts.emplace_back("fig05-eta-per-knob", fig05_script(d, t));
  add_fig17_fig18_scripts(d, t, s);

  s.markdown = fmt::format(
      "## Figure 5 / 17 / 18 — {}\n\n"
      "Expected ETA relative to the default, per batch size at the maximum power limit (bars: "
      "the fastest and the slowest of the trace's runs to reach the target; open circles: some "
      "runs never reach it within max_epochs) and per power limit at b0 and at the "
      "energy-optimal batch size. Figure 5 is DeepSpeech2 on V100; Figures 17 and 18 all six "
      "workloads.\n\n{}{}{}\n{}\n"
      "**Against the paper.** Its text gives no numbers for these figures. The shapes to compare: "
      "ETA is far from monotone in the batch size (the default is rarely the cheapest), and "
      "lowering the power limit first saves energy and then costs it again as training slows; "
      "the best power limit differs between batch sizes, which is why Zeus picks the limit per "
      "batch size. The tests `PaperEtaPerKnob.*` check every plotted point against a brute force "
      "over the raw trace files and that each curve's lowest point is the optimum of Figure 1 "
      "(the best batch size at the maximum limit, the best limit at b0, the least ETA of "
      "all).\n\n",
      paper_figure_info(PaperFigure::kEtaPerKnob).title,
      md_figure("fig05-eta-per-knob", "Figure 5: ETA per batch size and per power limit",
                {"fig05-eta-per-batch-size.csv", "fig05-eta-per-power-limit.csv"}),
      md_figure("fig17-eta-per-batch-size", "Figure 17: ETA per batch size, all workloads", {}),
      md_figure("fig18-eta-per-power-limit", "Figure 18: ETA per power limit, all workloads", {}),
      md_table({"workload (V100)", "b0", "energy-optimal configuration", "best limit at b0",
                "saving of that limit"},
               t.rows));
  return s;
}

}  // namespace zeus::sim::paper
