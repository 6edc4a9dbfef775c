// zeuscpp._legacy (upstream zeus._legacy): the trace simulator with the
// policy seam of zeus/optimizer/batch_size/policy.h. A Python policy (a
// BatchSizeOptimizer / PowerLimitOptimizer subclass) is called from the C++
// replay through two small adapters, one Python call per seam call; the
// built-in policies (PruningGTSBatchSizeOptimizer, JITPowerLimitOptimizer)
// are the library's own and run without entering Python at all. The replay
// holds the GIL: it is single-threaded and calls back into Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "binding.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/sim/alibaba.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

namespace bs = zeus::batch_size;
namespace sim = zeus::sim;
using zeus::ErrorCode;
using zeus::throw_error;

// A Simulator's traces: one power trace, named after its GPU when the file
// name says it (summary_power_<gpu>.csv), else "trace".
struct Traces {
  sim::TraceSet set;
  std::string gpu;
  sim::WorkloadTrace workload(const sim::WorkloadSpec& spec) const {
    return set.workload(gpu, spec);
  }
};

std::string describe(const py::handle& value) { return py::str(py::repr(value)); }

// An int from Python (int, numpy integer; not bool, not None); `what` says
// what the value was meant to be.
long long as_integer(const py::handle& value, const std::string& what) {
  if (value.is_none())
    throw_error(ErrorCode::kInvalidArgument, "returned None where " + what + " is required");
  if (py::isinstance<py::bool_>(value) || !py::hasattr(value, "__index__")) {
    throw_error(ErrorCode::kInvalidArgument,
                "returned " + describe(value) + ", not an integer " + what);
  }
  return value.attr("__index__")().cast<long long>();
}

zeus::Milliwatts watts_to_mw(const py::handle& value) {
  if (py::isinstance<py::bool_>(value) ||
      !(py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) ||
        py::hasattr(value, "__index__"))) {
    throw_error(ErrorCode::kInvalidArgument,
                "returned " + describe(value) + ", not a power limit in watts");
  }
  const double w = value.cast<double>();
  if (!std::isfinite(w) || w <= 0 || w > 1e6) {
    throw_error(ErrorCode::kInvalidArgument,
                "returned power limit " + describe(value) + " W, outside (0, 1e6]");
  }
  return zeus::Milliwatts(static_cast<std::int64_t>(std::llround(w * 1000.0)));
}

// Upstream power limits are integer watts: hand them back as int when whole.
py::object mw_to_watts(zeus::Milliwatts mw) {
  if (mw.value() % 1000 == 0) return py::int_(mw.value() / 1000);
  return py::float_(static_cast<double>(mw.value()) / 1000.0);
}

// A Python exception that is not an Exception (KeyboardInterrupt, SystemExit,
// GeneratorExit): the user stopping the run, not a policy's bug. The C++
// replay turns every std::exception from a policy into a zeus::Error naming
// the policy; this type is not one, so it passes through the replay
// untouched and is raised again as itself at the binding's edge.
struct PythonStop {
  py::error_already_set error;
};

// Calls into a Python policy; a BaseException that is not an Exception
// leaves as PythonStop, everything else as it came.
template <class F>
auto call_policy(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_Exception)) throw PythonStop{std::move(e)};
    throw;
  }
}

// Runs a replay that calls Python policies; re-raises a PythonStop as the
// Python exception it carries.
template <class F>
auto raising_stops(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (PythonStop& stop) {
    throw std::move(stop.error);
  }
}

// A Python BatchSizeOptimizer for one job.
class PyBatchSize final : public bs::BatchSizePolicy {
 public:
  PyBatchSize(py::object bso, py::object job) : bso_(std::move(bso)), job_(std::move(job)) {}
  bs::BatchSizeChoice predict() override {
    const long long b =
        as_integer(call_policy([&] { return bso_.attr("predict")(job_); }), "batch size");
    if (b <= 0 || b > sim::kMaxTraceBatchSize) {
      throw_error(ErrorCode::kInvalidArgument, "returned batch size " + std::to_string(b) +
                                                   ", which is not a positive batch size");
    }
    return {++next_id_, static_cast<int>(b), bs::TrialKind::kExploration};
  }
  void observe(const bs::BatchSizeChoice& c, zeus::Joules cost, bool converged) override {
    call_policy([&] { return bso_.attr("observe")(job_, c.batch_size, cost.value(), converged); });
  }

