// gnuplot figures of a sweep: Figure 6 (ETA/TTA over Default), Figure 7
// (cumulative regret over recurrences), Figure 8 (Zeus's search path).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/gnuplot.h"
#include "zeus/sim/report.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::sim {

namespace {

std::vector<std::string> ordered_unique(const std::vector<SweepRow>& rows,
                                        std::string SweepRow::*field) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    if (std::find(out.begin(), out.end(), r.*field) == out.end()) out.push_back(r.*field);
  }
  return out;
}

// Emits `body` once per terminal (PNG then SVG) with the given output stem.
std::string both_terminals(const std::string& stem, const std::string& size,
                           const std::string& body, std::vector<std::string>& files) {
  files.push_back(stem + ".png");
  files.push_back(stem + ".svg");
  return fmt::format(
      "set terminal pngcairo noenhanced size {0} font 'sans,10'\nset output '{1}.png'\n{2}\nunset "
      "multiplot\n"
      "set terminal svg noenhanced size {0} font 'sans,10'\nset output '{1}.svg'\n{2}\nunset "
      "multiplot\n"
      "set output\n",
      size, stem, body);
}

// Figure 6: per GPU, mean over seeds of ETA and TTA normalized to Default.
std::string figure6(const std::string& dir, const std::vector<SweepRow>& rows, double eta,
                    const std::string& gpu, std::vector<std::string>& files) {
  std::map<std::string, std::map<Strategy, std::pair<double, int>>> eta_m, tta_m;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    if (r.gpu != gpu || r.eta != eta) continue;
    if (!eta_m.count(r.workload)) order.push_back(r.workload);
    auto& e = eta_m[r.workload][r.strategy];
    e.first += r.summary.eta_norm;
    ++e.second;
    auto& t = tta_m[r.workload][r.strategy];
    t.first += r.summary.tta_norm;
    ++t.second;
  }
  auto mean = [](const auto& m, Strategy k) {
    const auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second.first / it->second.second;
  };
  std::string data = "# workload zeus_eta grid_eta zeus_tta grid_tta\n";
  for (const auto& w : order) {
    data += fmt::format("\"{}\" {} {} {} {}\n", w.substr(0, w.find('/')),
                        mean(eta_m[w], Strategy::kZeus), mean(eta_m[w], Strategy::kGrid),
                        mean(tta_m[w], Strategy::kZeus), mean(tta_m[w], Strategy::kGrid));
  }
  const std::string dat = fmt::format("{}/sim-fig6-{}.dat", dir, gpu);
  write_file_atomically(dat, data);
  const std::string body = fmt::format(
      "set multiplot layout 1,2 title 'Figure 6 style: {0}, eta={1} (last 5 recurrences / "
      "Default)'\n"
      "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 "
      "border -1\nset boxwidth 0.9\nset yrange [0:1.3]\nset xtics rotate by -30\n"
      "set key top left\n"
      "set title 'Energy to accuracy'\nplot '{2}' using 2:xtic(1) title 'Zeus' lc rgb '#2b8cbe', "
      "'' using 3 title 'Grid Search' lc rgb '#fdae6b', 1 with lines dt 2 lc rgb 'black' title "
      "'Default'\n"
      "set title 'Time to accuracy'\nplot '{2}' using 4:xtic(1) title 'Zeus' lc rgb '#2b8cbe', "
      "'' using 5 title 'Grid Search' lc rgb '#fdae6b', 1 with lines dt 2 lc rgb 'black' title "
      "'Default'\n",
      gpu, eta, dat);
  return both_terminals(fmt::format("{}/sim-fig6-{}", dir, gpu), "1100,450", body, files);
}

// Figure 7's data for one workload: cumulative regret of Zeus and Grid Search
// per recurrence, mean over seeds; empty when neither ran it.
std::string cumulative_regret_data(const std::vector<SweepRow>& rows, const std::string& gpu,
                                   const std::string& w, double eta) {
  std::map<Strategy, std::vector<double>> sum;
  std::map<Strategy, int> n;
  for (const auto& r : rows) {
    if (r.gpu != gpu || r.workload != w || r.eta != eta || !r.result) continue;
    if (r.strategy != Strategy::kZeus && r.strategy != Strategy::kGrid) continue;
    auto& v = sum[r.strategy];
    v.resize(r.result->recurrences.size(), 0.0);
    double cum = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const bool drifted = r.drift_at >= 0 && static_cast<int>(i) >= r.drift_at;
      cum +=
          (r.result->recurrences[i].cost - (drifted ? r.reference.opt_cost : r.initial_opt_cost)) /
          r.reference.opt_cost;
      v[i] += cum;
    }
    ++n[r.strategy];
  }
  if (sum.empty()) return {};
  std::string data = "# recurrence zeus grid\n";
  const std::size_t len = std::max(sum[Strategy::kZeus].size(), sum[Strategy::kGrid].size());
  for (std::size_t i = 0; i < len; ++i) {
    auto val = [&](Strategy k) {
      const auto& v = sum[k];
      return i < v.size() && n[k] ? fmt::format("{}", v[i] / n[k]) : std::string("NaN");
    };
    data += fmt::format("{} {} {}\n", i + 1, val(Strategy::kZeus), val(Strategy::kGrid));
  }
  return data;
}

