// The trace-driven simulator on the real Zeus traces (the project's copy):
// trace semantics, hand-checked normalisers, paper invariants, drift, overlap
// and bad input.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "support/temp_dir.h"
#include "util/csv.h"
#include "zeus/sim/report.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/sweep.h"
#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace zeus::sim {
namespace {

const std::string kTraces = std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces";

// A fresh directory (mkdtemp), removed at the end of the test.
using ::zeus::testing::TempDir;

const TraceSet& traces() {
  static const TraceSet t = TraceSet::load(kTraces, trace_gpus());
  return t;
}

WorkloadTrace trace(const std::string& gpu, const std::string& workload) {
  return traces().workload(gpu, find_workload(workload));
}

TEST(Trace, RecurrenceCountsAndDefaultsMatchTheReference) {
  const std::map<std::string, int> v100 = {
      {"cifar100/shufflenetv2", 140},  {"imagenet/resnet50", 70},
      {"squad/bert_base_uncased", 98}, {"librispeech/deepspeech2", 210},
      {"movielens-1m/ncf", 182},       {"sentiment140/bert_base_uncased", 70}};
  for (const auto& [w, n] : v100) EXPECT_EQ(trace("v100", w).num_recurrence, n) << w;
  EXPECT_EQ(trace("p100", "imagenet/resnet50").num_recurrence, 24);
  EXPECT_EQ(trace("v100", "imagenet/resnet50").batch_size_list(),
            (std::vector<int>{64, 128, 192, 256, 360}));
  EXPECT_EQ(trace("p100", "imagenet/resnet50").default_batch_size, 128);
  EXPECT_EQ(trace("p100", "squad/bert_base_uncased").default_batch_size, 24);
  EXPECT_EQ(trace("p100", "librispeech/deepspeech2").default_batch_size, 72);
  EXPECT_EQ(trace("p100", "sentiment140/bert_base_uncased").default_batch_size, 64);
  EXPECT_EQ(trace("rtx6000", "librispeech/deepspeech2").default_batch_size, 128);
  EXPECT_EQ(trace("v100", "librispeech/deepspeech2").default_batch_size, 192);
}

TEST(Trace, EveryBatchSizesLargestLimitIsTheGpuMaximum) {
  // The JIT choice uses the per-batch-size maximum (ZeusCostSelector), the
  // cost uses the GPU-wide one; the reference says they coincide on these traces.
  const std::map<std::string, double> max_w = {
      {"v100", 250}, {"a40", 300}, {"p100", 250}, {"rtx6000", 260}};
  for (const auto& gpu : trace_gpus()) {
    for (const auto& spec : paper_workloads()) {
      const auto t = traces().workload(gpu, spec);
      EXPECT_EQ(t.max_power.value(), max_w.at(gpu));
      for (const auto& b : t.batch_sizes) {
        EXPECT_EQ(to_watts(b.limits.front().power_limit).value(), max_w.at(gpu))
            << gpu << " " << spec.name() << " bs " << b.batch_size;
      }
    }
  }
}

TEST(Reference, ExpectedDefaultIsHandChecked) {
  // librispeech bs 192 target 40: runs reach it at epochs 10,9,9,10,10 (mean
  // 9.6); at 250 W an epoch takes 6181.63 s at 160.5584... W.
  const auto r = compute_reference(trace("v100", "librispeech/deepspeech2"), 0.5);
  EXPECT_DOUBLE_EQ(r.default_tta.count(), 9.6 * 6181.63);
  EXPECT_NEAR(r.default_eta.value(), 9.6 * 6181.63 * 160.55840881076978, 1e-6);
  // cifar100 bs 1024 target 0.6: ten runs, mean 78.7 epochs of 7.6133 s.
  const auto c = compute_reference(trace("v100", "cifar100/shufflenetv2"), 0.5);
  EXPECT_NEAR(c.default_tta.count(), 78.7 * 7.613333333333333, 1e-9);
  EXPECT_NEAR(c.default_eta.value(), 78.7 * 7.613333333333333 * 187.68996594563717, 1e-6);
}

TEST(Reference, OptimumOfLibrispeechOnV100Is48At150W) {
  const auto t = trace("v100", "librispeech/deepspeech2");
  const auto r = compute_reference(t, 0.5);
  EXPECT_EQ(r.opt_batch_size, 48);
  EXPECT_EQ(r.opt_power_limit, Milliwatts(150000));
  // C* is that configuration's mean epochs times its epoch cost.
  const auto& b = t.batch(48);
  double epochs = 0;
  for (double e : b.target_epochs) epochs += e;
  epochs /= static_cast<double>(b.target_epochs.size());
  const auto& p = b.at(Milliwatts(150000));
  EXPECT_NEAR(r.opt_cost.value(),
              epochs * (0.5 * p.average_power.value() + 0.5 * 250.0) * p.time_per_epoch.count(),
              1e-6);
}

TEST(Simulate, ZeusPrunesLibrispeechDownwardFromTheDefaultFirst) {
  const auto res = simulate(trace("v100", "librispeech/deepspeech2"), Strategy::kZeus, {});
  ASSERT_EQ(res.recurrences.size(), 210u);
  const std::vector<int> expected = {192, 156, 128, 96, 72, 64, 56, 48, 32, 24, 16, 12};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(res.runs[i].batch_size, expected[i]) << i;
    EXPECT_TRUE(res.runs[i].profiled);  // first use of each size pays the profiling epoch
  }
}

