// `zeus simulate`: replays the Zeus NSDI '23 traces (thin adapter over zeus_sim).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <optional>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "command_registry.h"
#include "numeric_flags.h"
#include "output_checks.h"
#include "util/data_dir.h"
#include "util/parse.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/sim/paper/paper.h"
#include "zeus/sim/paper/paper_report.h"
#include "zeus/sim/report.h"
#include "zeus/sim/sweep.h"
#include "zeus/util/error.h"

namespace zeus::cli::simulate_command {
namespace {

struct Flags {
  std::string traces;
  std::string gpu = "all";
  std::string workload = "all";
  std::string eta = "0.5";
  double beta = 2.0;
  std::string seeds = "1";
  std::string strategies = "zeus,default,grid";
  std::vector<std::string> plugins;
  int window_size = 0;
  double overlap = 0.0;
  bool drift = false;
  std::string format = "table";
  std::string out;
  bool plots = false;
  int threads = 0;
};

// Installed: <prefix>/share/zeus/zeus-traces (the build tree mirrors it).
std::string default_traces() { return zeus::data_dir("zeus-traces"); }

// Which flags the user gave (CLI11 options), for flags that do not apply.
struct Given {
  CLI::Option *traces = nullptr, *gpu = nullptr, *workload = nullptr, *beta = nullptr,
              *window = nullptr;
};

// The sweep's knobs, seeds and strategies from the flags (loading the
// policy plug-ins first, so that their strategies can be named).
zeus::sim::SweepSpec sweep_spec_from_flags(const Flags& f) {
  using namespace zeus;
  using namespace zeus::sim;
  using namespace zeus::sim::paper;
  SweepSpec spec;
  spec.beta = f.beta;
  spec.etas = parse_double_list(f.eta, "--eta", 0.0, 1.0);
  spec.seeds.clear();
  for (int s : parse_int_list(f.seeds, "--seeds", 0, std::numeric_limits<int>::max(), 10000)) {
    spec.seeds.push_back(static_cast<std::uint64_t>(s));
  }
  for (const auto& plugin : f.plugins) zeus::batch_size::load_policy_plugin(plugin);
  spec.strategies.clear();
  for (const auto& p : split_list(f.strategies, "--strategy")) {
    spec.strategies.push_back(parse_strategy(p));
  }
  spec.window_size = f.window_size;
  spec.overlap = f.overlap;
  spec.drift = f.drift;
  spec.keep_trajectories = !f.out.empty();
  return spec;
}

void check_simulate_flags(const Flags& f, const Given& given) {
  using namespace zeus;
  using namespace zeus::sim;
  using namespace zeus::sim::paper;
  if (f.format != "table" && f.format != "csv" && f.format != "json") {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("--format: expected table, csv or json, got '{}'", printable(f.format)));
  }
  if (f.plots && f.out.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "--plots needs --out DIR to write the figures into");
  }
  if (f.threads < 0 || f.threads > 1024) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("--threads must be in [0, 1024] (0 = one per core), got {}", f.threads));
  }
  if (f.drift) {
    for (const auto* o : {given.traces, given.gpu, given.workload}) {
      if (o->count() > 0) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("{} does not apply with --drift (it replays a synthetic workload, "
                                "not the traces)",
                                o->get_name()));
      }
    }
  }
}

// A note for a flag given but without effect on the chosen strategies.
void note_flags_without_effect(const zeus::sim::SweepSpec& spec, const Given& given) {
  using namespace zeus;
  using namespace zeus::sim;
  using namespace zeus::sim::paper;
  const bool any_zeus = std::find(spec.strategies.begin(), spec.strategies.end(),
                                  Strategy::kZeus) != spec.strategies.end();
  const bool any_early_stop = std::any_of(spec.strategies.begin(), spec.strategies.end(),
                                          [](const Strategy& s) { return uses_early_stopping(s); });
  if (given.window->count() > 0 && !any_zeus) {
    std::fprintf(stderr, "zeus simulate: note: --window-size only affects the zeus strategy\n");
  }
  if (given.beta->count() > 0 && !any_early_stop) {
    std::fprintf(stderr,
                 "zeus simulate: note: --beta only affects zeus and grid (the strategies that "
                 "stop early)\n");
  }
}

void select_trace_gpus_and_workloads(const Flags& f, zeus::sim::SweepSpec& spec) {
  using namespace zeus;
  using namespace zeus::sim;
  using namespace zeus::sim::paper;
  if (f.gpu == "all") {
    spec.gpus = trace_gpus();
  } else {
    spec.gpus = split_list(f.gpu, "--gpu");
  }
  if (f.workload == "all") {
    spec.workloads = paper_workloads();
  } else {
    for (const auto& w : split_list(f.workload, "--workload")) {
      spec.workloads.push_back(find_workload(w));
    }
  }
}