// Figure 7: cumulative regret (in optimal recurrences) over recurrences,
// mean over seeds, for the first GPU.
std::string figure7(const std::string& dir, const std::vector<SweepRow>& rows, double eta,
                    std::vector<std::string>& files) {
  const std::string gpu = rows.front().gpu;
  const auto workloads = ordered_unique(rows, &SweepRow::workload);
  std::string plots;
  for (const auto& w : workloads) {
    const std::string data = cumulative_regret_data(rows, gpu, w, eta);
    if (data.empty()) continue;
    std::string safe = w;
    std::replace(safe.begin(), safe.end(), '/', '_');
    const std::string dat = fmt::format("{}/sim-fig7-{}-{}.dat", dir, gpu, safe);
    write_file_atomically(dat, data);
    plots += fmt::format(
        "set title '{}'\nplot '{}' using 1:2 with lines lw 2 lc rgb '#2b8cbe' title 'Zeus', '' "
        "using 1:3 with lines lw 2 lc rgb '#e6550d' title 'Grid Search'\n",
        w, dat);
  }
  const int cols = 3, nrows = static_cast<int>((workloads.size() + 2) / 3);
  const std::string body = fmt::format(
      "set multiplot layout {},{} title 'Figure 7 style: cumulative regret on {} (in optimal "
      "recurrences, mean over seeds)'\nset key top left\nset xlabel 'recurrence'\nset ylabel "
      "'regret / C*'\nset yrange [*:*]\nset xtics norotate\n{}",
      nrows, cols, gpu, plots);
  return both_terminals(fmt::format("{}/sim-fig7-{}", dir, gpu),
                        fmt::format("1200,{}", 380 * nrows), body, files);
}

// Figure 8: Zeus's search path (every run) of one job; empty when Zeus has
// no recorded run.
std::string figure8(const std::string& dir, const std::vector<SweepRow>& rows,
                    std::vector<std::string>& files) {
  const SweepRow* pick = nullptr;
  for (const auto& r : rows) {
    if (r.strategy != Strategy::kZeus || !r.result) continue;
    if (!pick || (r.workload == "librispeech/deepspeech2" && pick->workload != r.workload)) {
      pick = &r;
    }
  }
  if (!pick) return {};
  std::string data = "# run batch_size power_limit_W reached\n";
  int k = 0;
  for (const auto& run : pick->result->runs) {
    data += fmt::format("{} {} {} {}\n", ++k, run.batch_size, to_watts(run.power_limit).value(),
                        run.reached ? 1 : 0);
  }
  const std::string dat = fmt::format("{}/sim-fig8-{}.dat", dir, pick->gpu);
  write_file_atomically(dat, data);
  const std::string fig8 = fmt::format(
      "set title 'Figure 8 style: Zeus search path, {} on {}, seed {} (optimum {}@{}W)'\n"
      "set xlabel 'batch size'\nset ylabel 'power limit (W)'\nset logscale x 2\n"
      "set cblabel 'run'\nset palette defined (0 '#fee8c8', 0.5 '#e34a33', 1 '#2b0000')\n"
      "set key bottom right\nset offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08\n"
      "plot '{}' using 2:3 with lines lc rgb '#bbbbbb' notitle, '' using 2:3:1 with points "
      "pt 7 ps 1.4 palette title 'run (colour = order)', '' using ($4==0?$2:1/0):3 with "
      "points pt 6 ps 2 lc rgb 'black' title 'did not reach target'\n",
      pick->workload, pick->gpu, pick->seed, pick->reference.opt_batch_size,
      to_watts(pick->reference.opt_power_limit).value(), dat);
  return both_terminals(fmt::format("{}/sim-fig8-{}", dir, pick->gpu), "900,550", fig8, files);
}

}  // namespace

std::vector<std::string> render_plots(const std::string& dir_in,
                                      const std::vector<SweepRow>& rows) {
  namespace fs = std::filesystem;
  fs::create_directories(dir_in);
  const std::string dir = fs::absolute(dir_in).string();
  if (rows.empty()) return {};
  const double eta = rows.front().eta;
  std::string script = "set encoding utf8\nset grid ytics\n";
  std::vector<std::string> files;

  for (const auto& gpu : ordered_unique(rows, &SweepRow::gpu)) {
    script += figure6(dir, rows, eta, gpu, files);
  }
  const bool have_traj =
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.result != nullptr; });
  if (have_traj) {
    script += figure7(dir, rows, eta, files);
    script += figure8(dir, rows, files);
  }
  const std::string gp = dir + "/plots.gp";
  write_file_atomically(gp, script);
  run_gnuplot(gp);
  return files;
}

}  // namespace zeus::sim
