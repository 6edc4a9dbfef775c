// Presenting an EmulationReport: the table, the JSON, the figure.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "util/gnuplot.h"
#include "zeus/optimizer/pipeline_frequency/emulation/emulation.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {

std::vector<EmulationCheck> check_emulation(const EmulationReport& r, Seconds unit_time,
                                            double tolerance) {
  std::vector<EmulationCheck> out;
  bool followed = true, restored = true;
  for (const auto& s : r.scenarios) {
    followed = followed && s.followed_schedule;
    restored = restored && s.clocks_restored;
  }
  out.push_back({"every computation ran at the frequency its schedule set", followed});
  out.push_back({"every GPU's clocks were unlocked when its optimizer ended", restored});
  const Seconds slack = unit_time * static_cast<double>(2 * (r.microbatches + r.num_stages - 1));
  for (std::size_t i = 0; i < r.scenarios.size(); ++i) {
    const auto& s = r.scenarios[i];
    if (r.baseline(i) == i) continue;
    const double diff = r.measured_saving(i) - r.predicted_saving(i);
    out.push_back({fmt::format("{}: measured saving {:.2f}% is within {:.1f} points of the "
                               "predicted {:.2f}% ({:+.2f})",
                               s.name, 100.0 * r.measured_saving(i), 100.0 * tolerance,
                               100.0 * r.predicted_saving(i), 100.0 * diff),
                   std::abs(diff) <= tolerance});
    if (!s.straggler) {
      out.push_back(
          {fmt::format("{}: measured time {:.4f} s is within the plan's {:.4f} s + "
                       "quantization {:.3f} s",
                       s.name, s.measured_time.count(), s.planned_time.count(), slack.count()),
           s.measured_time <= s.planned_time + slack});
    } else {
      out.push_back({fmt::format("{}: the iteration ends by the straggler's T' {:.4f} s "
                                 "(measured {:.4f} s)",
                                 s.name, r.t_prime.count(), s.measured_time.count()),
                     s.measured_time <= r.t_prime * (1.0 + 1e-12)});
    }
  }
  if (r.t_prime.count() > 0 && r.scenarios.size() >= 6) {
    const std::size_t star = 2, waiting = 4, reactive = 5;
    out.push_back(
        {fmt::format("with the straggler, StragglerAware saves more ({:.2f}%) than T* without "
                     "one ({:.2f}%) and than T* waiting ({:.2f}%)",
                     100.0 * r.measured_saving(reactive), 100.0 * r.measured_saving(star),
                     100.0 * r.measured_saving(waiting)),
         r.measured_saving(reactive) > r.measured_saving(star) &&
             r.measured_saving(reactive) > r.measured_saving(waiting)});
  }
  return out;
}

std::string emulation_table(const EmulationReport& r) {
  std::string out = fmt::format(
      "Perseus closed loop: {} stages x {} microbatches; frontier T_min {:.4f} s, T* {:.4f} s",
      r.num_stages, r.microbatches, r.t_min.count(), r.t_star.count());
  if (r.t_prime.count() > 0) out += fmt::format(", straggler T' {:.4f} s", r.t_prime.count());
  out += "\n";
  out += fmt::format("{:<52} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9}\n", "scenario", "plan s",
                     "measured", "predict J", "measured", "saving", "measured");
  out += fmt::format("{:<52} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9}\n", "", "", "s", "", "J",
                     "predicted", "saving");
  for (std::size_t i = 0; i < r.scenarios.size(); ++i) {
    const auto& s = r.scenarios[i];
    const bool base = r.baseline(i) == i;
    out += fmt::format("{:<52} {:>9.4f} {:>9.4f} {:>10.1f} {:>10.1f} {:>9} {:>9}{}\n", s.name,
                       s.planned_time.count(), s.measured_time.count(), s.predicted_energy.value(),
                       s.measured_energy.value(),
                       base ? "-" : fmt::format("{:.2f}%", 100.0 * r.predicted_saving(i)),
                       base ? "-" : fmt::format("{:.2f}%", 100.0 * r.measured_saving(i)),
                       s.followed_schedule ? "" : "  (frequencies differ from the schedule!)");
  }
  return out;
}

