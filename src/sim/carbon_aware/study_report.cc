// The files of `zeus simulate chase`: CSVs behind every number, report.md,
// and the gnuplot figures (Figure 1: the limit over the signal; Figure 2:
// cumulative carbon or cost; the carbon/cost-vs-time Pareto points).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "util/csv.h"
#include "util/gnuplot.h"
#include "util/iso8601.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/sim/carbon_aware/study.h"
#include "zeus/util/files.h"

namespace zeus::sim::carbon_aware {
namespace {

bool is_carbon(const StudyResult& r) {
  return r.signal.kind() == zeus::carbon_aware::SignalKind::kCarbon;
}
// What the signal charges: grams of CO2, or money in the signal's currency.
std::string charge_word(const StudyResult& r) { return is_carbon(r) ? "emissions" : "cost"; }
std::string charge_unit(const StudyResult& r) {
  return is_carbon(r) ? "gCO2" : r.signal.unit().substr(0, r.signal.unit().find('/'));
}

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : ""; }
std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:+.2f} %", v) : "n/a"; }

std::string summary_csv(const SweepResult& s) {
  std::string out =
      "policy,starts,mean_time_s,mean_energy_j,mean_charge,time_change_pct,energy_change_pct,"
      "charge_change_pct,charge_change_sd,charge_change_p5,charge_change_p50,charge_change_p95,"
      "charge_change_starts,time_change_sd,time_change_p5,time_change_p50,time_change_p95,"
      "forecast_mape_pct\n";
  for (const auto& p : s.summary) {
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_escape(p.policy),
                    s.starts.size(), num(p.mean_time_s), num(p.mean_energy_j), num(p.mean_charge),
                    num(p.time_change_pct), num(p.energy_change_pct), num(p.charge_change_pct),
                    num(p.charge_change.sd), num(p.charge_change.p5), num(p.charge_change.p50),
                    num(p.charge_change.p95), p.charge_change.n, num(p.time_change.sd),
                    num(p.time_change.p5), num(p.time_change.p50), num(p.time_change.p95),
                    p.mean_forecast_mape ? num(*p.mean_forecast_mape) : "");
  }
  return out;
}

std::string starts_csv(const SweepResult& s, const std::string& charge) {
  std::string out = fmt::format("start_utc,policy,time_s,energy_j,{}\n", charge);
  for (std::size_t p = 0; p < s.policies.size(); ++p) {
    for (std::size_t i = 0; i < s.starts.size(); ++i) {
      const auto& r = s.results[p][i];
      out += fmt::format("{},{},{},{},{}\n", format_iso8601(s.starts[i]),
                         csv_escape(s.policies[p].spec), num(r.time.count()), num(r.energy.value()),
                         num(r.charge));
    }
  }
  return out;
}

std::string decisions_csv(const ReplayResult& r, const std::string& charge) {
  std::string out =
      fmt::format("start_utc,signal,forecast,eta_eff,power_limit_w,time_s,energy_j,{}\n", charge);
  for (const auto& p : r.periods) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{}\n", format_iso8601(p.decision.period_start_utc), num(p.signal),
        num(p.decision.forecast), num(p.decision.eta_eff),
        p.profiling ? "profiling" : num(static_cast<double>(p.decision.power_limit.value()) / 1e3),
        num(p.time.count()), num(p.energy.value()), num(p.charge));
  }
  return out;
}

std::string headline_md(const Headline& h) {
  const bool frontier_share = h.frontier_charge_pct && h.chase_charge_pct < 0;
  return fmt::format(
      "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", h.chase_policy, pct(h.chase_charge_pct),
      pct(h.chase_time_pct), h.static_policy, pct(h.static_charge_pct), pct(h.static_time_pct),
      h.frontier_charge_pct ? pct(*h.frontier_charge_pct) : "n/a",
      std::isfinite(h.share) ? fmt::format("{:.0f} %", 100.0 * h.share) : "n/a",
      frontier_share ? fmt::format("{:.0f} %", 100.0 * *h.frontier_charge_pct / h.chase_charge_pct)
                     : "n/a");
}

