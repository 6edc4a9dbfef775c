// Internal to the paper report: one Section per reproduced figure (markdown,
// CSVs, gnuplot scripts) and the small formatting helpers they share.
#pragma once

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/sim/paper/paper.h"
#include "zeus/sim/paper/paper_report.h"

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
// Panels on a rows x cols grid under a title, none with a key of its own,
// and one key for all of them in a band along the bottom. gnuplot's
// `multiplot layout` leaves no room for such a key, so each panel is placed
// by origin and size. `height_px` is the image's height; `key_rows` the
// lines the shared key may take.
struct PanelGrid {
  int rows = 1, cols = 1;
  int height_px = 480;
  int key_rows = 1;
  std::string begin(const std::string& title) const;  // starts the multiplot
  std::string panel(int index) const;                 // row-major position of a panel
  // The shared key: one invisible plot over the bottom band whose key shows
  // `entries`, each a plot element for the '+' pseudo-file such as
  // "(NaN):(NaN) with lines lw 2 lc rgb '#2b8cbe' title 'Zeus'". Ends the
  // figure's state (tics, border, logscale are unset).
  std::string key(const std::vector<std::string>& entries) const;
};
// Key entries for PanelGrid::key: a filled box (histogram bars), a line.
std::string box_entry(std::string_view colour, const std::string& title);
std::string line_entry(const std::string& style, const std::string& title);
// A dashed reference line at y = 1 across the whole panel (not a sampled
// function, which stops short of the axes where offsets widen them);
// `unset arrow` removes it.
inline constexpr std::string_view kUnitLine =
    "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'\n";

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
std::string_view strategy_colour(const Strategy& k);
std::string strategy_label(const Strategy& k);  // "Zeus", "Grid Search", ...

}  // namespace zeus::sim::paper
