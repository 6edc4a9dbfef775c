// Assembles the report (header, one section per figure, what is left out)
// and writes it: files first, then the gnuplot scripts, several at a time.
#include "zeus/sim/paper/paper_report.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "paper_sections.h"
#include "util/gnuplot.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::sim::paper {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  return fmt::format("{:.6g}", v);
}

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

std::string pm(const Spread& s, int digits) {
  return fmt::format("{:.{}f} ± {:.{}f}", s.mean, digits, s.sd, digits);
}

std::string saving(double normalized) { return fmt::format("{:.1f}%", 100.0 * (1.0 - normalized)); }

Csv::Csv(std::initializer_list<std::string_view> header) : columns_(header.size()) {
  text_ = fmt::format("{}\n", fmt::join(header, ","));
}

void Csv::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) {
    throw_error(ErrorCode::kInternal,
                fmt::format("CSV row has {} cells, header {}", cells.size(), columns_));
  }
  text_ += fmt::format("{}\n", fmt::join(cells, ","));
  ++rows_;
}

std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  std::string out = fmt::format("| {} |\n|", fmt::join(header, " | "));
  for (std::size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows) out += fmt::format("| {} |\n", fmt::join(r, " | "));
  return out;
}

std::string short_name(const std::string& workload) {
  return workload.substr(0, workload.find('/'));
}

const std::vector<std::pair<std::string, std::string>>& gpu_generations() {
  static const std::vector<std::pair<std::string, std::string>> gens = {
      {"p100", "P100 (Pascal)"},
      {"v100", "V100 (Volta)"},
      {"rtx6000", "RTX 6000 (Turing)"},
      {"a40", "A40 (Ampere)"}};
  return gens;
}

std::string gpu_label(const std::string& gpu) {
  for (const auto& [g, label] : gpu_generations()) {
    if (g == gpu) return label;
  }
  return gpu;
}

std::string watts_text(Milliwatts mw) { return fmt::format("{:g}", to_watts(mw).value()); }

std::string gnuplot_script(const std::string& stem, int width, int height,
                           const std::string& body) {
  // `reset` between the terminals: the SVG pass starts from the same state.
  constexpr std::string_view preamble =
      "reset\nset datafile separator comma\nset datafile missing 'nan'\n"
      "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n";
  return fmt::format(
      "# Draws figures/{0}.png and figures/{0}.svg from the CSVs in csv/.\n"
      "# Run from the report directory: gnuplot figures/{0}.gp\n"
      "set encoding utf8\n"
      "set terminal pngcairo noenhanced size {1},{2} font 'sans,10'\n"
      "set output 'figures/{0}.png'\n{3}{4}\nunset multiplot\n"
      "set terminal svg noenhanced size {1},{2} font 'sans,10' background '#ffffff'\n"
      "set output 'figures/{0}.svg'\n{3}{4}\nunset multiplot\nset output\n",
      stem, width, height, preamble, body);
}

namespace {

// Title and key bands of a PanelGrid, in pixels.
constexpr double kTitleBandPx = 34, kKeyRowPx = 18, kKeyPadPx = 10;

}  // namespace

std::string PanelGrid::begin(const std::string& title) const {
  return fmt::format("set multiplot title '{}'\nunset key\n", title);
}

std::string PanelGrid::panel(int index) const {
  const double h = static_cast<double>(height_px);
  const double bottom = (kKeyPadPx + kKeyRowPx * key_rows) / h;
  const double top = 1.0 - kTitleBandPx / h;
  const double w = 1.0 / cols, ph = (top - bottom) / rows;
  const int r = index / cols, c = index % cols;
  return fmt::format("set origin {:.4f},{:.4f}\nset size {:.4f},{:.4f}\n", c * w,
                     bottom + (rows - 1 - r) * ph, w, ph);
}

std::string PanelGrid::key(const std::vector<std::string>& entries) const {
  const double band = (kKeyPadPx + kKeyRowPx * key_rows) / static_cast<double>(height_px);
  return fmt::format(
      "set origin 0,0\nset size 1,{0:.4f}\nset lmargin at screen 0.02\n"
      "set rmargin at screen 0.98\nset bmargin at screen 0\nset tmargin at screen {0:.4f}\n"
      "unset title\nunset xlabel\nunset ylabel\nunset tics\nunset border\nunset grid\n"
      "unset arrow\nunset label\nunset logscale\nunset offsets\nunset colorbox\n"
      "set xrange [0:1]\nset yrange [0:1]\n"
      "set key at screen 0.5,screen {1:.4f} center center horizontal Left reverse samplen 2.5 "
      "width 1 font ',9'\n"
      "plot '+' using {2}\n",
      band, band / 2, fmt::join(entries, ", '+' using "));
}

