// Figures that vary one knob: 10 (drift), 11 and 22 (eta), 12 (beta), 13
// (ablation).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "paper_sections.h"

namespace zeus::sim::paper {

Section drift_section(const PaperData& d) {
  Section s;
  const DriftFigure& f = *d.drift;
  Csv csv({"recurrence", "optimal_bs", "windowed_bs_geomean", "windowed_regret_mean",
           "windowed_regret_sd", "unwindowed_bs_geomean", "unwindowed_regret_mean",
           "unwindowed_regret_sd"});
  const auto& w = f.variants.at(0);
  const auto& u = f.variants.at(1);
  for (int i = 0; i < f.num_recurrence; ++i) {
    const auto k = static_cast<std::size_t>(i);
    csv.row({std::to_string(i + 1), std::to_string(f.optimal_batch_size[k]),
             num(w.geo_mean_batch_size[k]), num(w.cum_regret_rel[k].mean),
             num(w.cum_regret_rel[k].sd), num(u.geo_mean_batch_size[k]),
             num(u.cum_regret_rel[k].mean), num(u.cum_regret_rel[k].sd)});
  }
  s.csvs.emplace_back("fig10-drift.csv", csv.text());
  // The drift is marked by a vertical arrow (not a sampled function, which
  // `with impulses` would draw as a comb of lines).
  const PanelGrid grid{1, 2, 470, 1};
  const std::string drift_line = fmt::format(
      "set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 3 lw 1.2 lc rgb '#555555'\n",
      f.drift_at + 1);
  std::string body =
      grid.begin(fmt::format("Figure 10: a drifting workload (synthetic; the best batch size "
                             "moves from {} to {} at recurrence {})",
                             f.optimal_batch_size.front(), f.optimal_batch_size.back(),
                             f.drift_at + 1)) +
      "set xlabel 'recurrence'\n" + drift_line + grid.panel(0) +
      fmt::format(
          "set title 'batch size chosen (geometric mean over seeds)'\nset ylabel 'batch "
          "size'\nset logscale y 2\nset yrange [24:700]\n"
          "plot 'csv/fig10-drift.csv' skip 1 using 1:2 with steps lw 2 dt 2 lc rgb 'black' "
          "notitle, '' skip 1 using 1:3 with lines lw 1.5 lc rgb '{0}' notitle, '' skip 1 using "
          "1:6 with lines lw 1.5 lc rgb '{1}' notitle\n",
          kZeusColour, kGridColour) +
      grid.panel(1) +
      fmt::format(
          "unset logscale y\nset yrange [*:*]\nset title 'cumulative regret (band = ±1 sd)'\n"
          "set ylabel 'regret / C* (optimal recurrences)'\n"
          "plot 'csv/fig10-drift.csv' skip 1 using 1:($4-$5):($4+$5) with filledcurves fs "
          "transparent solid 0.2 noborder lc rgb '{0}' notitle, '' skip 1 using 1:($7-$8):($7+$8) "
          "with filledcurves fs transparent solid 0.2 noborder lc rgb '{1}' notitle, '' skip 1 "
          "using 1:4 with lines lw 2 lc rgb '{0}' notitle, '' skip 1 using 1:7 with lines lw 2 "
          "lc rgb '{1}' notitle\n",
          kZeusColour, kGridColour) +
      grid.key({line_entry("steps lw 2 dt 2 lc rgb 'black'", "optimal batch size"),
                line_entry(fmt::format("lines lw 2 lc rgb '{}'", kZeusColour),
                           fmt::format("Zeus, window {}", w.window_size)),
                line_entry(fmt::format("lines lw 2 lc rgb '{}'", kGridColour), "Zeus, no window"),
                line_entry("lines dt 3 lw 1.2 lc rgb '#555555'",
                           fmt::format("the drift (recurrence {})", f.drift_at + 1))});
  s.scripts.emplace_back("fig10-drift", gnuplot_script("fig10-drift", 1100, 470, body));
  s.markdown = fmt::format(
      "## Figure 10 — {}\n\n"
      "**A stand-in.** The paper's Figure 10 replays Capriccio, a sentiment-analysis dataset "
      "whose data drift over time; that dataset's training traces are not in the project. We "
      "replay the simulator's synthetic drifting workload instead (docs/simulator.md, "
      "`zeus simulate --drift`): five batch sizes with equal per-epoch cost, whose "
      "epochs-to-target change at recurrence {} so that the best batch size moves from {} to "
      "{}. Zeus with a window of {} observations per batch size against Zeus without a window, "
      "η = 0.5, β = 2.\n\n{}"
      "Share of the {} recurrences after the drift that run the new optimum: window {}: "
      "**{:.0f}%**; no window: **{:.0f}%**. Final cumulative regret (in optimal recurrences): "
      "window {} {}; no window {}.\n\n"
      "**Against the paper.** The paper's point, that a windowed Zeus follows a drifting "
      "optimum, is what the test `PaperFigures.DriftWindowFollowsTheMove` checks here; its "
      "Capriccio numbers cannot be compared, because the data is different.\n\n",
      paper_figure_info(PaperFigure::kDrift).title, f.drift_at + 1, f.optimal_batch_size.front(),
      f.optimal_batch_size.back(), w.window_size,
      md_figure("fig10-drift", "Figure 10: drift", {"fig10-drift.csv"}), 60, w.window_size,
      100.0 * w.share_optimal_after_drift, 100.0 * u.share_optimal_after_drift, w.window_size,
      pm(w.cum_regret_rel.back(), 1), pm(u.cum_regret_rel.back(), 1));
  return s;
}

namespace {

std::string eta_label(double eta) { return fmt::format("{:g}", eta); }

// Figure 11's CSV (one row per eta) and the report's table rows.
std::pair<Csv, std::vector<std::vector<std::string>>> eta_sweep_numbers(const EtaSweep& sw) {
  Csv csv({"eta", "oracle_bs", "oracle_pl_W", "oracle_eta_J", "oracle_tta_s", "oracle_cost_J",
           "zeus_eta_J_mean", "zeus_eta_J_sd", "zeus_tta_s_mean", "zeus_tta_s_sd", "zeus_mode_bs",
           "zeus_mode_pl_W", "seeds"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : sw.points) {
    csv.row({eta_label(p.eta), std::to_string(p.oracle.opt_batch_size),
             watts_text(p.oracle.opt_power_limit), num(p.oracle_eta.value()),
             num(p.oracle_tta.count()), num(p.oracle.opt_cost.value()), num(p.zeus_eta_j.mean),
             num(p.zeus_eta_j.sd), num(p.zeus_tta_s.mean), num(p.zeus_tta_s.sd),
             std::to_string(p.mode_batch_size), watts_text(p.mode_power_limit),
             std::to_string(p.zeus_eta_j.n)});
    rows.push_back(
        {eta_label(p.eta),
         fmt::format("{} @ {} W", p.oracle.opt_batch_size, watts_text(p.oracle.opt_power_limit)),
         fixed(p.oracle_eta.value() / 1e6, 2), fixed(p.oracle_tta.count() / 3600, 2),
         fmt::format("{} @ {} W", p.mode_batch_size, watts_text(p.mode_power_limit)),
         fmt::format("{:.2f} ± {:.2f}", p.zeus_eta_j.mean / 1e6, p.zeus_eta_j.sd / 1e6),
         fmt::format("{:.2f} ± {:.2f}", p.zeus_tta_s.mean / 3600, p.zeus_tta_s.sd / 3600)});
  }
  return {std::move(csv), std::move(rows)};
}

// Lines of constant cost through the optimum at a few eta: the gnuplot
// definitions, and the terms to add to the plot command.
struct CostLines {
  std::string definitions;
  std::string plot_terms;
};
CostLines constant_cost_lines(const EtaSweep& sw) {
  // Constant-cost lines through the optimum at a few eta: eta*E + (1-eta)*M*T = C*,
  // in plot units (hours, MJ): E = (C* - (1-eta)*M*T*3600)/eta / 1e6.
  std::string lines;
  const std::vector<std::string> dashes = {"2", "3", "4"};
  std::size_t k = 0;
  for (double eta : {0.0, 0.5, 1.0}) {
    const auto it = std::find_if(sw.points.begin(), sw.points.end(),
                                 [&](const EtaPoint& p) { return p.eta == eta; });
    if (it == sw.points.end()) continue;
    const double c = it->oracle.opt_cost.value(), m = sw.max_power.value();
    if (eta == 0.0) {
      lines += fmt::format(
          "set arrow from {0},graph 0 to {0},graph 1 nohead dt {1} lw 1.2 lc rgb '#555555'\n"
          "set label 'cost(η=0) = C*' at {0},graph 0.95 offset 0.5,0 font ',8'\n",
          num(c / m / 3600), dashes[k]);
    } else {
      lines += fmt::format("c{0}(x) = ({1} - (1-{2})*{3}*x*3600)/{2}/1e6\n", k, num(c), num(eta),
                           num(m));
    }
    ++k;
  }
  std::string plot_lines;
  k = 0;
  for (double eta : {0.0, 0.5, 1.0}) {
    if (std::none_of(sw.points.begin(), sw.points.end(),
                     [&](const EtaPoint& p) { return p.eta == eta; })) {
      continue;
    }
    if (eta != 0.0) {
      plot_lines += fmt::format(
          ", c{0}(x) with lines dt {1} lw 1.2 lc rgb '#555555' title 'constant cost at η = {2} "
          "(through its optimum)'",
          k, dashes[k], eta_label(eta));
    }
    ++k;
  }
  return {lines, plot_lines};
}

// The plot's ranges: from just below the fastest and the most frugal
// configuration to just beyond the optima and Zeus's end points.
struct PlotRange {
  double tmin = 1e300, emin = 1e300, tmax = 0, emax = 0;
};
PlotRange eta_sweep_range(const LandscapePanel& panel, const EtaSweep& sw) {
  PlotRange r;
  for (auto i : panel.front) {
    r.tmin = std::min(r.tmin, panel.points[i].tta.count() / 3600);
    r.emin = std::min(r.emin, panel.points[i].eta.value() / 1e6);
  }
  for (const auto& p : sw.points) {
    r.tmax = std::max(
        {r.tmax, p.oracle_tta.count() / 3600, (p.zeus_tta_s.mean + p.zeus_tta_s.sd) / 3600});
    r.emax =
        std::max({r.emax, p.oracle_eta.value() / 1e6, (p.zeus_eta_j.mean + p.zeus_eta_j.sd) / 1e6});
  }
  return r;
}

// Figure 2's configurations and front of this panel behind the plot (empty
// when Figure 2 is not selected).
std::string landscape_backdrop(const PaperData& d, const LandscapePanel* panel) {
  std::size_t cfg_first = 0, cfg_last = 0, front_first = 0, front_last = 0;
  {
    std::size_t rows_before = 0, front_before = 0;
    for (const auto& p : d.landscape) {
      if (&p == panel) break;
      rows_before += p.points.size();
      front_before += p.front.size();
    }
    cfg_first = rows_before;
    cfg_last = rows_before + panel->points.size() - 1;
    front_first = front_before;
    front_last = front_before + panel->front.size() - 1;
  }
  const bool have_configs = d.selected(PaperFigure::kParetoFront);
  std::string backdrop;
  if (have_configs) {
    backdrop = fmt::format(
        "'csv/fig02-configurations.csv' skip 1 every ::{0}::{1} using ($8==1 ? $11/3600 : "
        "1/0):($10/1e6) with points pt 7 ps 0.5 lc rgb '#c6dbef' title 'configuration', "
        "'csv/fig02-front.csv' skip 1 every ::{2}::{3} using ($7/3600):($6/1e6) with lines lw 2 "
        "lc rgb '#fc9272' title 'Pareto front', ",
        cfg_first, cfg_last, front_first, front_last);
  }
  return backdrop;
}

// The optima as plot terms, consecutive etas that share one as one marker.
std::string optima_terms(const EtaSweep& sw) {
  // Consecutive etas that share an optimum are one marker with one key entry
  // ("η = 0–0.4: 48 @ 250 W"): labels at the points would sit on each other.
  const std::vector<int> point_types = {5, 7, 9, 11, 13, 4, 6, 8, 10, 12, 14};
  std::string optima;
  std::size_t group = 0;
  for (std::size_t i = 0; i < sw.points.size();) {
    std::size_t j = i;
    const auto same = [&](std::size_t m) {
      return sw.points[m].oracle.opt_batch_size == sw.points[i].oracle.opt_batch_size &&
             sw.points[m].oracle.opt_power_limit == sw.points[i].oracle.opt_power_limit;
    };
    while (j + 1 < sw.points.size() && same(j + 1)) ++j;
    const std::string etas =
        i == j ? eta_label(sw.points[i].eta)
               : fmt::format("{}–{}", eta_label(sw.points[i].eta), eta_label(sw.points[j].eta));
    optima += fmt::format(
        ", 'csv/fig11-eta-sweep.csv' skip 1 every ::{}::{} using ($5/3600):($4/1e6) with points "
        "pt {} ps 1.6 lc rgb '#d7301f' title 'optimum for η = {}: {} @ {} W'",
        i, j, point_types[group % point_types.size()], etas, sw.points[i].oracle.opt_batch_size,
        watts_text(sw.points[i].oracle.opt_power_limit));
    ++group;
    i = j + 1;
  }
  return optima;
}

}  // namespace

Section eta_sweep_section(const PaperData& d) {
  Section s;
  const EtaSweep& sw = *d.eta_sweep;
  const LandscapePanel* panel = nullptr;
  for (const auto& p : d.landscape) {
    if (p.workload == sw.workload && p.gpu == sw.gpu) panel = &p;
  }
  const auto [csv, rows] = eta_sweep_numbers(sw);
  s.csvs.emplace_back("fig11-eta-sweep.csv", csv.text());
  const CostLines cost = constant_cost_lines(sw);
  const PlotRange range = eta_sweep_range(*panel, sw);
  const std::string backdrop = landscape_backdrop(d, panel);
  const std::string optima = optima_terms(sw);
  s.scripts.emplace_back(
      "fig11-eta-sweep",
      gnuplot_script(
          "fig11-eta-sweep", 1000, 700,
          fmt::format(
              "set title 'Figure 11: η from 0 (time) to 1 (energy) moves the choice along the "
              "Pareto front, {} on {}'\nset xlabel 'TTA (h)'\nset ylabel 'ETA (MJ)'\n"
              "set xrange [{}:{}]\nset yrange [{}:{}]\n"
              "set key outside below center horizontal Left reverse samplen 2 font ',9'\n{}"
              "plot {}'csv/fig11-eta-sweep.csv' skip 1 using ($5/3600):($4/1e6) with lines lw 1.5 "
              "lc rgb '#d7301f' notitle{}, '' skip 1 using ($9/3600):($7/1e6):($10/3600):($8/1e6) "
              "with xyerrorbars pt 7 ps 0.9 lc rgb '{}' title 'Zeus (last 5 recurrences, mean ± "
              "sd)'{}\n",
              sw.workload, sw.gpu, num(range.tmin * 0.95), num(range.tmax * 1.12),
              num(range.emin * 0.95), num(range.emax * 1.12), cost.definitions, backdrop, optima,
              kZeusColour, cost.plot_terms)));
  const auto& first = sw.points.front();
  const auto& last = sw.points.back();
  s.markdown = fmt::format(
      "## Figure 11 — {}\n\n"
      "Zeus on {} ({}) for η from {} to {}; for each η the optimum (least expected cost over "
      "configurations whose runs all reach the target) and where Zeus ends (mean ETA and TTA of "
      "the last 5 recurrences over seeds), drawn on the configuration landscape of Figure 2 with "
      "lines of constant cost through the optima at η = 0, 0.5 and 1. Consecutive η that share "
      "an optimum share a marker.\n\n{}{}\n"
      "**Against the paper.** Its text gives no numbers for this figure. The defining property, "
      "checked by `PaperFigures.EtaEndsPickTheTimeAndEnergyOptima`: η = {} picks the fastest "
      "configuration ({} @ {} W, {:.2f} h) and η = {} the most frugal one ({} @ {} W, "
      "{:.2f} MJ); every optimum in between lies on the Pareto front, and Zeus's end points "
      "follow them.\n\n",
      paper_figure_info(PaperFigure::kEtaSweep).title, sw.workload, sw.gpu, eta_label(first.eta),
      eta_label(last.eta),
      md_figure("fig11-eta-sweep", "Figure 11: eta sweep on the Pareto front",
                {"fig11-eta-sweep.csv"}),
      md_table({"η", "optimum", "its ETA (MJ)", "its TTA (h)", "Zeus's final choice (mode)",
                "Zeus ETA (MJ)", "Zeus TTA (h)"},
               rows),
      eta_label(first.eta), first.oracle.opt_batch_size, watts_text(first.oracle.opt_power_limit),
      first.oracle_tta.count() / 3600, eta_label(last.eta), last.oracle.opt_batch_size,
      watts_text(last.oracle.opt_power_limit), last.oracle_eta.value() / 1e6);
  return s;
}

Section improvement_section(const PaperData& d) {
  Section s;
  Csv csv({"gpu", "workload", "label", "eta", "energy_factor_mean", "energy_factor_sd",
           "time_factor_mean", "time_factor_sd", "oracle_energy_factor", "oracle_time_factor"});
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  std::vector<std::vector<std::string>> rows;
  for (const auto& sw : d.improvement) {
    const std::size_t first = csv.rows();
    for (const auto& p : sw.points) {
      csv.row({sw.gpu, sw.workload, short_name(sw.workload), eta_label(p.eta),
               num(p.energy_factor.mean), num(p.energy_factor.sd), num(p.time_factor.mean),
               num(p.time_factor.sd), num(p.oracle_energy_factor), num(p.oracle_time_factor)});
    }
    blocks.emplace_back(first, csv.rows() - 1);
    const auto& a = sw.points.front();
    const auto& b = sw.points.back();
    rows.push_back({sw.workload, pm(a.energy_factor, 2), pm(b.energy_factor, 2),
                    pm(a.time_factor, 2), pm(b.time_factor, 2)});
  }
  s.csvs.emplace_back("fig22-improvement.csv", csv.text());
  const std::vector<std::string> colours = {"#1b9e77", "#d95f02", "#7570b3",
                                            "#e7298a", "#66a61e", "#e6ab02"};
  const PanelGrid grid{1, 2, 480, 1};
  std::string body = grid.begin(
                         "Figure 22: improvement over Default across η (Default / Zeus, last 5 "
                         "recurrences; mean and sd over seeds)") +
                     "set xlabel 'η'\nset xrange [-0.05:1.05]\n" + std::string(kUnitLine);
  std::vector<std::string> key;
  for (std::size_t w = 0; w < blocks.size(); ++w) {
    key.push_back("(NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '" +
                  colours[w % 6] + "' title '" + short_name(d.improvement[w].workload) + "'");
  }
  key.push_back(line_entry("lines dt 2 lw 1.5 lc rgb 'black'", "Default (= 1)"));
  for (int metric = 0; metric < 2; ++metric) {
    body +=
        grid.panel(metric) + fmt::format("set title '{0}'\nset ylabel '{0} improvement (×)'\nplot ",
                                         metric == 0 ? "energy" : "time");
    const int col = metric == 0 ? 5 : 7;
    for (std::size_t w = 0; w < blocks.size(); ++w) {
      body += fmt::format(
          "{}'csv/fig22-improvement.csv' skip 1 every ::{}::{} using 4:{}:{} with yerrorlines "
          "pt 7 ps 0.6 lw 1.5 lc rgb '{}' notitle",
          w == 0 ? "" : ", ", blocks[w].first, blocks[w].second, col, col + 1, colours[w % 6]);
    }
    body += "\n";
  }
  body += grid.key(key);
  s.scripts.emplace_back("fig22-improvement",
                         gnuplot_script("fig22-improvement", 1100, grid.height_px, body));
  s.markdown = fmt::format(
      "## Figure 22 — {}\n\n"
      "Energy and time improvement factors of Zeus over Default (expected Default ETA (TTA) ÷ "
      "Zeus's last-5 mean, per seed) for every V100 workload as η goes from 0 to 1; the CSV also "
      "has the optimum's factors.\n\n{}{}\n"
      "**Against the paper.** Its text gives no numbers for this figure. What to compare: "
      "raising η buys energy with time, so the energy factor grows and the time factor shrinks "
      "toward η = 1 (for the optimum this is exact and tested: "
      "`PaperFigures.ImprovementFactorsMoveMonotonicallyWithEta`); at η = 0 Zeus still saves "
      "energy wherever the fastest configuration is also cheaper than the default.\n\n",
      paper_figure_info(PaperFigure::kImprovementFactors).title,
      md_figure("fig22-improvement", "Figure 22: improvement factors across eta",
                {"fig22-improvement.csv"}),
      md_table({"workload (V100)", "energy × at η = 0", "energy × at η = 1", "time × at η = 0",
                "time × at η = 1"},
               rows));
  return s;
}

Section beta_section(const PaperData& d) {
  Section s;
  const BetaFigure& f = *d.beta;
  Csv csv({"gpu", "workload", "label", "beta", "ratio_mean", "ratio_sd", "cum_eta_J_mean",
           "cum_eta_J_sd", "seeds"});
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  std::vector<std::string> names;
  std::string current;
  for (const auto& r : f.rows) {
    if (r.workload != current) {
      if (!current.empty()) blocks.back().second = csv.rows() - 1;
      blocks.emplace_back(csv.rows(), 0);
      names.push_back(r.workload);
      current = r.workload;
    }
    csv.row({f.gpu, r.workload, short_name(r.workload), fmt::format("{:g}", r.beta),
             num(r.ratio.mean), num(r.ratio.sd), num(r.cum_eta_j.mean), num(r.cum_eta_j.sd),
             std::to_string(r.ratio.n)});
  }
  blocks.back().second = csv.rows() - 1;
  const std::size_t geo_first = csv.rows();
  for (const auto& [beta, g] : f.geo_mean) {
    csv.row({f.gpu, "geometric mean", "geomean", fmt::format("{:g}", beta), num(g), "0", "nan",
             "nan", std::to_string(f.rows.front().ratio.n)});
  }
  s.csvs.emplace_back("fig12-beta.csv", csv.text());
  const std::vector<std::string> colours = {"#1b9e77", "#d95f02", "#7570b3",
                                            "#e7298a", "#66a61e", "#e6ab02"};
  std::string body =
      "set title 'Figure 12: cumulative ETA across β, relative to β = 2 (per seed; mean and sd "
      "over seeds), V100'\nset xlabel 'β (early-stopping threshold factor)'\nset ylabel "
      "'cumulative ETA / cumulative ETA at β = 2'\nset key outside right font ',9'\nplot ";
  for (std::size_t w = 0; w < blocks.size(); ++w) {
    body += fmt::format(
        "'csv/fig12-beta.csv' skip 1 every ::{}::{} using 4:5:6 with yerrorlines pt 7 ps 0.6 lw "
        "1.2 lc rgb '{}' title '{}', ",
        blocks[w].first, blocks[w].second, colours[w % 6], short_name(names[w]));
  }
  body += fmt::format(
      "'csv/fig12-beta.csv' skip 1 every ::{}::{} using 4:5 with linespoints pt 5 ps 1 lw 3 lc "
      "rgb 'black' title 'geometric mean', 1 with lines dt 2 lc rgb '#888888' notitle\n",
      geo_first, csv.rows() - 1);
  s.scripts.emplace_back("fig12-beta", gnuplot_script("fig12-beta", 1000, 480, body));
  std::vector<std::vector<std::string>> rows;
  for (const auto& [beta, g] : f.geo_mean) {
    std::vector<std::string> r = {fmt::format("{:g}", beta), fixed(g, 3)};
    for (const auto& row : f.rows) {
      if (row.beta == beta) r.push_back(fixed(row.ratio.mean, 3));
    }
    rows.push_back(r);
  }
  std::vector<std::string> header = {"β", "geometric mean"};
  for (const auto& n : names) header.push_back(short_name(n));
  const auto best =
      std::min_element(f.geo_mean.begin(), f.geo_mean.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  s.markdown = fmt::format(
      "## Figure 12 — {}\n\n"
      "Zeus on every V100 workload with β (a run stops once its cost would exceed β × the "
      "least cost so far) from {:g} to {:g}: the energy of all 2·|B|·|P| recurrences, each seed "
      "divided by the same seed at β = 2 (so β = 2 is exactly 1), and the geometric mean over "
      "the workloads.\n\n{}{}\n"
      "Lowest geometric mean: β = {:g} ({:.3f}).\n\n"
      "**Against the paper.** Its text gives no numbers for this figure; its claim is that Zeus "
      "is not sensitive to β around 2, which the flatness of the geometric mean shows here: "
      "small β stops exploratory runs earlier (cheaper exploration) but also cuts runs that "
      "would have converged, large β lets bad runs burn energy.\n\n",
      paper_figure_info(PaperFigure::kBetaSweep).title, f.betas.front(), f.betas.back(),
      md_figure("fig12-beta", "Figure 12: cumulative ETA across beta", {"fig12-beta.csv"}),
      md_table(header, rows), best->first, best->second);
  return s;
}

namespace {

// Figure 13's numbers: the long and the wide CSV, the report's table, and the
// (workload, ablation) pairs that beat full Zeus on energy.
struct AblationNumbers {
  Csv csv = Csv({"gpu", "workload", "label", "ablation", "energy_ratio_mean", "energy_ratio_sd",
                 "time_ratio_mean", "time_ratio_sd", "cost_ratio_mean", "cost_ratio_sd", "seeds",
                 "stuck_seeds"});
  // Wide rows for the bars: per workload (and the geometric mean), one column per ablation.
  Csv bars =
      Csv({"workload", "label", "noes_energy", "noes_energy_sd", "noprune_energy",
           "noprune_energy_sd", "nojit_energy", "nojit_energy_sd", "noes_time", "noes_time_sd",
           "noprune_time", "noprune_time_sd", "nojit_time", "nojit_time_sd"});
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> below;
};

AblationNumbers ablation_numbers(const AblationFigure& f) {
  AblationNumbers n;
  std::vector<std::string> order;
  for (const auto& r : f.rows) {
    n.csv.row({f.gpu, r.workload, short_name(r.workload), std::string(ablation_name(r.ablation)),
               num(r.energy_ratio.mean), num(r.energy_ratio.sd), num(r.time_ratio.mean),
               num(r.time_ratio.sd), num(r.cost_ratio.mean), num(r.cost_ratio.sd),
               std::to_string(r.energy_ratio.n), std::to_string(r.stuck_seeds.size())});
    if (std::find(order.begin(), order.end(), r.workload) == order.end())
      order.push_back(r.workload);
  }
  for (const auto& w : order) {
    std::vector<std::string> e, t, trow = {w};
    for (auto a : all_ablations()) {
      for (const auto& r : f.rows) {
        if (r.workload != w || r.ablation != a) continue;
        e.push_back(num(r.energy_ratio.mean));
        e.push_back(num(r.energy_ratio.sd));
        t.push_back(num(r.time_ratio.mean));
        t.push_back(num(r.time_ratio.sd));
        std::string cell = r.energy_ratio.n == 0
                               ? std::string("—")
                               : fmt::format("{} / {}", fixed(r.energy_ratio.mean, 3),
                                             fixed(r.time_ratio.mean, 3));
        if (!r.stuck_seeds.empty()) {
          cell += fmt::format(" ({} of {} seeds stuck)", r.stuck_seeds.size(),
                              r.stuck_seeds.size() + static_cast<std::size_t>(r.energy_ratio.n));
        }
        trow.push_back(cell);
        if (r.energy_ratio.mean < 1.0) {
          n.below.push_back(fmt::format("{} on {} ({:.3f})", ablation_name(a), short_name(w),
                                        r.energy_ratio.mean));
        }
      }
    }
    std::vector<std::string> row = {w, short_name(w)};
    row.insert(row.end(), e.begin(), e.end());
    row.insert(row.end(), t.begin(), t.end());
    n.bars.row(row);
    n.table.push_back(trow);
  }
  std::vector<std::string> geo = {"geometric mean", "geomean"};
  std::vector<std::string> geo_t, trow = {"**geometric mean**"};
  for (auto a : all_ablations()) {
    geo.push_back(num(f.geo_mean_energy.at(a)));
    geo.push_back("0");
    geo_t.push_back(num(f.geo_mean_time.at(a)));
    geo_t.push_back("0");
    trow.push_back(fmt::format("**{} / {}**", fixed(f.geo_mean_energy.at(a), 3),
                               fixed(f.geo_mean_time.at(a), 3)));
  }
  geo.insert(geo.end(), geo_t.begin(), geo_t.end());
  n.bars.row(geo);
  n.table.push_back(trow);
  return n;
}

// Figure 13's bars (from fig13-bars.csv) on a log axis.
std::string ablation_script(const AblationFigure& f) {
  // A log axis: a ratio of 16 and one of 1.02 on the same plot.
  double lo = 0.5, hi = 2.0;
  for (const auto& r : f.rows) {
    for (const Spread* x : {&r.energy_ratio, &r.time_ratio}) {
      if (x->n == 0) continue;
      if (x->mean - x->sd > 0) lo = std::min(lo, 0.8 * (x->mean - x->sd));
      hi = std::max(hi, 1.25 * (x->mean + x->sd));
    }
  }
  const PanelGrid grid{1, 2, 480, 1};
  std::string body =
      grid.begin(
          "Figure 13: ablation, cumulative energy and time over all recurrences relative "
          "to full Zeus (per seed; mean and sd; V100)") +
      "set style data histograms\nset style histogram errorbars gap 1 lw 1\n"
      "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset logscale y 10\n" +
      fmt::format("set yrange [{}:{}]\n", num(lo), num(hi)) +
      "set ytics (0.5, 1, 2, 5, 10, 20, 50, 100)\nset xtics rotate by 25 right scale 0\n" +
      std::string(kUnitLine);
  const std::vector<std::string> colours = {"#fdae6b", "#74c476", "#9e9ac8"};
  std::vector<std::string> key;
  for (std::size_t a = 0; a < all_ablations().size(); ++a) {
    key.push_back(box_entry(colours[a], std::string(ablation_name(all_ablations()[a]))));
  }
  key.push_back(line_entry("lines dt 2 lw 1.5 lc rgb 'black'", "full Zeus (= 1)"));
  for (int metric = 0; metric < 2; ++metric) {
    body += grid.panel(metric) +
            fmt::format(
                "set title '{0}'\nset ylabel 'cumulative {0} / full Zeus (log scale)'\n"
                "plot ",
                metric == 0 ? "ETA" : "TTA");
    for (std::size_t a = 0; a < all_ablations().size(); ++a) {
      const std::size_t col = 3 + static_cast<std::size_t>(metric) * 6 + 2 * a;
      body += fmt::format("{}'csv/fig13-bars.csv' skip 1 using {}:{}{} notitle lc rgb '{}'",
                          a == 0 ? "" : ", ", col, col + 1, a == 0 ? ":xtic(2)" : "", colours[a]);
    }
    body += "\n";
  }
  body += grid.key(key);
  return gnuplot_script("fig13-ablation", 1200, grid.height_px, body);
}

}  // namespace

Section ablation_section(const PaperData& d) {
  Section s;
  const AblationFigure& f = *d.ablation;
  const AblationNumbers n = ablation_numbers(f);
  s.csvs.emplace_back("fig13-ablation.csv", n.csv.text());
  s.csvs.emplace_back("fig13-bars.csv", n.bars.text());
  s.scripts.emplace_back("fig13-ablation", ablation_script(f));
  bool geo_beats = false;
  for (auto a : all_ablations()) geo_beats = geo_beats || f.geo_mean_energy.at(a) < 1.0;
  const std::string where =
      n.below.empty()
          ? "No ablated variant uses less energy than full Zeus on any workload."
          : fmt::format(
                "Where an ablated variant uses less energy than full Zeus on one workload: {}. "
                "These are jobs where the removed mechanism's cost outweighs its benefit on "
                "these traces: without early stopping nothing is cut, so a batch size that "
                "converges late but cheaply is not lost to the β cap; without pruning every "
                "batch size is an arm from the start, which costs little when there are few; "
                "and one limit per recurrence avoids the profiling epoch, which matters when "
                "the maximum limit is already the best.",
                fmt::join(n.below, "; "));
  s.markdown = fmt::format(
      "## Figure 13 — {}\n\n"
      "Full Zeus against three variants of the same implementation, each with one mechanism "
      "switched off by an option: no early stopping (β = ∞), no pruning (every batch size is a "
      "bandit arm from the start), and no just-in-time profiling (each new batch size tries one "
      "power limit per recurrence, highest first, instead of profiling all limits in its first "
      "epoch). Cumulative energy and time over all 2·|B|·|P| recurrences, each seed against "
      "full Zeus on the same seed (> 1: the mechanism helps).\n\n{}{}\n{}\n\n"
      "On the geometric mean over the six workloads, {}.\n\n"
      "**Against the paper.** Its text gives no numbers for this figure; the claim to compare is "
      "that each mechanism contributes (every bar of the geometric mean above 1), checked by "
      "`PaperFigures.AblationsNeverBeatFullZeusOnTheGeometricMean`.\n\n",
      paper_figure_info(PaperFigure::kAblation).title,
      md_figure("fig13-ablation", "Figure 13: ablation", {"fig13-ablation.csv", "fig13-bars.csv"}),
      md_table(
          {"workload (V100)", "no early stopping (ETA / TTA)", "no pruning", "no JIT profiling"},
          n.table),
      where,
      geo_beats ? "an ablated variant beats full Zeus on energy (see above)"
                : "every ablated variant uses more energy than full Zeus");
  return s;
}

}  // namespace zeus::sim::paper