void run(const Flags& f, const Given& given) {
  using namespace zeus;
  using namespace zeus::sim;
  using namespace zeus::sim::paper;
  SweepSpec spec = sweep_spec_from_flags(f);
  check_simulate_flags(f, given);
  note_flags_without_effect(spec, given);

  std::optional<TraceSet> traces;
  if (!f.drift) select_trace_gpus_and_workloads(f, spec);
  validate(spec);  // before loading traces, so bad flags fail fast
  if (!f.out.empty()) {
    cli::check_output_dir(f.out, "--out", {"results.csv", "trajectory.csv", "summary.txt"});
  }
  if (!f.drift) {
    traces = TraceSet::load(f.traces.empty() ? default_traces() : f.traces, spec.gpus);
  }
  const auto workloads = sweep_traces(traces ? &*traces : nullptr, spec);
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto rows = run_sweep(workloads, spec, f.threads, [&](std::size_t done, std::size_t total) {
    if (tty && (done % 16 == 0 || done == total)) {
      std::fprintf(stderr, "\rzeus simulate: %zu/%zu runs%s", done, total,
                   done == total ? "\n" : "");
    }
  });
  // Results reach stdout first, so a failing --out loses nothing.
  if (f.format == "csv") {
    std::cout << format_csv(rows);
  } else if (f.format == "json") {
    std::cout << format_json(rows);
  } else {
    std::cout << format_table(rows);
  }
  std::cout.flush();
  if (!std::cout) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot write to standard output: {}", errno_text(errno)));
  }
  if (!f.out.empty()) {
    write_outputs(f.out, rows);
    if (f.plots) {
      for (const auto& file : render_plots(f.out, rows)) std::cerr << "wrote " << file << "\n";
    }
  }
}

struct PaperFlags {
  std::string out;
  std::string figures = "all";
  std::string seeds = "1-10";
  std::string traces;
  int threads = 0;
  bool no_plots = false;
};

// Progress on a terminal: one line per stage, rewritten in place.
zeus::sim::paper::PaperProgress terminal_progress() {
  if (isatty(STDERR_FILENO) == 0) return {};
  return [](std::string_view stage, std::size_t done, std::size_t total) {
    if (done % 64 == 0 || done == total || stage == "plots") {
      std::fprintf(stderr, "\rzeus simulate paper: %.*s %zu/%zu%s", static_cast<int>(stage.size()),
                   stage.data(), done, total, done == total ? "\n" : "");
    }
  };
}

void run_paper(const PaperFlags& f, const std::vector<std::string>& argv) {
  using namespace zeus;
  using namespace zeus::sim;
  using namespace zeus::sim::paper;
  PaperOptions options;
  options.figures = parse_paper_figures(f.figures);
  options.seeds.clear();
  for (int s : parse_int_list(f.seeds, "--seeds", 0, std::numeric_limits<int>::max(), 10000)) {
    options.seeds.push_back(static_cast<std::uint64_t>(s));
  }
  if (f.threads < 0 || f.threads > 1024) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("--threads must be in [0, 1024] (0 = one per core), got {}", f.threads));
  }
  options.threads = f.threads;
  validate(options);
  // Everything that can be refused is refused before the work: the output
  // directory, then the traces (missing files, columns or workloads).
  cli::check_output_dir(f.out, "--out", {"report.md"});
  for (const auto& e : paper_report_entries()) {
    std::error_code ec;
    const auto p = std::filesystem::path(f.out) / e;
    if (e != "report.md" && std::filesystem::exists(p, ec) &&
        !std::filesystem::is_directory(p, ec)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("--out {}: {} exists and is not a directory", printable(f.out), e));
    }
  }
  const std::string dir = f.traces.empty() ? default_traces() : f.traces;
  const TraceSet traces = TraceSet::load(dir, trace_gpus());
  const auto progress = terminal_progress();
  const PaperData data = compute_paper(traces, options, progress);
  PaperReportOptions ro;
  std::string cmd = "zeus simulate paper";
  for (const auto& a : argv) cmd += " " + a;
  ro.command_line = cmd;
  ro.traces_note = f.traces.empty() ? "the project's `data/zeus-traces`, from ml-energy/zeus"
                                    : fmt::format("`{}`", printable(f.traces));
  PaperFiles files = format_paper_report(data, ro);
  if (f.no_plots) files.scripts.clear();
  const auto written = write_paper_report(f.out, files, f.threads, progress);
  std::fprintf(stderr, "zeus simulate paper: wrote %s/report.md (%zu files, %zu replays)\n",
               f.out.c_str(), written.size(), data.simulations);
}