 private:
  py::object bso_, job_;
  std::int64_t next_id_ = 0;
};

// A Python PowerLimitOptimizer for one job.
class PyPowerLimit final : public bs::PowerLimitPolicy {
 public:
  PyPowerLimit(py::object plo, py::object job) : plo_(std::move(plo)), job_(std::move(job)) {}
  std::optional<zeus::Milliwatts> predict(int batch_size) override {
    py::object r = call_policy([&] { return plo_.attr("predict")(job_, batch_size); });
    if (r.is_none()) return std::nullopt;
    return watts_to_mw(r);
  }
  void observe(int batch_size, zeus::Milliwatts pl, zeus::Joules epoch_cost) override {
    call_policy([&] {
      return plo_.attr("observe")(job_, batch_size, mw_to_watts(pl), epoch_cost.value());
    });
  }

 private:
  py::object plo_, job_;
};

// A built-in policy half used from Python (PruningGTSBatchSizeOptimizer's
// register_job/predict/observe): the library's policy for one job. Python
// observes by batch size; the oldest choice in flight at that size is the one
// that ended.
class BatchSizeHandle {
 public:
  BatchSizeHandle(const std::string& name, const bs::PolicyContext& c)
      : policy_(bs::PolicyRegistry::global().find(name).make(c)) {}
  int predict() {
    const auto choice = policy_.batch_size->predict();
    in_flight_.push_back(choice);
    return choice.batch_size;
  }
  void observe(int batch_size, double cost, bool converged) {
    bs::BatchSizeChoice c{0, batch_size, bs::TrialKind::kConcurrent};
    for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it) {
      if (it->batch_size == batch_size) {
        c = *it;
        in_flight_.erase(it);
        break;
      }
    }
    policy_.batch_size->observe(c, zeus::Joules(cost), converged);
  }

 private:
  bs::Policy policy_;
  std::deque<bs::BatchSizeChoice> in_flight_;
};

class PowerLimitHandle {
 public:
  PowerLimitHandle() : policy_(bs::make_jit_power_limit_policy()) {}
  std::optional<py::object> predict(int batch_size) {
    const auto pl = policy_->predict(batch_size);
    if (!pl) return std::nullopt;
    return mw_to_watts(*pl);
  }
  void observe(int batch_size, const py::handle& power_limit, double cost) {
    policy_->observe(batch_size, watts_to_mw(power_limit), zeus::Joules(cost));
  }

 private:
  std::unique_ptr<bs::PowerLimitPolicy> policy_;
};

// The knobs a built-in Python policy carries (its `_zeuscpp_policy` and
// `_zeuscpp_knobs()`), applied to the replay's context.
bs::PolicyContext with_knobs(bs::PolicyContext c, const py::dict& knobs) {
  for (auto [key, value] : knobs) {
    const std::string k = py::str(key);
    if (k == "seed") {
      c.seed = static_cast<std::uint64_t>(as_integer(value, "seed"));
    } else if (k == "window_size") {
      c.window_size = static_cast<int>(as_integer(value, "window size"));
    } else if (k == "prior_mean") {
      c.prior_mean = value.cast<double>();
    } else if (k == "prior_precision") {
      c.prior_precision = value.cast<double>();
    } else {
      throw_error(ErrorCode::kInvalidArgument, "unknown built-in policy knob '" + k + "'");
    }
  }
  return c;
}

bool is_builtin(const py::handle& obj) {
  return py::hasattr(obj, "_zeuscpp_policy") && !obj.attr("_zeuscpp_policy").is_none();
}

