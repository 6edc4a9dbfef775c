// Running gnuplot (the plotting tool every figure of the project uses).
#pragma once

#include <string>

namespace zeus {

// Whether gnuplot is on PATH and can draw with `terminal` (e.g. "pngcairo").
bool gnuplot_has_terminal(const std::string& terminal);

// Runs `gnuplot script_path`. kNotFound naming the package when gnuplot is not
// installed; kIo when it fails (its messages go to stderr).
void run_gnuplot(const std::string& script_path);

}  // namespace zeus
