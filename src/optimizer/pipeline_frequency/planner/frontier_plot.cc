#include "optimizer/pipeline_frequency/planner/frontier_plot.h"

#include <fmt/format.h>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "util/gnuplot.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {

std::string frontier_plot_script(const PerseusSolution& solution, const std::string& csv_path,
                                 const std::string& image_path, const std::string& terminal) {
  const auto& pts = solution.points();
  const auto& star = pts[select_min_energy(pts)];
  const auto all_max = solution.all_max_frequency_point();
  const auto& fastest = pts[select_fastest(pts)];
  std::string s;
  s += fmt::format("set terminal {}\nset output '{}'\n", terminal, image_path);
  s += "set datafile separator ','\n";
  s += fmt::format("set title 'Perseus iteration time vs energy ({} stages x {} microbatches)'\n",
                   solution.dag().num_stages, solution.dag().num_microbatches);
  s += "set xlabel 'iteration time (s)'\nset ylabel 'energy per iteration (J)'\n";
  s += "set grid\nset key top right\n";
  s += fmt::format(
      "plot '{}' skip 1 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'Perseus frontier', \\\n"
      "  '-' using 1:2 with points pt 7 ps 1.6 lc rgb '#d62728' title 'all max frequency', \\\n"
      "  '-' using 1:2 with points pt 5 ps 1.3 lc rgb '#2ca02c' title 'fastest plan (T_{{min}})', "
      "\\\n"
      "  '-' using 1:2 with points pt 9 ps 1.6 lc rgb '#ff7f0e' title 'minimum energy (T*)'\n",
      csv_path);
  s += fmt::format("{},{}\ne\n", all_max.time.count(), all_max.energy.value());
  s += fmt::format("{},{}\ne\n", fastest.time.count(), fastest.energy.value());
  s += fmt::format("{},{}\ne\n", star.time.count(), star.energy.value());
  return s;
}

void render_frontier_plots(const PerseusSolution& solution, const std::string& dir) {
  const std::string terminal =
      gnuplot_has_terminal("pngcairo") ? "pngcairo size 1000,650" : "png size 1000,650";
  const std::string csv = dir + "/frontier.csv";
  const std::string png_script = dir + "/frontier_png.gp";
  const std::string svg_script = dir + "/frontier_svg.gp";
  write_file_atomically(png_script,
                        frontier_plot_script(solution, csv, dir + "/frontier.png", terminal));
  write_file_atomically(
      svg_script, frontier_plot_script(solution, csv, dir + "/frontier.svg", "svg size 1000,650"));
  run_gnuplot(png_script);
  run_gnuplot(svg_script);
}

}  // namespace zeus::pipeline_frequency