std::string policy_name(const py::handle& obj) {
  try {
    return py::str(obj.attr("name"));
  } catch (py::error_already_set&) {
    return py::str(py::type::handle_of(obj).attr("__name__"));
  }
}

sim::WorkloadSpec spec_of(const py::object& job) {
  py::object default_bs = job.attr("default_bs");
  if (default_bs.is_none()) {
    throw_error(ErrorCode::kInvalidArgument,
                "the job has no default_bs: give Job(..., default_bs=...) the batch size to "
                "start from");
  }
  sim::WorkloadSpec spec;
  spec.dataset = py::str(job.attr("dataset"));
  spec.network = py::str(job.attr("network"));
  spec.optimizer = py::str(job.attr("optimizer"));
  spec.target_metric = job.attr("target_metric").cast<double>();
  spec.max_epochs = static_cast<int>(as_integer(job.attr("max_epochs"), "max_epochs"));
  spec.paper_default_batch_size = static_cast<int>(as_integer(default_bs, "default_bs"));
  return spec;
}

struct Replay {
  sim::WorkloadTrace trace;
  bs::Policy policy;
  std::string name;
  sim::SimOptions options;
};

// The replay of `job` with (bso, plo): upstream's register_job call, then
// the policy halves (built-in or Python).
Replay prepare(const Traces& traces, const py::object& job, int num_recurrence, double beta,
               double eta, std::uint64_t seed, const py::object& bso, const py::object& plo) {
  const sim::WorkloadSpec spec = spec_of(job);
  Replay r;
  r.trace = traces.workload(spec);
  r.trace.num_recurrence = num_recurrence;
  r.options.eta = eta;
  r.options.beta = std::isinf(beta) ? std::numeric_limits<double>::infinity() : beta;
  r.options.seed = seed;
  const bs::PolicyContext ctx = sim::policy_context(r.trace, r.options);
  if (is_builtin(bso)) {
    const std::string name = py::str(bso.attr("_zeuscpp_policy"));
    r.policy.batch_size = bs::PolicyRegistry::global()
                              .find(name)
                              .make(with_knobs(ctx, bso.attr("_zeuscpp_knobs")()))
                              .batch_size;
  } else {
    bso.attr("register_job")(job, py::cast(r.trace.batch_size_list()));
    r.policy.batch_size = std::make_unique<PyBatchSize>(bso, job);
  }
  if (is_builtin(plo)) {
    r.policy.power_limit = bs::make_jit_power_limit_policy();
  } else {
    r.policy.power_limit = std::make_unique<PyPowerLimit>(plo, job);
  }
  r.name = policy_name(bso) + " + " + policy_name(plo);
  return r;
}

// Upstream's HistoryEntry fields: (bs, pl, energy, reached, time).
py::list history(const sim::SimResult& res) {
  py::list out;
  for (const auto& run : res.runs) {
    if (run.could_not_run) continue;  // upstream leaves them out of the history
    out.append(py::make_tuple(run.batch_size, mw_to_watts(run.power_limit), run.energy.value(),
                              run.reached, run.time.count()));
  }
  return out;
}