void setup_paper(CLI::App& simulate, const Given& parent) {
  auto flags = std::make_shared<PaperFlags>();
  auto* cmd = simulate.add_subcommand(
      "paper",
      "Reproduce the paper's trace-driven evaluation (Figures 1/15, 2/16, 5/17/18, 6/7/8/19, "
      "10, 11, 12, 13, 14/23, 22) into DIR: report.md with the paper's numbers beside ours, "
      "the CSV behind every figure (DIR/csv) and a PNG and SVG per figure (DIR/figures, "
      "gnuplot). Figure 9 needs the unavailable Alibaba trace and is left out");
  cmd->add_option("--out", flags->out, "Report directory (created; checked before any work)")
      ->required();
  cmd->add_option("--figures", flags->figures,
                  "Paper figure numbers, comma list (e.g. 11,12; 15 selects Figure 1/15), or all")
      ->default_val("all");
  cmd->add_option("--seeds", flags->seeds,
                  "Seeds of every replayed figure: list or range; mean and sd are over them")
      ->default_val("1-10");
  cmd->add_option("--traces", flags->traces,
                  "Trace directory (summary_train.csv, summary_power_<gpu>.csv for v100, a40, "
                  "p100, rtx6000); default: the project's data/zeus-traces");
  cmd->add_option("--threads", flags->threads, "Worker threads (0 = one per core)")
      ->default_val(0)
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-plots", flags->no_plots,
                "Write report.md and the CSVs and gnuplot scripts, but do not run gnuplot");
  cmd->callback([flags, cmd, parent] {
    for (const auto* o : {parent.traces, parent.gpu, parent.workload, parent.beta, parent.window}) {
      if (o->count() > 0) {
        zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                          fmt::format("{} belongs to `zeus simulate`, not to `zeus simulate "
                                      "paper` (give paper's own flags after `paper`)",
                                      o->get_name()));
      }
    }
    std::vector<std::string> argv;
    for (const auto* o : cmd->get_options()) {
      if (o->count() == 0 || o->get_name() == "--help") continue;
      argv.push_back(o->get_name());
      if (o->get_type_size_min() == 0) continue;  // a flag
      for (const auto& r : o->results()) argv.push_back(r);
    }
    run_paper(*flags, argv);
  });
}

void setup(CLI::App& root) {
  auto flags = std::make_shared<Flags>();
  auto given = std::make_shared<Given>();
  auto* sub = root.add_subcommand(
      "simulate",
      "Replay the Zeus NSDI '23 traces: Zeus's batch-size + power-limit strategy against "
      "Default and Grid Search (ETA/TTA over Default, cumulative regret)");
  given->traces =
      sub->add_option("--traces", flags->traces,
                      "Trace directory (summary_train.csv, summary_power_<gpu>.csv); default: the "
                      "project's data/zeus-traces");
  given->gpu =
      sub->add_option("--gpu", flags->gpu, "v100, a40, p100, rtx6000, a comma list, or all")
          ->default_val("all");
  given->workload =
      sub->add_option("--workload", flags->workload,
                      "DATASET/NETWORK (e.g. librispeech/deepspeech2), a comma list, or all")
          ->default_val("all");
  sub->add_option("--eta", flags->eta, "Energy/time knob(s) in [0,1], comma list, no repeats")
      ->default_val("0.5");
  given->beta = zeus::cli::allow_infinity(
      sub->add_option("--beta", flags->beta,
                      "Early-stopping factor in (0, 1e6], or inf (zeus, grid)")
          ->default_val(2.0));
  sub->add_option("--seeds", flags->seeds,
                  "Seeds (0..2^31-1): list or range, e.g. 1-10; at most 10000, no repeats")
      ->default_val("1");
  sub->add_option("--strategy,--policy", flags->strategies,
                  "Policies compared, by registered name: zeus, default, grid (grid search with "
                  "pruning), grid-noes (without early stopping), grid-dir (directional grid "
                  "search from b0), grid-dir-noes, or a plug-in's (--policy-plugin); --policy "
                  "is the old name")
      ->default_val("zeus,default,grid");
  sub->add_option("--policy-plugin", flags->plugins,
                  "Shared object registering policies (docs/extending.md); repeatable");
  given->window = sub->add_option("--window-size", flags->window_size,
                                  "Zeus: observations kept per batch size (0 = all, at most 1e6)")
                      ->default_val(0)
                      ->check(CLI::NonNegativeNumber);
  sub->add_option("--overlap", flags->overlap,
                  "Overlapping arrivals: about this many jobs in flight (0 = one after another, "
                  "at most 1e6)")
      ->default_val(0.0)
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--drift", flags->drift,
                "Replay the synthetic drifting workload (best batch size moves from 64 to 256 "
                "halfway) instead of the traces; --traces, --gpu and --workload do not apply");
  sub->add_option("--format", flags->format, "table, csv or json")->default_val("table");
  sub->add_option("--out", flags->out,
                  "Directory for results.csv, trajectory.csv, summary.txt (and plots); checked "
                  "before the sweep");
  sub->add_flag("--plots", flags->plots, "Draw Figure 6/7/8-style PNG and SVG plots into --out");
  sub->add_option("--threads", flags->threads, "Worker threads (0 = one per core)")
      ->default_val(0)
      ->check(CLI::NonNegativeNumber);
  setup_paper(*sub, *given);
  sub->callback([flags, given, sub] {
    if (!sub->get_subcommands().empty()) return;  // a subcommand (paper, chase) did the work
    run(*flags, *given);
  });
}

const bool registered = zeus::cli::register_command(40, &setup);

}  // namespace
}  // namespace zeus::cli::simulate_command
