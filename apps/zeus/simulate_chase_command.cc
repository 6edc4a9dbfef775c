// `zeus simulate chase`: a Zeus power trace replayed against a carbon-intensity
// or price series under max / static / Chase policies (thin adapter over
// zeus_sim_chase; docs/chase.md).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "command_registry.h"
#include "numeric_flags.h"
#include "output_checks.h"
#include "util/data_dir.h"
#include "util/iso8601.h"
#include "util/parse.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/sim/carbon_aware/study.h"
#include "zeus/util/error.h"

namespace zeus::cli::simulate_chase_command {
namespace {

struct Flags {
  std::string signal, unit, emission_factor = "lifecycle";
  std::string traces, gpu = "a40", workload = "imagenet/resnet50";
  int batch_size = 128;
  double epochs = 0;
  long long period = 0;
  double history_hours = 24;
  std::optional<double> signal_max;
  bool charge_profiling = false;
  std::string policies = "max,zeus-cost:0.25,max-slowdown:1.05,chase:0.25";
  std::string pareto_etas = "0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.5,0.6,0.7,0.8,0.9";
  std::string pareto_forecaster = "persistence";
  std::string target;
  bool wrap = false;
  long long start_step = 0;
  std::string start;
  int threads = 0;
  std::string out;
  bool no_plots = false;
};

// Installed: <prefix>/share/zeus/zeus-traces (the build tree mirrors it).
std::string default_traces() { return zeus::data_dir("zeus-traces"); }

void run(const Flags& f) {
  using namespace zeus;
  using namespace zeus::sim::carbon_aware;
  StudySpec spec;
  spec.signal_path = f.signal;
  spec.csv.unit = f.unit;
  spec.csv.emission_factor = f.emission_factor;
  spec.traces_dir = f.traces.empty() ? default_traces() : f.traces;
  spec.gpu = f.gpu;
  spec.workload = f.workload;
  spec.batch_size = f.batch_size;
  if (!(f.epochs >= 0 && f.epochs <= 1e6)) {  // NaN too
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("--epochs must be in (0, 1e6] (0: the trace's median), got {}", f.epochs));
  }
  spec.replay.epochs = f.epochs;
  spec.replay.period_s = f.period;
  if (!(f.history_hours >= 1 && f.history_hours <= 24 * 366)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--history-hours must be in [1, 8784], got {}", f.history_hours));
  }
  spec.replay.history_s = static_cast<std::int64_t>(f.history_hours * 3600);
  spec.replay.signal_max = f.signal_max;
  spec.replay.charge_profiling = f.charge_profiling;
  spec.policies = split_list(f.policies, "--policy");
  spec.pareto_etas = f.pareto_etas.empty()
                         ? std::vector<double>{}
                         : parse_double_list(f.pareto_etas, "--pareto-etas", 0.0, 1.0);
  spec.pareto_forecaster = f.pareto_forecaster;
  if (!f.target.empty()) {
    const auto v = parse_double_list(f.target, "--target", -1e6, 1e6);
    if (v.size() != 2) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("--target takes CHARGE_PCT,TIME_PCT (e.g. -13.6,2.5), got '{}'",
                              printable(f.target)));
    }
    spec.target = std::make_pair(v[0], v[1]);
  }
  spec.wrap = f.wrap;
  if (f.start_step < 0) {
    throw_error(ErrorCode::kInvalidArgument, "--start-step must be >= 0 seconds");
  }
  spec.start_step_s = f.start_step;
  if (!f.start.empty()) spec.single_start = parse_iso8601(f.start, "--start");
  if (f.threads < 0 || f.threads > 1024) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("--threads must be in [0, 1024] (0 = one per core), got {}", f.threads));
  }
  spec.threads = f.threads;
  cli::check_output_dir(f.out, "--out", {"report.md", "decisions.csv", "summary.csv"});
  const StudyResult result = run_study(spec);
  const auto files = write_study(f.out, spec, result, !f.no_plots);
  std::cout << study_table(result);
  cli::flush_stdout();
  std::fprintf(stderr, "zeus simulate chase: wrote %s/report.md (%zu files)\n", f.out.c_str(),
               files.size());
}