TEST(Simulate, DefaultNeverProfilesAndRunsB0AtMaxPower) {
  const auto res = simulate(trace("v100", "squad/bert_base_uncased"), Strategy::kDefault, {});
  for (const auto& r : res.runs) {
    ASSERT_EQ(r.batch_size, 32);
    ASSERT_EQ(r.power_limit, Milliwatts(250000));
    ASSERT_FALSE(r.profiled);
  }
}

TEST(Simulate, GridSearchStartsAtDefaultThenAscendingSizesDescendingLimits) {
  const auto t = trace("v100", "imagenet/resnet50");
  const auto res = simulate(t, Strategy::kGrid, {});
  EXPECT_EQ(res.runs[0].batch_size, 256);
  EXPECT_EQ(res.runs[0].power_limit, Milliwatts(250000));
  EXPECT_EQ(res.runs[1].batch_size, 64);
  EXPECT_EQ(res.runs[1].power_limit, Milliwatts(250000));
  // Within one batch size the exploration goes down the limits.
  for (std::size_t i = 2; i < 20; ++i) {
    if (res.runs[i].batch_size == res.runs[i - 1].batch_size) {
      EXPECT_LT(res.runs[i].power_limit, res.runs[i - 1].power_limit) << i;
    }
  }
}

TEST(Simulate, SameSeedSameResultDifferentSeedDiffers) {
  const auto t = trace("v100", "cifar100/shufflenetv2");
  SimOptions a, b;
  b.seed = 2;
  const auto r1 = simulate(t, Strategy::kZeus, a), r2 = simulate(t, Strategy::kZeus, a);
  const auto r3 = simulate(t, Strategy::kZeus, b);
  ASSERT_EQ(r1.runs.size(), r2.runs.size());
  for (std::size_t i = 0; i < r1.runs.size(); ++i) ASSERT_EQ(r1.runs[i].cost, r2.runs[i].cost);
  bool differs = r1.runs.size() != r3.runs.size();
  for (std::size_t i = 0; !differs && i < r1.runs.size(); ++i)
    differs = r1.runs[i].cost != r3.runs[i].cost;
  EXPECT_TRUE(differs);
}

SweepSpec paper_spec(const std::string& gpu) {
  SweepSpec s;
  s.gpus = {gpu};
  s.workloads = paper_workloads();
  s.seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  return s;
}

TEST(Sweep, ZeusLastFiveEtaNeverWorseThanDefaultOnV100) {
  const auto spec = paper_spec("v100");
  const auto rows = run_sweep(sweep_traces(&traces(), spec), spec, 2);
  std::map<std::string, double> zeus;
  for (const auto& r : rows) {
    if (r.strategy == Strategy::kZeus) zeus[r.workload] += r.summary.eta_norm / 10.0;
  }
  ASSERT_EQ(zeus.size(), 6u);
  for (const auto& [w, e] : zeus) EXPECT_LE(e, 1.0) << w;
}

TEST(Sweep, GridSearchRegretsMoreThanZeusOnAverage) {
  for (const auto& gpu : trace_gpus()) {
    const auto spec = paper_spec(gpu);
    const auto rows = run_sweep(sweep_traces(&traces(), spec), spec, 2);
    double z = 0, g = 0;
    for (const auto& r : rows) {
      if (r.strategy == Strategy::kZeus) z += r.summary.cum_regret.value();
      if (r.strategy == Strategy::kGrid) g += r.summary.cum_regret.value();
    }
    EXPECT_GT(g, z) << gpu;
  }
}