std::string sweep_md(const SweepResult& s) {
  std::string out =
      "| policy | mean time | time change | energy change | charge change (of means) | per-start "
      "charge change: mean ± sd [p5, p50, p95] | forecast MAPE |\n|---|---|---|---|---|---|---|\n";
  for (const auto& p : s.summary) {
    out += fmt::format(
        "| {} | {:.2f} h | {} | {} | {} | {:+.2f} ± {:.2f} [{:+.2f}, {:+.2f}, "
        "{:+.2f}] % (n={}) | {} |\n",
        p.policy, p.mean_time_s / 3600.0, pct(p.time_change_pct), pct(p.energy_change_pct),
        pct(p.charge_change_pct), p.charge_change.mean, p.charge_change.sd, p.charge_change.p5,
        p.charge_change.p50, p.charge_change.p95, p.charge_change.n,
        p.mean_forecast_mape ? fmt::format("{:.2f} %", *p.mean_forecast_mape) : "");
  }
  return out;
}

std::string report_md(const StudySpec& spec, const StudyResult& r) {
  const auto& sig = r.signal;
  std::string out = fmt::format(
      "# Chase simulation: {}\n\n"
      "* Job: {}, {:g} epochs ({}).\n"
      "* Signal: `{}` ({}, {}), {} samples of {} s from {} to {}.\n"
      "* Decision period: {} s; forecaster history and normaliser window: {} h{}.\n"
      "* Starts: {} (every {} s){}; skipped because the job would outlast the series: {}.\n"
      "* Profiling epoch charged: {}.\n"
      "* Charge: {} in {} (energy × the signal's value in each of its samples).\n\n",
      r.workload_label, r.workload_label, r.epochs,
      spec.replay.epochs > 0 ? "given" : "median epochs to target in the trace", spec.signal_path,
      zeus::carbon_aware::signal_kind_name(sig.kind()), sig.unit(), sig.size(), sig.resolution_s(),
      format_iso8601(sig.start_utc()), format_iso8601(sig.end_utc()),
      spec.replay.period_s > 0 ? spec.replay.period_s : sig.resolution_s(),
      static_cast<double>(spec.replay.history_s) / 3600.0,
      spec.replay.signal_max ? fmt::format(" (normaliser fixed at {:g})", *spec.replay.signal_max)
                             : "",
      r.main.starts.size(),
      spec.start_step_s > 0
          ? spec.start_step_s
          : (spec.replay.period_s > 0 ? spec.replay.period_s : sig.resolution_s()),
      spec.wrap ? " — the series is **wrapped** (treated as periodic) so every start has history "
                  "and every job finishes"
                : "",
      r.main.skipped_outlasting, spec.replay.charge_profiling ? "yes (non-max policies)" : "no",
      charge_word(r), charge_unit(r));
  out += "## Policies against the maximum limit (Normal Training)\n\n" + sweep_md(r.main) +
         "\n(summary.csv; every start in starts.csv)\n\n";
  const std::string head =
      "| Chase policy | charge change | time change | static cap at the same slowdown | its charge "
      "change | its time change | fixed-limit frontier at that time | share of Chase's saving "
      "the static cap gets | share the frontier gets |\n|---|---|---|---|---|---|---|---|---|\n";
  if (!r.headlines.empty()) {
    out += "## Carbon/price awareness against a static cap\n\n" + head;
    for (const auto& h : r.headlines) out += headline_md(h);
    out += "\n";
  }
  if (r.nearest && spec.target) {
    out += fmt::format(
        "## The eta nearest the target ({:+.1f} % charge at {:+.1f} % time)\n\n{}{}\n"
        "(all etas beside every fixed limit: pareto.csv, pareto.png)\n\n",
        spec.target->first, spec.target->second, head, headline_md(*r.nearest));
  }
  out += fmt::format(
      "## One start in detail: {}\n\ndecisions.csv (one row per period), fig1-limit-over-signal, "
      "fig2-cumulative.\n\n| policy | time | energy | {} |\n|---|---|---|---|\n",
      format_iso8601(r.single_start), charge_word(r));
  for (const auto& [name, res] : r.single) {
    out +=
        fmt::format("| {} | {:.2f} h | {:.4g} kWh | {:.6g} {} |\n", name, res.time.count() / 3600.0,
                    res.energy.value() / 3.6e6, res.charge, charge_unit(r));
  }
  return out;
}