void setup(CLI::App& root) {
  CLI::App* simulate = root.get_subcommand("simulate");
  auto flags = std::make_shared<Flags>();
  auto* cmd = simulate->add_subcommand(
      "chase",
      "Carbon- or price-aware power limits (Chase): replay a Zeus power trace against a grid "
      "signal (carbon intensity or electricity price) under max, static zeus-cost / "
      "max-slowdown, fixed limits and Chase(eta, forecaster), from every start of the series; "
      "writes report.md, CSVs, decisions.csv for one start and plots into --out");
  cmd->add_option("--signal", flags->signal,
                  "Signal CSV: data/grid-signals files, an ElectricityMaps export, or "
                  "timestamp,value (then give --unit)")
      ->required();
  cmd->add_option("--unit", flags->unit,
                  "The signal's unit when the file does not state it: g/kWh, kg/kWh, or a price "
                  "such as GBP/kWh, USD/kWh (a stated unit that differs is refused)");
  cmd->add_option("--emission-factor", flags->emission_factor,
                  "ElectricityMaps exports: lifecycle or direct")
      ->default_val("lifecycle");
  cmd->add_option("--traces", flags->traces,
                  "Trace directory (summary_train.csv, summary_power_<gpu>.csv); default: the "
                  "project's data/zeus-traces");
  cmd->add_option("--gpu", flags->gpu, "v100, a40, p100 or rtx6000")->default_val("a40");
  cmd->add_option("--workload", flags->workload, "DATASET/NETWORK")
      ->default_val("imagenet/resnet50");
  cmd->add_option("--batch-size", flags->batch_size, "Batch size in the trace")->default_val(128);
  cmd->add_option("--epochs", flags->epochs,
                  "Work in epochs (0: the median epochs to target in the trace)")
      ->default_val(0);
  cmd->add_option("--period", flags->period,
                  "Decision period in seconds, a multiple of the signal's resolution (0: the "
                  "resolution)")
      ->default_val(0);
  cmd->add_option("--history-hours", flags->history_hours,
                  "Forecaster fit and normaliser window before the start")
      ->default_val(24);
  cmd->add_option("--signal-max", flags->signal_max,
                  "Fixed normaliser (the paper: 750 g/kWh); default: the maximum of the history")
      ->check(zeus::cli::positive_number());
  cmd->add_flag("--charge-profiling", flags->charge_profiling,
                "Charge the just-in-time profiling epoch to every policy but max");
  cmd->add_option("--policy", flags->policies,
                  "Comma list: max, limit:W, zeus-cost:ETA, max-slowdown:FACTOR, "
                  "chase:ETA[:persistence|linear|svr|oracle]")
      ->default_val(flags->policies);
  cmd->add_option("--pareto-etas", flags->pareto_etas,
                  "Chase etas for the Pareto sweep beside every fixed limit (empty: none)")
      ->default_val(flags->pareto_etas);
  cmd->add_option("--pareto-forecaster", flags->pareto_forecaster,
                  "Forecaster of the Pareto sweep's Chase policies")
      ->default_val("persistence");
  cmd->add_option("--target", flags->target,
                  "CHARGE_PCT,TIME_PCT: report the Pareto eta nearest it (paper: -13.6,2.5)");
  cmd->add_flag("--wrap", flags->wrap,
                "Treat the series as periodic, so every start has history and every job ends "
                "(said in the report); otherwise such starts are skipped and counted");
  cmd->add_option("--start-step", flags->start_step,
                  "Seconds between swept starts (0: one decision period)")
      ->default_val(0);
  cmd->add_option("--start", flags->start,
                  "The single start written to decisions.csv and Figures 1-2 (ISO 8601; default: "
                  "the sweep's first)");
  cmd->add_option("--threads", flags->threads, "Worker threads (0 = one per core)")->default_val(0);
  cmd->add_option("--out", flags->out, "Output directory (checked before any work)")->required();
  cmd->add_flag("--no-plots", flags->no_plots, "Write the report and CSVs but do not run gnuplot");
  cmd->callback([flags, simulate] {
    for (const char* name : {"--traces", "--gpu", "--workload"}) {
      if (simulate->get_option(name)->count() > 0) {
        zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                          fmt::format("{} belongs to `zeus simulate`; give `zeus simulate chase` "
                                      "its own flags after `chase`",
                                      name));
      }
    }
    run(*flags);
  });
}

// After `simulate` (order 40), which this adds a subcommand to.
const bool registered = zeus::cli::register_command(41, &setup);

}  // namespace
}  // namespace zeus::cli::simulate_chase_command