void bind_legacy(py::module_& core) {
  py::module_ m = core.def_submodule("legacy", "The trace simulator (zeus._legacy).");

  py::class_<Traces>(m, "TraceTables")
      .def(py::init([](const std::string& train_csv, const std::string& power_csv,
                       const std::string& source, const std::string& gpu) {
             return Traces{sim::TraceSet::parse(train_csv, {{gpu, power_csv}}, source), gpu};
           }),
           py::arg("train_csv"), py::arg("power_csv"), py::arg("source"), py::arg("gpu"),
           "The train and power trace contents (CSV text), joined for replay.");

  py::class_<BatchSizeHandle>(m, "BatchSizeHandle")
      .def(py::init([](const std::string& name, const std::vector<int>& batch_sizes, int default_bs,
                       const py::dict& knobs) {
             bs::PolicyContext c;
             c.job = "registered from Python";
             c.batch_sizes = batch_sizes;
             std::sort(c.batch_sizes.begin(), c.batch_sizes.end());
             c.default_batch_size = default_bs;
             return std::make_unique<BatchSizeHandle>(name, with_knobs(c, knobs));
           }),
           py::arg("name"), py::arg("batch_sizes"), py::arg("default_bs"), py::arg("knobs"))
      .def("predict", &BatchSizeHandle::predict)
      .def("observe", &BatchSizeHandle::observe, py::arg("batch_size"), py::arg("cost"),
           py::arg("converged"));

  py::class_<PowerLimitHandle>(m, "PowerLimitHandle")
      .def(py::init<>())
      .def("predict", &PowerLimitHandle::predict, py::arg("batch_size"))
      .def("observe", &PowerLimitHandle::observe, py::arg("batch_size"), py::arg("power_limit"),
           py::arg("cost"));

  m.def(
      "simulate_one_job",
      [](const Traces& traces, const py::object& job, int num_recurrence, double beta, double eta,
         std::uint64_t seed, const py::object& bso, const py::object& plo) {
        if (num_recurrence < 1) {
          throw_error(ErrorCode::kInvalidArgument,
                      "num_recurrence must be at least 1, got " + std::to_string(num_recurrence));
        }
        Replay r = prepare(traces, job, num_recurrence, beta, eta, seed, bso, plo);
        return history(raising_stops(
            [&] { return sim::simulate(r.trace, r.policy, r.name, true, r.options); }));
      },
      py::arg("traces"), py::arg("job"), py::arg("num_recurrence"), py::arg("beta"), py::arg("eta"),
      py::arg("seed"), py::arg("bso"), py::arg("plo"));

  m.def(
      "simulate_one_alibaba_group",
      [](const Traces& traces, const py::object& job, const std::string& group,
         const std::vector<std::vector<double>>& jobs, double beta, double eta, std::uint64_t seed,
         const py::object& bso, const py::object& plo) {
        sim::JobGroup g;
        g.group = group;
        g.dataset = py::str(job.attr("dataset"));
        for (const auto& row : jobs) {
          if (row.size() != 3 || !(row[1] > row[0]) || !(row[2] > 0)) {
            throw_error(ErrorCode::kInvalidArgument,
                        "each group row needs start_time < end_time and runtime_ratio > 0");
          }
          g.jobs.push_back({row[0], row[1], row[2]});
        }
        Replay r = prepare(traces, job, 1, beta, eta, seed, bso, plo);
        return history(raising_stops(
            [&] { return sim::simulate_group(r.trace, g, r.policy, r.name, true, r.options); }));
      },
      py::arg("traces"), py::arg("job"), py::arg("group"), py::arg("jobs"), py::arg("beta"),
      py::arg("eta"), py::arg("seed"), py::arg("bso"), py::arg("plo"));

  m.def(
      "read_alibaba_groups",
      [](const std::string& path) {
        py::list out;
        for (const auto& g : sim::read_group_trace(path)) {
          py::list rows;
          for (const auto& j : g.jobs)
            rows.append(py::make_tuple(j.start_time, j.end_time, j.runtime_ratio));
          out.append(py::make_tuple(g.group, g.dataset, rows));
        }
        return out;
      },
      py::arg("path"), "(group, dataset, [(start_time, end_time, runtime_ratio), ...]) per group.");
  m.def(
      "num_recurrence",
      [](const Traces& traces, const py::object& job) {
        return traces.workload(spec_of(job)).num_recurrence;
      },
      py::arg("traces"), py::arg("job"),
      "2 |B| |P| of the job on these traces (run_single.py's default).");
  m.def(
      "adler32", [](const std::string& text) { return sim::adler32(text); }, py::arg("text"));
}

ZEUSCPP_BINDING(kOrderOptimizer, bind_legacy);

}  // namespace
}  // namespace zeuscpp