std::string box_entry(std::string_view colour, const std::string& title) {
  return fmt::format("(NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '{}' title '{}'",
                     colour, title);
}

std::string line_entry(const std::string& style, const std::string& title) {
  return fmt::format("(NaN):(NaN) with {} title '{}'", style, title);
}

std::string md_figure(const std::string& stem, const std::string& alt,
                      const std::vector<std::string>& csvs) {
  std::string links;
  for (const auto& c : csvs) links += fmt::format(", [{0}](csv/{0})", c);
  return fmt::format("![{1}](figures/{0}.png)\n\n[SVG](figures/{0}.svg){2}\n\n", stem, alt, links);
}

std::string_view strategy_colour(const Strategy& k) {
  if (k == Strategy::kZeus) return kZeusColour;
  if (k == Strategy::kDefault) return kDefaultColour;
  if (k == Strategy::kGrid) return kGridColour;
  if (k == Strategy::kGridNoEarlyStop) return kGridNoEsColour;
  if (k == Strategy::kGridDirectional) return kGridDirColour;
  if (k == Strategy::kGridDirectionalNoEarlyStop) return kGridDirNoEsColour;
  return "#000000";
}

std::string strategy_label(const Strategy& k) {
  if (k == Strategy::kZeus) return "Zeus";
  if (k == Strategy::kDefault) return "Default";
  if (k == Strategy::kGrid) return "Grid Search";
  if (k == Strategy::kGridNoEarlyStop) return "Grid Search, no early stop";
  if (k == Strategy::kGridDirectional) return "Directional Grid Search";
  if (k == Strategy::kGridDirectionalNoEarlyStop) return "Directional Grid Search, no early stop";
  return k.name();
}

namespace {

std::string header_markdown(const PaperData& d, const PaperReportOptions& o) {
  std::string seeds;
  const auto& s = d.options.seeds;
  bool contiguous = true;
  for (std::size_t i = 1; i < s.size(); ++i) contiguous = contiguous && s[i] == s[i - 1] + 1;
  seeds = contiguous && s.size() > 1 ? fmt::format("{}–{}", s.front(), s.back())
                                     : fmt::format("{}", fmt::join(s, ", "));
  std::string figures;
  for (auto f : d.options.figures) {
    const auto& info = paper_figure_info(f);
    figures += fmt::format("- Figure {}: {}\n", fmt::join(info.paper_numbers, " / "), info.title);
  }
  return fmt::format(
      "# Zeus (NSDI '23): the trace-driven evaluation, reproduced\n\n"
      "This report is written by `{}`. It replays the paper's traces ({}) with the project's "
      "simulator (docs/simulator.md): one implementation of the Zeus strategy (pruning, Gaussian "
      "Thompson sampling, just-in-time power-limit profiling, early stopping) whose ablations are "
      "options, against Default and four grid searches. Every number with a spread is the mean ± "
      "sample standard deviation over the {} seeds {} ({} replays); the CSV next to each figure "
      "holds what it plots.\n\n"
      "Conventions: ETA/TTA = energy/time to accuracy; *normalized* = the mean of the last 5 "
      "recurrences divided by the expected Default (b0 at the maximum power limit, mean epochs "
      "of b0's runs); *regret* = Σ (recurrence cost − C*), C* the least expected cost over "
      "configurations whose runs all reach the target; cost = η·ETA + (1−η)·MaxPower·TTA, "
      "η = 0.5 and β = 2 unless a figure varies them. Our random streams are not numpy's, so "
      "single trajectories differ from the Python simulator's; distributions over seeds are "
      "what compares.\n\n"
      "The paper's own numbers are quoted only where its text states them; where it gives none, "
      "the figure's defining property is stated and checked by a test instead.\n\n"
      "Figures in this report:\n\n{}\n"
      "**Left out: Figure 9** (Zeus on the Alibaba GPU-cluster trace). It needs the job-group "
      "mapping `alibaba_groups.csv.xz`, which is not available (its blob is missing from every "
      "snapshot of the Zeus repository; see data/zeus-traces/README.md). The simulator's "
      "`--overlap` mode replays concurrent arrivals, but without the trace's arrival times and "
      "runtime ratios there is nothing to compare with the paper.\n\n",
      o.command_line, o.traces_note, s.size(), seeds, d.simulations, figures);
}

std::string render_driver(const std::string& dir, const std::string& script) {
  auto quote = [](const std::string& s) {
    std::string q;
    for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
    return "'" + q + "'";
  };
  return fmt::format("cd {}\nload {}\n", quote(dir), quote(script));
}

}  // namespace