TEST(Sweep, ResultsDoNotDependOnTheNumberOfThreads) {
  auto spec = paper_spec("a40");
  spec.seeds = {1, 2, 3};
  spec.strategies.push_back(Strategy::kGridNoEarlyStop);
  const auto traces_a40 = sweep_traces(&traces(), spec);
  EXPECT_EQ(format_csv(run_sweep(traces_a40, spec, 1)), format_csv(run_sweep(traces_a40, spec, 2)));
}

TEST(Drift, WindowedPolicyFollowsTheMoveWhileUnwindowedLags) {
  const auto t = make_drifting_workload();
  const int at = *t.drift_at;
  auto followed = [&](int window) {
    int hits = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      SimOptions o;
      o.seed = seed;
      o.window_size = window;
      const auto res = simulate(t, Strategy::kZeus, o);
      for (int i = at; i < at + 60; ++i)
        hits += res.recurrences[static_cast<std::size_t>(i)].batch_size == 256;
    }
    return hits / (8.0 * 60.0);
  };
  const double windowed = followed(10), unwindowed = followed(0);
  EXPECT_GT(windowed, 0.6);
  EXPECT_GT(windowed, unwindowed + 0.2) << "windowed " << windowed << " unwindowed " << unwindowed;
  // Before the drift both settle on 64.
  EXPECT_EQ(compute_reference(t, 0.5, false).opt_batch_size, 64);
  EXPECT_EQ(compute_reference(t, 0.5, true).opt_batch_size, 256);
}

TEST(Overlap, EarlyConcurrentJobsSpreadOverArms) {
  // squad's surviving arms have overlapping posteriors, so independent draws
  // show; a strategy that repeats its best guess would dispatch one size.
  const auto t = trace("v100", "squad/bert_base_uncased");
  SimOptions o;
  o.overlap = 4.0;
  int spread_seeds = 0, concurrent_trials = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    o.seed = seed;
    const auto res = simulate(t, Strategy::kZeus, o);
    ASSERT_EQ(res.recurrences.size(), static_cast<std::size_t>(t.num_recurrence));
    std::set<int> early;
    int concurrent = 0;
    for (const auto& r : res.runs) {
      if (r.kind == batch_size::TrialKind::kSampling && r.others_in_flight > 0 &&
          early.size() < 10) {
        early.insert(r.batch_size);
        ++concurrent;
      }
      if (r.kind == batch_size::TrialKind::kConcurrent) {
        ASSERT_GT(r.others_in_flight, 0);  // only handed out while others run
        ++concurrent_trials;
      }
    }
    if (concurrent >= 10 && early.size() >= 2) ++spread_seeds;
    for (const auto& rec : res.recurrences) ASSERT_GT(rec.runs, 0);
  }
  EXPECT_GE(spread_seeds, 4);
  // The check above is not vacuous: concurrent explorations do happen.
  EXPECT_GT(concurrent_trials, 0);
}

