// Internal to the paper report: one Section per reproduced figure (markdown,
// CSVs, gnuplot scripts) and the small formatting helpers they share.
#pragma once

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/sim/paper.h"
#include "zeus/sim/paper_report.h"

namespace zeus::sim::paper {

// One reproduced figure's share of the report.
struct Section {
  std::string markdown;                                   // starts with its "## Figure ..." heading
  std::vector<std::pair<std::string, std::string>> csvs;  // csv/<name>, contents
  std::vector<std::pair<std::string, std::string>> scripts;  // figures/<stem>.gp, contents
};

Section opportunity_section(const PaperData& d);
Section pareto_section(const PaperData& d);
Section eta_per_knob_section(const PaperData& d);
Section baselines_section(const PaperData& d);
Section drift_section(const PaperData& d);
Section eta_sweep_section(const PaperData& d);
Section beta_section(const PaperData& d);
Section ablation_section(const PaperData& d);
Section gpu_generations_section(const PaperData& d);
Section improvement_section(const PaperData& d);

// ---- formatting helpers ----

// A number for CSV cells: shortest round-trip-ish form with 6 significant digits.
std::string num(double v);
// A number for prose and tables with `digits` decimals.
std::string fixed(double v, int digits);
// "0.61 ± 0.03" (mean ± sample sd over seeds).
std::string pm(const Spread& s, int digits);
// A percentage saving 1 - x with one decimal: "38.9%".
std::string saving(double normalized);

class Csv {
 public:
  explicit Csv(std::initializer_list<std::string_view> header);
  void row(const std::vector<std::string>& cells);
  const std::string& text() const { return text_; }
  std::size_t rows() const { return rows_; }

 private:
  std::size_t columns_;
  std::size_t rows_ = 0;
  std::string text_;
};

// A markdown table.
std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows);

// The short label of a workload ("librispeech/deepspeech2" -> "librispeech").
std::string short_name(const std::string& workload);
// GPUs in generation order (Pascal, Volta, Turing, Ampere) with names.
const std::vector<std::pair<std::string, std::string>>& gpu_generations();
std::string gpu_label(const std::string& gpu);  // "V100 (Volta)"
std::string watts_text(Milliwatts mw);          // "150"

// A gnuplot script drawing `body` into figures/<stem>.png and .svg. `body`
// reads csv/... relative to the report directory; `width`x`height` pixels.
std::string gnuplot_script(const std::string& stem, int width, int height, const std::string& body);
// Markdown that shows figures/<stem>.png and links the SVG and the CSVs.
std::string md_figure(const std::string& stem, const std::string& alt,
                      const std::vector<std::string>& csvs);

// Colours shared by every plot.
inline constexpr std::string_view kZeusColour = "#2b8cbe";
inline constexpr std::string_view kGridColour = "#e6550d";
inline constexpr std::string_view kGridNoEsColour = "#fdae6b";
inline constexpr std::string_view kGridDirColour = "#31a354";
inline constexpr std::string_view kGridDirNoEsColour = "#a1d99b";
inline constexpr std::string_view kDefaultColour = "#636363";
std::string_view strategy_colour(Strategy k);
std::string strategy_label(Strategy k);  // "Zeus", "Grid Search", ...

}  // namespace zeus::sim::paper
