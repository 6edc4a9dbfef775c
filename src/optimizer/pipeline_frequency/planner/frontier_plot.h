// Figures of a solved pipeline: the frontier with the all-max-frequency
// point, the fastest plan and T* marked, drawn by gnuplot.
#pragma once

#include <string>

#include "zeus/optimizer/pipeline_frequency/planner/planner.h"

namespace zeus::pipeline_frequency {

// A gnuplot script drawing frontier.csv; `terminal` is a gnuplot terminal
// line such as "pngcairo size 1000,650".
std::string frontier_plot_script(const PerseusSolution& solution, const std::string& csv_path,
                                 const std::string& image_path, const std::string& terminal);

// Draws DIR/frontier.png and DIR/frontier.svg from DIR/frontier.csv with
// gnuplot (the scripts stay in DIR). kNotFound when gnuplot is missing.
void render_frontier_plots(const PerseusSolution& solution, const std::string& dir);

}  // namespace zeus::pipeline_frequency