const std::string* PaperFiles::find(std::string_view path) const {
  for (const auto& [p, c] : files) {
    if (p == path) return &c;
  }
  return nullptr;
}

PaperFiles format_paper_report(const PaperData& d, const PaperReportOptions& o) {
  std::vector<Section> sections;
  using F = PaperFigure;
  for (auto f : d.options.figures) {
    switch (f) {
      case F::kOpportunity:
        sections.push_back(opportunity_section(d));
        break;
      case F::kParetoFront:
        sections.push_back(pareto_section(d));
        break;
      case F::kEtaPerKnob:
        sections.push_back(eta_per_knob_section(d));
        break;
      case F::kBaselines:
        sections.push_back(baselines_section(d));
        break;
      case F::kDrift:
        sections.push_back(drift_section(d));
        break;
      case F::kEtaSweep:
        sections.push_back(eta_sweep_section(d));
        break;
      case F::kBetaSweep:
        sections.push_back(beta_section(d));
        break;
      case F::kAblation:
        sections.push_back(ablation_section(d));
        break;
      case F::kGpuGenerations:
        sections.push_back(gpu_generations_section(d));
        break;
      case F::kImprovementFactors:
        sections.push_back(improvement_section(d));
        break;
    }
  }
  PaperFiles out;
  std::string md = header_markdown(d, o);
  for (auto& s : sections) {
    md += s.markdown;
    for (auto& [name, text] : s.csvs) out.files.emplace_back("csv/" + name, std::move(text));
    for (auto& [stem, text] : s.scripts) {
      out.files.emplace_back("figures/" + stem + ".gp", std::move(text));
      out.scripts.push_back("figures/" + stem + ".gp");
      out.images.push_back("figures/" + stem + ".png");
      out.images.push_back("figures/" + stem + ".svg");
    }
  }
  out.files.insert(out.files.begin(), {"report.md", md});
  return out;
}

std::vector<std::string> paper_report_entries() { return {"report.md", "csv", "figures"}; }

std::vector<std::string> write_paper_report(const std::string& dir_in, const PaperFiles& files,
                                            int threads, const PaperProgress& progress) {
  namespace fs = std::filesystem;
  fs::create_directories(dir_in);
  const std::string dir = fs::absolute(dir_in).lexically_normal().string();
  std::vector<std::string> written;
  for (const auto& [path, text] : files.files) {
    write_file_atomically(dir + "/" + path, text);
    written.push_back(dir + "/" + path);
  }
  if (files.scripts.empty()) return written;

  // gnuplot runs each script from `dir` through a driver in a private temp dir,
  // so the scripts themselves hold only relative paths.
  std::string tmpl = (fs::temp_directory_path() / "zeus_paper_XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw_error(ErrorCode::kIo, fmt::format("cannot create a temporary directory {}", tmpl));
  }
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } cleanup{tmpl};
  fs::create_directories(dir + "/figures");
  std::vector<std::string> drivers;
  for (std::size_t i = 0; i < files.scripts.size(); ++i) {
    drivers.push_back(fmt::format("{}/render-{}.gp", tmpl, i));
    write_file_atomically(drivers.back(), render_driver(dir, files.scripts[i]));
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(drivers.size()));
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex mu;  // guards `error` and serializes progress
  std::exception_ptr error;
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < drivers.size();) {
      try {
        run_gnuplot(drivers[i]);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = drivers.size();
        return;
      }
      const std::size_t d = done.fetch_add(1) + 1;
      if (progress) {
        std::lock_guard lock(mu);
        progress("plots", d, drivers.size());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  for (const auto& img : files.images) written.push_back(dir + "/" + img);
  return written;
}

}  // namespace zeus::sim::paper