std::string emulation_json(const EmulationReport& r) {
  nlohmann::json j;
  j["num_stages"] = r.num_stages;
  j["microbatches"] = r.microbatches;
  j["t_min_s"] = r.t_min.count();
  j["t_star_s"] = r.t_star.count();
  j["t_prime_s"] = r.t_prime.count();
  j["solution_dir"] = r.solution_dir;
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < r.scenarios.size(); ++i) {
    const auto& s = r.scenarios[i];
    nlohmann::json times = nlohmann::json::array(), energies = nlohmann::json::array();
    for (const auto t : s.iteration_times) times.push_back(t.count());
    for (const auto e : s.iteration_energies) energies.push_back(e.value());
    rows.push_back({{"name", s.name},
                    {"straggler", s.straggler},
                    {"planned_time_s", s.planned_time.count()},
                    {"predicted_energy_j", s.predicted_energy.value()},
                    {"measured_time_s", s.measured_time.count()},
                    {"measured_energy_j", s.measured_energy.value()},
                    {"predicted_saving", r.predicted_saving(i)},
                    {"measured_saving", r.measured_saving(i)},
                    {"iteration_times_s", times},
                    {"iteration_energies_j", energies},
                    {"followed_schedule", s.followed_schedule},
                    {"clocks_restored", s.clocks_restored}});
  }
  j["scenarios"] = std::move(rows);
  return j.dump(1) + "\n";
}

namespace {

std::string plot_script(const EmulationReport& r, const std::string& image,
                        const std::string& terminal) {
  // noenhanced: labels such as "T_min" are printed as written.
  std::string s = fmt::format(
      "set terminal {}\nset termoption noenhanced\nset output '{}'\nset datafile separator ','\n",
      terminal, image);
  s += fmt::format("set title 'Perseus closed loop: {} stages x {} microbatches (emulated GPUs)'\n",
                   r.num_stages, r.microbatches);
  s += "set xlabel 'iteration time (s)'\nset ylabel 'energy per iteration (J)'\n";
  s += "set grid\nset key top center\nset offsets graph 0.02, graph 0.25, graph 0.05, graph 0.05\n";
  s += fmt::format(
      "plot '{}/frontier.csv' skip 1 using 1:2 with lines lw 2 lc rgb '#1f77b4' title "
      "'frontier (predicted)', \\\n"
      "  '-' using 1:2 with points pt 6 ps 2.2 lc rgb '#7f7f7f' title 'predicted', \\\n"
      "  '-' using 1:2 with points pt 7 ps 1.2 lc rgb '#d62728' title 'measured (no straggler)', "
      "\\\n"
      "  '-' using 1:2 with points pt 5 ps 1.2 lc rgb '#ff7f0e' title 'measured (straggler at "
      "T'')', \\\n"
      "  '-' using 1:2:3 with labels offset 1,0.8 left font ',9' notitle\n",
      r.solution_dir);
  for (const auto& x : r.scenarios) {
    s += fmt::format("{},{}\n", x.planned_time.count(), x.predicted_energy.value());
  }
  s += "e\n";
  for (const bool straggler : {false, true}) {
    bool any = false;
    for (const auto& x : r.scenarios) {
      if (x.straggler != straggler) continue;
      s += fmt::format("{},{}\n", x.measured_time.count(), x.measured_energy.value());
      any = true;
    }
    if (!any) s += "NaN,NaN\n";
    s += "e\n";
  }
  for (std::size_t i = 0; i < r.scenarios.size(); ++i) {
    const auto& x = r.scenarios[i];
    std::string label = x.name.substr(0, x.name.find(':'));
    for (char& c : label) {
      if (c == ',' || c == '\'' || c == '"') c = ' ';
    }
    s += fmt::format("{},{},{}\n", x.measured_time.count(), x.measured_energy.value(), label);
  }
  s += "e\n";
  return s;
}

}  // namespace

void render_emulation_plot(const EmulationReport& r, const std::string& dir) {
  const std::string terminal =
      gnuplot_has_terminal("pngcairo") ? "pngcairo size 1100,700" : "png size 1100,700";
  write_file_atomically(dir + "/emulation_png.gp",
                        plot_script(r, dir + "/emulation.png", terminal));
  write_file_atomically(dir + "/emulation_svg.gp",
                        plot_script(r, dir + "/emulation.svg", "svg size 1100,700"));
  run_gnuplot(dir + "/emulation_png.gp");
  run_gnuplot(dir + "/emulation_svg.gp");
}

}  // namespace zeus::pipeline_frequency