std::string pareto_csv(const SweepResult& s) {
  std::string out = "policy,time_change_pct,charge_change_pct\n";
  for (const auto& p : s.summary) {
    out += fmt::format("{},{},{}\n", csv_escape(p.policy), num(p.time_change_pct),
                       num(p.charge_change_pct));
  }
  return out;
}

std::string terminals(const std::string& stem, const std::string& body,
                      std::vector<std::string>& files) {
  files.push_back(stem + ".png");
  files.push_back(stem + ".svg");
  return fmt::format(
      "set terminal pngcairo noenhanced size 1000,500 font 'sans,10'\nset output '{0}.png'\n{1}\n"
      "set terminal svg noenhanced size 1000,500 font 'sans,10'\nset output '{0}.svg'\n{1}\n"
      "set output\n",
      stem, body);
}

std::vector<std::string> plots(const std::string& dir, const StudyResult& r) {
  std::vector<std::string> files;
  std::string script = "set encoding utf8\nset grid\nset datafile separator ','\n";
  const std::string unit = is_carbon(r) ? "gCO2/kWh" : r.signal.unit();
  // Figure 1 and 2 data: per policy, elapsed hours, limit, signal, cumulative charge.
  std::string fig1 = "", fig2 = "";
  for (std::size_t i = 0; i < r.single.size(); ++i) {
    const auto& [name, res] = r.single[i];
    std::string data = "hours,limit_w,signal,cumulative\n";
    double t = 0, c = 0;
    for (const auto& p : res.periods) {
      const double limit =
          p.profiling ? NAN : static_cast<double>(p.decision.power_limit.value()) / 1e3;
      data += fmt::format("{},{},{},{}\n", t / 3600, num(limit), num(p.signal), c);
      t += p.time.count();
      c += p.charge;
      data += fmt::format("{},{},{},{}\n", t / 3600, num(limit), num(p.signal), c);
    }
    const std::string dat = fmt::format("{}/single-{}.csv", dir, i);
    write_file_atomically(dat, data);
    files.push_back(dat);
    fig1 += fmt::format("{}'{}' using 1:2 with lines lw 2 title '{}'", fig1.empty() ? "" : ", ",
                        dat, name);
    fig2 += fmt::format("{}'{}' using 1:4 with lines lw 2 title '{}'", fig2.empty() ? "" : ", ",
                        dat, name);
  }
  if (!r.single.empty()) {
    const std::string sig = fmt::format("{}/single-0.csv", dir);
    script += terminals(
        dir + "/fig1-limit-over-signal",
        fmt::format(
            "set title 'Figure 1 style: power limit over the signal, start {}'\n"
            "set xlabel 'hours since start'\nset ylabel 'power limit (W)'\n"
            "set y2label 'signal ({})'\nset y2tics\nset key outside bottom center horizontal\n"
            "plot {}, '{}' using 1:3 axes x1y2 with lines dt 2 lc rgb 'gray40' title "
            "'signal'\nunset y2tics\nunset y2label\n",
            format_iso8601(r.single_start), unit, fig1, sig),
        files);
    script +=
        terminals(dir + "/fig2-cumulative",
                  fmt::format("set title 'Figure 2 style: cumulative {} over time, start {}'\n"
                              "set xlabel 'hours since start'\nset ylabel '{} ({})'\n"
                              "set key top left\nplot {}\n",
                              charge_word(r), format_iso8601(r.single_start), charge_word(r),
                              charge_unit(r), fig2),
                  files);
  }
  const SweepResult& par = r.pareto.summary.empty() ? r.main : r.pareto;
  std::string fixed = "time,charge,label\n", chase = "time,charge,label\n";
  double xmax = 8.0;  // the region Chase moves in, not the slowest limits' +200 %
  for (std::size_t i = 0; i < par.summary.size(); ++i) {
    const auto& s = par.summary[i];
    const bool is_chase = par.policies[i].kind == Policy::Kind::kChase;
    auto& into = is_chase ? chase : fixed;
    into += fmt::format("{},{},{}\n", s.time_change_pct, s.charge_change_pct, s.policy);
    if (is_chase) xmax = std::max(xmax, 1.5 * s.time_change_pct);
  }
  write_file_atomically(dir + "/pareto-static.csv", fixed);
  write_file_atomically(dir + "/pareto-chase.csv", chase);
  files.push_back(dir + "/pareto-static.csv");
  files.push_back(dir + "/pareto-chase.csv");
  script += terminals(
      dir + "/pareto",
      fmt::format("set title '{} change vs time change against the maximum limit (mean over "
                  "starts)'\nset xlabel 'time change (%)'\nset ylabel '{} change (%)'\n"
                  "set xrange [-0.5:{:.1f}]\nset key top right\nplot '{}/pareto-static.csv' using "
                  "1:2 every ::1 with "
                  "linespoints pt 7 title 'static limits', '' using 1:2:3 every ::1 with labels "
                  "offset 1,0.5 font ',8' notitle, '{}/pareto-chase.csv' using 1:2 every ::1 with "
                  "linespoints pt 5 title 'Chase across eta'\n",
                  charge_word(r), charge_word(r), xmax, dir, dir),
      files);
  const std::string path = dir + "/plots.gp";
  write_file_atomically(path, script);
  run_gnuplot(path);
  return files;
}

}  // namespace

