// Output of a sweep: CSV rows, JSON, the Figure 6 table, per-recurrence
// trajectories, and gnuplot figures. Pure formatting except write_* and
// render_plots, which write files (and run gnuplot).
#pragma once

#include <string>
#include <vector>

#include "zeus/sim/sweep.h"

namespace zeus::sim {

// One row per (gpu, workload, eta, beta, seed, strategy); see docs/simulator.md.
std::string format_csv(const std::vector<SweepRow>& rows);
std::string format_json(const std::vector<SweepRow>& rows);
// Per GPU and eta: ETA and TTA of Zeus and Grid Search over Default (mean over
// seeds), and Grid Search's cumulative regret over Zeus's (ratio of means).
std::string format_table(const std::vector<SweepRow>& rows);
// Per recurrence of every kept result.
std::string format_trajectory_csv(const std::vector<SweepRow>& rows);

// Writes DIR/results.csv, DIR/trajectory.csv and DIR/summary.txt.
void write_outputs(const std::string& dir, const std::vector<SweepRow>& rows);
// Figure 6/7/8-style plots (PNG and SVG) into DIR via gnuplot. Returns the
// files written; kNotFound if gnuplot is not installed, kIo if it fails.
std::vector<std::string> render_plots(const std::string& dir, const std::vector<SweepRow>& rows);

}  // namespace zeus::sim