TEST(BadInput, MissingDirectoryNamesThePath) {
  try {
    TraceSet::load("/nonexistent/traces", {"v100"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/traces/summary_train.csv"),
              std::string::npos);
  }
}

TEST(BadInput, GarbledTraceNamesFileAndLine) {
  const TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  std::filesystem::copy_file(kTraces + "/summary_train.csv", dir / "summary_train.csv",
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream f(dir / "summary_power_v100.csv");
    f << "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
      << "squad,bert_base_uncased,32,adamw,250,12.5,200\n"
      << "squad,bert_base_uncased,32,adamw,225,oops,180\n";
  }
  try {
    TraceSet::load(dir.string(), {"v100"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_NE(std::string(e.what()).find("summary_power_v100.csv:3"), std::string::npos)
        << e.what();
  }
}

TEST(BadInput, UnknownWorkloadEtaAndBetaAreRejected) {
  EXPECT_THROW(find_workload("mnist/lenet"), Error);
  const auto t = trace("v100", "squad/bert_base_uncased");
  SimOptions o;
  o.eta = 1.5;
  EXPECT_THROW(simulate(t, Strategy::kZeus, o), Error);
  o.eta = 0.5;
  o.beta = 0.0;
  EXPECT_THROW(simulate(t, Strategy::kZeus, o), Error);
  EXPECT_THROW(parse_strategy("random"), Error);
}

TEST(Report, CsvHasTheDocumentedColumnsAndOneRowPerRun) {
  auto spec = paper_spec("v100");
  spec.seeds = {1, 2};
  spec.keep_trajectories = true;
  const auto rows = run_sweep(sweep_traces(&traces(), spec), spec, 1);
  const auto csv = format_csv(rows);
  // Exact column names (a substring search would find "eta" inside "beta").
  const auto table = CsvTable::parse(csv, "results.csv");
  table.require_columns({"gpu", "workload", "eta", "beta", "seed", "strategy", "b0",
                         "num_recurrence", "opt_bs", "opt_pl", "eta_norm", "tta_norm", "cum_regret",
                         "cum_regret_rel", "final_bs", "final_pl"});
  EXPECT_EQ(table.num_rows(), 6u * 2u * 3u);
  for (std::size_t r = 0; r < table.num_rows(); ++r) {
    EXPECT_EQ(table.cell(r, table.column("gpu")), "v100");
    EXPECT_GT(table.as_finite_double(r, table.column("eta_norm")), 0.0);
  }
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), 1 + 6 * 2 * 3);
  EXPECT_NE(csv.find("v100,librispeech/deepspeech2,0.5,2,1,zeus"), std::string::npos);
  const auto traj = format_trajectory_csv(rows);
  // 2 seeds x 3 policies x sum of V100 recurrences (770) + header
  EXPECT_EQ(static_cast<std::size_t>(std::count(traj.begin(), traj.end(), '\n')), 1 + 6 * 770);
  EXPECT_NE(format_table(rows).find("librispeech/deepspeech2"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim

namespace zeus::sim {
namespace {

TEST(SweepSpecValidation, RejectsBadFieldsBeforeAnythingRuns) {
  SweepSpec ok;
  ok.gpus = {"v100"};
  ok.workloads = {paper_workloads().front()};
  EXPECT_NO_THROW(validate(ok));
  auto expect_bad = [&](auto mutate, const char* needle) {
    SweepSpec s = ok;
    mutate(s);
    try {
      validate(s);
      ADD_FAILURE() << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_bad([](SweepSpec& s) { s.etas = {1.5}; }, "eta");
  expect_bad([](SweepSpec& s) { s.etas = {}; }, "eta");
  expect_bad([](SweepSpec& s) { s.beta = 0; }, "beta");
  expect_bad([](SweepSpec& s) { s.gpus = {"h100"}; }, "h100");
  expect_bad([](SweepSpec& s) { s.seeds = {}; }, "seed");
  expect_bad([](SweepSpec& s) { s.overlap = -1; }, "overlap");
}

}  // namespace
}  // namespace zeus::sim

namespace zeus::sim {
namespace {

const char* kTrainHeader = "dataset,network,batch_size,optimizer,target_metric,target_epoch\n";
const char* kPowerHeader =
    "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n";

Error trace_error(const std::string& train_rows, const std::string& power_rows) {
  try {
    TraceSet::parse(kTrainHeader + train_rows, {{"v100", kPowerHeader + power_rows}}, "t");
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorCode::kUnknown, "accepted");
}

TEST(TraceBounds, ImpossibleNumbersAreParseErrorsNamingFileAndLine) {
  const std::string train = "squad,bert_base_uncased,32,adamw,84.0,3\n";
  const std::string ok_power = "squad,bert_base_uncased,32,adamw,250,12.5,200\n";
  EXPECT_NO_THROW(TraceSet::parse(kTrainHeader + train, {{"v100", kPowerHeader + ok_power}}, "t"));
  for (const std::string row : {"squad,bert_base_uncased,32,adamw,1e308,12.5,200\n",
                                "squad,bert_base_uncased,32,adamw,250,inf,200\n",
                                "squad,bert_base_uncased,32,adamw,250,12.5,nan\n",
                                "squad,bert_base_uncased,32,adamw,250,0,200\n",
                                "squad,bert_base_uncased,32,adamw,-250,12.5,200\n",
                                "squad,bert_base_uncased,99999999999,adamw,250,12.5,200\n",
                                "squad,bert_base_uncased,0,adamw,250,12.5,200\n"}) {
    const Error e = trace_error(train, ok_power + row);
    EXPECT_EQ(e.code(), ErrorCode::kParse) << row;
    EXPECT_NE(std::string(e.what()).find("summary_power_v100.csv:3"), std::string::npos)
        << row << ": " << e.what();
  }
  for (const std::string row :
       {"squad,bert_base_uncased,32,adamw,84.0,1e300\n",
        "squad,bert_base_uncased,32,adamw,84.0,-1\n", "squad,bert_base_uncased,32,adamw,inf,3\n"}) {
    const Error e = trace_error(train + row, ok_power);
    EXPECT_EQ(e.code(), ErrorCode::kParse) << row;
    EXPECT_NE(std::string(e.what()).find("summary_train.csv:3"), std::string::npos) << e.what();
  }
}

TEST(TraceBounds, AnEmptyTargetEpochIsNeverReachedAsNanIs) {
  // pandas writes NaN as an empty field: a trace that went through
  // pandas.read_csv and to_csv must mean what the original meant.
  const std::string power = "squad,bert_base_uncased,32,adamw,250,12.5,200\n";
  const auto as_nan = TraceSet::parse(std::string(kTrainHeader) +
                                          "squad,bert_base_uncased,32,adamw,84.0,3\n"
                                          "squad,bert_base_uncased,32,adamw,84.0,nan\n",
                                      {{"v100", kPowerHeader + power}}, "t");
  const auto as_empty = TraceSet::parse(std::string(kTrainHeader) +
                                            "squad,bert_base_uncased,32,adamw,84.0,3.0\n"
                                            "squad,bert_base_uncased,32,adamw,84.0,\n",
                                        {{"v100", kPowerHeader + power}}, "t");
  const auto spec = find_workload("squad/bert_base_uncased");
  const auto a = as_nan.workload("v100", spec).batch_sizes;
  const auto b = as_empty.workload("v100", spec).batch_sizes;
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].target_epochs.size(), b[i].target_epochs.size());
    for (std::size_t k = 0; k < a[i].target_epochs.size(); ++k) {
      EXPECT_EQ(std::isnan(a[i].target_epochs[k]), std::isnan(b[i].target_epochs[k]));
      if (!std::isnan(a[i].target_epochs[k])) {
        EXPECT_EQ(a[i].target_epochs[k], b[i].target_epochs[k]);
      }
    }
  }
  // Text is still refused.
  EXPECT_EQ(trace_error("squad,bert_base_uncased,32,adamw,84.0,soon\n", power).code(),
            ErrorCode::kParse);
}

TEST(TraceBounds, DirectoriesAndFifosInPlaceOfTracesAreRefused) {
  const TempDir tmp;
  std::filesystem::create_directory(tmp.path() + "/summary_train.csv");
  try {
    TraceSet::load(tmp.path(), {"v100"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(exit_code_for(e.code()), kExitUsage) << e.what();
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
  std::filesystem::remove(tmp.path() + "/summary_train.csv");
  ASSERT_EQ(::mkfifo((tmp.path() + "/summary_train.csv").c_str(), 0600), 0);
  try {
    TraceSet::load(tmp.path(), {"v100"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(exit_code_for(e.code()), kExitUsage) << e.what();
  }
}

TEST(Simulate, ATraceThatCannotBeReplayedIsBadInputNotAnInternalError) {
  // b0 (32) never reaches the target: the first recurrence cannot finish.
  const auto ts = TraceSet::parse(
      std::string(kTrainHeader) + "squad,bert_base_uncased,32,adamw,84.0,nan\n",
      {{"v100", std::string(kPowerHeader) + "squad,bert_base_uncased,32,adamw,250,12.5,200\n"}},
      "t");
  const auto w = ts.workload("v100", find_workload("squad/bert_base_uncased"));
  for (auto s : {Strategy::kZeus, Strategy::kDefault, Strategy::kGrid}) {
    try {
      simulate(w, s, {});
      ADD_FAILURE() << strategy_name(s);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("cannot be replayed"), std::string::npos);
    }
  }
}

TEST(SweepSpecValidation, RepeatedListEntriesAndHugeKnobsAreRejected) {
  SweepSpec ok;
  ok.gpus = {"v100"};
  ok.workloads = {paper_workloads().front()};
  auto message = [&](auto mutate) {
    SweepSpec s = ok;
    mutate(s);
    try {
      validate(s);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message([](SweepSpec& s) { s.etas = {0.5, 0.5}; }).find("twice"), std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) { s.seeds = {1, 1}; }).find("twice"), std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) {
              s.gpus = {"v100", "v100"};
            }).find("twice"),
            std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) { s.workloads.push_back(s.workloads[0]); }).find("twice"),
            std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) {
              s.strategies = {Strategy::kZeus, Strategy::kZeus};
            }).find("twice"),
            std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) { s.beta = 1e308; }).find("beta"), std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) { s.overlap = 1e308; }).find("overlap"), std::string::npos);
  EXPECT_NE(message([](SweepSpec& s) { s.window_size = 2'000'000'000; }).find("window"),
            std::string::npos);
  EXPECT_EQ(message([](SweepSpec& s) { s.beta = std::numeric_limits<double>::infinity(); }),
            "accepted");
}

}  // namespace
}  // namespace zeus::sim