std::vector<std::string> write_study(const std::string& dir_in, const StudySpec& spec,
                                     const StudyResult& r, bool with_plots) {
  namespace fs = std::filesystem;
  fs::create_directories(dir_in);
  const std::string dir = fs::absolute(dir_in).string();
  std::vector<std::string> files;
  const auto put = [&](const std::string& name, const std::string& text) {
    write_file_atomically(dir + "/" + name, text);
    files.push_back(dir + "/" + name);
  };
  put("summary.csv", summary_csv(r.main));
  put("starts.csv", starts_csv(r.main, charge_word(r)));
  if (!r.pareto.summary.empty()) put("pareto.csv", pareto_csv(r.pareto));
  std::string heads =
      "chase_policy,chase_charge_pct,chase_time_pct,static_policy,"
      "static_charge_pct,static_time_pct,frontier_charge_pct,share\n";
  auto add = [&](const Headline& h) {
    heads += fmt::format("{},{},{},{},{},{},{},{}\n", csv_escape(h.chase_policy),
                         num(h.chase_charge_pct), num(h.chase_time_pct), h.static_policy,
                         num(h.static_charge_pct), num(h.static_time_pct),
                         h.frontier_charge_pct ? num(*h.frontier_charge_pct) : "", num(h.share));
  };
  for (const auto& h : r.headlines) add(h);
  if (r.nearest) add(*r.nearest);
  put("headline.csv", heads);
  const auto chase_it = std::find_if(r.single.begin(), r.single.end(),
                                     [](const auto& x) { return x.first.rfind("chase", 0) == 0; });
  put("decisions.csv",
      decisions_csv((chase_it == r.single.end() ? r.single.front() : *chase_it).second,
                    charge_word(r)));
  put("report.md", report_md(spec, r));
  if (with_plots) {
    for (auto& f : plots(dir, r)) files.push_back(f);
  }
  return files;
}

std::string study_table(const StudyResult& r) {
  std::string out = fmt::format("{} starts, {} over the maximum limit (mean over starts)\n",
                                r.main.starts.size(), charge_word(r));
  out += fmt::format("{:<34} {:>10} {:>12} {:>12}\n", "policy", "time", "energy", charge_word(r));
  for (const auto& p : r.main.summary) {
    out += fmt::format("{:<34} {:>+9.2f}% {:>+11.2f}% {:>+11.2f}%\n", p.policy, p.time_change_pct,
                       p.energy_change_pct, p.charge_change_pct);
  }
  for (const auto& h : r.headlines) {
    out += fmt::format("{}: a static cap at the same slowdown ({}) gets {} of its saving\n",
                       h.chase_policy, h.static_policy,
                       std::isfinite(h.share) ? fmt::format("{:.0f} %", 100 * h.share) : "n/a");
  }
  return out;
}

}  // namespace zeus::sim::carbon_aware
