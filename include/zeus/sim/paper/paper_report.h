// The reproduction report of the paper's figures: report.md with the
// paper's numbers beside ours, the CSV behind every figure (csv/), and a
// gnuplot script per figure (figures/) that draws a PNG and an SVG from those
// CSVs. Formatting is pure; write_paper_report writes files and runs gnuplot.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/sim/paper/paper.h"

namespace zeus::sim::paper {

struct PaperReportOptions {
  std::string command_line;  // shown in the report (how it was made)
  std::string traces_note;   // where the traces came from, for the report
};

// Every file of the report, by path relative to the report directory.
struct PaperFiles {
  std::vector<std::pair<std::string, std::string>> files;  // path, contents
  std::vector<std::string> scripts;  // the gnuplot scripts among them, run from the directory
  // The images the scripts draw (png and svg), relative paths.
  std::vector<std::string> images;
  const std::string* find(std::string_view path) const;
};
PaperFiles format_paper_report(const PaperData& data, const PaperReportOptions& options);

// The files write_paper_report may write into a directory (for pre-flight checks).
std::vector<std::string> paper_report_entries();  // "report.md", "csv", "figures"

// Writes the files into `dir` (created if missing; existing report files are
// replaced atomically one by one), then runs the scripts with gnuplot from
// `dir`, at most `threads` at once (<= 0: one per core). progress("plots",
// done, total) is serialized. Returns the written paths. kNotFound when
// gnuplot is missing (the CSVs and report.md are written first), kIo when
// it fails.
std::vector<std::string> write_paper_report(const std::string& dir, const PaperFiles& files,
                                            int threads = 0, const PaperProgress& progress = {});

}  // namespace zeus::sim::paper
