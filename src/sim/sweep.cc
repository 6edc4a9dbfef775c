#include "zeus/sim/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::sim {

namespace {

// The first value given twice, if any.
template <class T, class Key>
std::optional<std::string> repeated(const std::vector<T>& values, Key key) {
  std::set<std::string> seen;
  for (const auto& v : values) {
    if (!seen.insert(key(v)).second) return key(v);
  }
  return std::nullopt;
}

}  // namespace

void validate(const SweepSpec& spec) {
  auto fail = [](const std::string& m) { throw_error(ErrorCode::kInvalidArgument, m); };
  if (spec.etas.empty()) fail("eta: give at least one value");
  for (double e : spec.etas) {
    if (!(e >= 0.0 && e <= 1.0)) fail(fmt::format("eta: {:g} is outside [0, 1]", e));
  }
  if (!(spec.beta > 0.0) || (spec.beta > kMaxBeta && !std::isinf(spec.beta))) {
    fail(fmt::format("beta must be in (0, {:g}] (or inf), got {:g}", kMaxBeta, spec.beta));
  }
  if (spec.seeds.empty()) fail("seeds: give at least one seed");
  if (spec.strategies.empty()) fail("strategy: give at least one strategy");
  if (spec.window_size < 0 || spec.window_size > kMaxWindowSize) {
    fail(fmt::format("window size must be in [0, {}]", kMaxWindowSize));
  }
  if (!(spec.overlap >= 0.0) || !(spec.overlap <= kMaxOverlap)) {
    fail(fmt::format("overlap must be in [0, {:g}]", kMaxOverlap));
  }
  if (spec.num_pruning_rounds < 0 || spec.num_pruning_rounds > kMaxPruningRounds) {
    fail(fmt::format("pruning rounds must be in [0, {}]", kMaxPruningRounds));
  }
  // A repeat would run (and average) the same rows twice.
  if (auto r = repeated(spec.etas, [](double e) { return fmt::format("{}", e); })) {
    fail(fmt::format("eta: {} is given twice", *r));
  }
  if (auto r = repeated(spec.seeds, [](std::uint64_t x) { return std::to_string(x); })) {
    fail(fmt::format("seeds: {} is given twice", *r));
  }
  if (auto r =
          repeated(spec.strategies, [](Strategy x) { return std::string(strategy_name(x)); })) {
    fail(fmt::format("strategy: {} is given twice", *r));
  }
  if (spec.drift) return;
  if (spec.gpus.empty() || spec.workloads.empty()) fail("give at least one GPU and one workload");
  for (const auto& g : spec.gpus) {
    if (std::find(trace_gpus().begin(), trace_gpus().end(), g) == trace_gpus().end()) {
      fail(fmt::format("unknown GPU '{}'; expected one of: {}", printable(g),
                       fmt::join(trace_gpus(), ", ")));
    }
  }
  if (auto r = repeated(spec.gpus, [](const std::string& g) { return g; })) {
    fail(fmt::format("gpu: {} is given twice", *r));
  }
  if (auto r = repeated(spec.workloads, [](const WorkloadSpec& w) { return w.name(); })) {
    fail(fmt::format("workload: {} is given twice", *r));
  }
}

std::vector<WorkloadTrace> sweep_traces(const TraceSet* traces, const SweepSpec& spec) {
  validate(spec);
  if (spec.drift) return {make_drifting_workload()};
  if (traces == nullptr) throw_error(ErrorCode::kInvalidArgument, "no traces loaded");
  std::vector<WorkloadTrace> out;
  for (const auto& g : spec.gpus) {
    for (const auto& w : spec.workloads) out.push_back(traces->workload(g, w));
  }
  return out;
}

void run_simulations(const std::vector<SimJob>& jobs, int threads,
                     const std::function<void(std::size_t, SimResult&&)>& consume,
                     const ProgressFn& progress) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mu;  // guards `error` and serializes progress callbacks
  std::exception_ptr error;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= jobs.size()) return;
      try {
        const SimJob& job = jobs[i];
        if (job.trace == nullptr) throw_error(ErrorCode::kInternal, "simulation without a trace");
        consume(i, simulate(*job.trace, job.strategy, job.options));
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = jobs.size();
        return;
      }
      const std::size_t d = done.fetch_add(1) + 1;
      if (progress) {
        std::lock_guard lock(mu);
        progress(d, jobs.size());
      }
    }
  };
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads),
                                                   std::max<std::size_t>(1, jobs.size())));
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

std::vector<SweepRow> run_sweep(const std::vector<WorkloadTrace>& traces, const SweepSpec& spec,
                                int threads, const ProgressFn& progress) {
  validate(spec);
  std::vector<SimJob> jobs;
  for (const auto& t : traces) {
    for (double eta : spec.etas) {
      for (auto seed : spec.seeds) {
        for (auto k : spec.strategies) {
          SimJob job{&t, k, {}};
          job.options.eta = eta;
          job.options.beta = spec.beta;
          job.options.seed = seed;
          job.options.window_size = spec.window_size;
          job.options.num_pruning_rounds = spec.num_pruning_rounds;
          job.options.power_limit_search = spec.power_limit_search;
          job.options.overlap = spec.overlap;
          jobs.push_back(job);
        }
      }
    }
  }
  std::vector<SweepRow> rows(jobs.size());
  run_simulations(
      jobs, threads,
      [&](std::size_t i, SimResult&& res) {
        const SimJob& k = jobs[i];
        SweepRow& r = rows[i];
        r.gpu = k.trace->gpu;
        r.workload = k.trace->name();
        r.eta = k.options.eta;
        r.beta = spec.beta;
        r.seed = k.options.seed;
        r.strategy = k.strategy;
        r.default_batch_size = k.trace->default_batch_size;
        r.num_recurrence = k.trace->num_recurrence;
        r.reference = compute_reference(*k.trace, k.options.eta, k.trace->drift_at.has_value());
        r.initial_opt_cost = compute_reference(*k.trace, k.options.eta, false).opt_cost;
        r.drift_at = k.trace->drift_at.value_or(-1);
        r.summary = summarize_run(*k.trace, res, k.options.eta);
        if (spec.keep_trajectories) r.result = std::make_shared<SimResult>(std::move(res));
      },
      progress);
  return rows;
}

}  // namespace zeus::sim
