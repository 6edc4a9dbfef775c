// `zeus simulate chase`: one Zeus power trace (GPU, workload, batch size)
// replayed against one grid signal under several policies, from every start
// of the series, plus a single start in detail; the report answers "what does
// carbon- (or price-) awareness buy over a static power cap" (docs/chase.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/sim/carbon_aware/replay.h"
#include "zeus/sim/carbon_aware/sweep.h"

namespace zeus::sim::carbon_aware {

struct StudySpec {
  std::string signal_path;
  zeus::carbon_aware::SignalCsvOptions csv;
  std::string traces_dir;
  std::string gpu = "a40";
  std::string workload = "imagenet/resnet50";
  int batch_size = 128;
  // epochs 0 (the default here, as in the CLI): the median epochs-to-target
  // of the trace; ReplayOptions' own default (1 epoch) would be a 1-epoch job.
  ReplayOptions replay = [] {
    ReplayOptions o;
    o.epochs = 0.0;
    return o;
  }();
  std::vector<std::string> policies = {"max", "zeus-cost:0.25", "max-slowdown:1.05", "chase:0.25"};
  // The Pareto sweep: chase:ETA:FORECASTER for each eta, beside every fixed limit.
  std::vector<double> pareto_etas;
  std::string pareto_forecaster = "persistence";
  // The (charge change %, time change %) to find the nearest chase eta for
  // (the paper's headline: -13.6 % carbon at +2.5 % time).
  std::optional<std::pair<double, double>> target;
  bool wrap = false;                         // periodic extension (said in the report)
  std::int64_t start_step_s = 0;             // 0: the decision period
  std::optional<std::int64_t> single_start;  // default: the first start of the sweep
  int threads = 0;
};

// What a static power cap gets at a Chase policy's slowdown.
struct Headline {
  std::string chase_policy;
  double chase_charge_pct = 0, chase_time_pct = 0;
  std::string static_policy;  // max-slowdown:1+time change
  double static_charge_pct = 0, static_time_pct = 0;
  // Static fixed limits interpolated to the same time change (the frontier).
  std::optional<double> frontier_charge_pct;
  double share = 0;  // static saving / chase saving (NaN when chase saves nothing)
};

struct StudyResult {
  zeus::carbon_aware::GridSignal signal;  // as read (before any wrapping)
  std::string workload_label;
  JobProfile profile;
  double epochs = 0;
  SweepResult main;                 // the --policy list
  SweepResult pareto;               // fixed limits, chase across eta (empty without pareto_etas)
  std::vector<Headline> headlines;  // one per chase policy of `main`
  std::optional<Headline> nearest;  // the pareto chase nearest the target
  std::int64_t single_start = 0;
  std::vector<std::pair<std::string, ReplayResult>> single;  // recorded replays, main policies
};

// Loads, sweeps and analyses; errors as the parts raise them (kNotFound /
// kParse / kInvalidArgument naming the file, flag or value).
StudyResult run_study(const StudySpec& spec);

// report.md, summary.csv, starts.csv, pareto.csv, decisions.csv (the single
// start's first Chase policy, or its first policy), and with `plots` the
// gnuplot figures (PNG and SVG). Returns the files written.
std::vector<std::string> write_study(const std::string& dir, const StudySpec& spec,
                                     const StudyResult& result, bool plots);

// The summary as a plain-text table (the command's stdout).
std::string study_table(const StudyResult& result);

// The JobProfile of a Zeus trace's batch size (per-epoch time and energy at
// each limit, and its profiling epoch).
JobProfile job_profile(const std::vector<power_limit::PowerLimitMeasurement>& per_epoch,
                       Seconds profile_time, Joules profile_energy);

}  // namespace zeus::sim::carbon_aware
