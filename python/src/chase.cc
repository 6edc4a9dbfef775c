// zeuscpp.optimizer.power_limit.ChasePowerLimitOptimizer: the library's
// carbon/price-aware ChaseController around a GlobalPowerLimitOptimizer (the
// core shared with power_limit.cc). The grid signal comes from a provider of
// zeuscpp.monitor.carbon / price, a signal CSV file, or a Python callable
// (scripted signals); a callable's exception is a failed period, as a
// provider's network error is.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "binding.h"
#include "power_limit_binding.h"
#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/optimizer/power_limit/carbon_aware/chase_controller.h"
#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"
#include "zeus/optimizer/power_limit/carbon_aware/provider_source.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_source.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

zeus::carbon_aware::SignalKind parse_kind(const std::string& kind) {
  if (kind == "carbon") return zeus::carbon_aware::SignalKind::kCarbon;
  if (kind == "price") return zeus::carbon_aware::SignalKind::kPrice;
  zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                    fmt::format("kind must be 'carbon' or 'price', got '{}'", kind));
}

// signal(start_utc, period_s) -> the value over that period. An Exception
// becomes a zeus::Error (the controller keeps the last limit and retries next
// period); KeyboardInterrupt and SystemExit pass through.
class PythonSignalSource final : public zeus::carbon_aware::SignalSource {
 public:
  PythonSignalSource(py::object fn, zeus::carbon_aware::SignalKind kind)
      : description_(py::repr(fn).cast<std::string>()), kind_(kind), fn_(hold_object(fn)) {}

  double value(std::int64_t start_utc, std::int64_t period_s) override {
    py::gil_scoped_acquire gil;
    double v = 0;
    try {
      v = (*fn_)(start_utc, period_s).cast<double>();
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_Exception)) throw;
      zeus::throw_error(zeus::ErrorCode::kIo,
                        fmt::format("the signal {} raised {}: {}", description_,
                                    e.type().attr("__name__").cast<std::string>(),
                                    py::str(e.value()).cast<std::string>()));
    } catch (const py::cast_error&) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        fmt::format("the signal {} must return a number", description_));
    }
    if (!std::isfinite(v)) {
      zeus::throw_error(
          zeus::ErrorCode::kInvalidArgument,
          fmt::format("the signal {} returned {}, not a finite number", description_, v));
    }
    return v;
  }
  zeus::carbon_aware::SignalKind kind() const override { return kind_; }
  std::string description() const override { return description_; }

 private:
  std::string description_;
  zeus::carbon_aware::SignalKind kind_;
  std::shared_ptr<py::object> fn_;
};

// Members in this order so that the controller goes first on destruction,
// then its source, then the optimizer (which restores the GPU settings).
struct ChaseBinding {
  std::unique_ptr<OptimizerBinding> plo;
  py::object signal;  // the user's object, kept alive
  std::shared_ptr<zeus::carbon::HourlyRateProvider> provider;
  std::unique_ptr<zeus::carbon_aware::SignalSource> source;
  std::unique_ptr<zeus::carbon_aware::ChaseController> controller;
  int failures_seen = 0;  // what the last hook left, to tell a new outage
  std::size_t decisions_seen = 0;
  bool in_outage = false;

  zeus::carbon_aware::ChaseController& get() const {
    if (!controller) {
      zeus::throw_error(zeus::ErrorCode::kFailedPrecondition,
                        "the ChasePowerLimitOptimizer is not initialized");
    }
    return *controller;
  }

  template <class Hook>
  void step(Hook hook) {
    auto& c = get();
    plo->step([&](zeus::power_limit::GlobalPowerLimitOptimizer&) { hook(c); });
    warn_on_new_outage();
  }

  // A RuntimeWarning when the source starts failing (once per outage, as the
  // library's log line): the job goes on at the last limit. One step makes at
  // most one decision or one failure.
  void warn_on_new_outage() {
    const auto& c = *controller;
    if (c.decisions().size() > decisions_seen) in_outage = false;
    decisions_seen = c.decisions().size();
    const bool failed = c.failed_periods() > failures_seen;
    failures_seen = c.failed_periods();
    if (!failed || in_outage) return;
    in_outage = true;
    const std::string text =
        fmt::format("chase: no grid signal ({}); keeping {} W and retrying at each period boundary",
                    c.last_error(), zeus::to_watts(plo->get().applied_power_limit()).value());
    if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0) throw py::error_already_set();
  }
};

std::unique_ptr<zeus::carbon_aware::SignalSource> source_from(
    ChaseBinding& b, const py::object& signal, const std::optional<std::string>& unit,
    const std::optional<std::string>& kind) {
  if (py::isinstance<zeus::carbon::HourlyRateProvider>(signal)) {
    if (unit || kind) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        "unit and kind are for signal files and callables; a provider says its "
                        "own unit");
    }
    b.provider = signal.cast<std::shared_ptr<zeus::carbon::HourlyRateProvider>>();
    return std::make_unique<zeus::carbon_aware::ProviderSignalSource>(*b.provider);
  }
  if (py::isinstance<py::str>(signal) || py::hasattr(signal, "__fspath__")) {
    if (kind) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        "a signal file's kind follows its unit; give unit, not kind");
    }
    zeus::carbon_aware::SignalCsvOptions options;
    if (unit) options.unit = *unit;
    const std::string path = fspath(signal);
    ReleaseGil release;
    return std::make_unique<zeus::carbon_aware::GridSignalSource>(
        zeus::carbon_aware::read_signal_csv(path, options));
  }
  if (PyCallable_Check(signal.ptr())) {
    if (!kind) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        "a signal callable needs kind='carbon' or kind='price'");
    }
    return std::make_unique<PythonSignalSource>(signal, parse_kind(*kind));
  }
  zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                    fmt::format("signal must be a carbon-intensity or price provider, a signal "
                                "CSV path, or a callable (start_utc, period_s) -> value; got {}",
                                py::repr(signal).cast<std::string>()));
}

std::unique_ptr<ChaseBinding> make_chase(
    py::object monitor, py::object signal, std::optional<std::string> unit,
    std::optional<std::string> kind, double eta, std::int64_t period_s, std::int64_t history_s,
    std::optional<double> signal_max, std::string forecaster, int refit_periods, int world_size,
    int check_steps, py::object clock, int wait_steps, int warmup_steps, int profile_steps,
    double pl_step, py::object profile_path, bool dry_run, bool observer_mode, py::object reducer) {
  auto b = std::make_unique<ChaseBinding>();
  b->signal = signal;
  b->source = source_from(*b, signal, unit, kind);
  zeus::carbon_aware::ChaseControllerOptions options;
  options.eta = eta;
  options.period_s = period_s;
  options.history_s = history_s;
  options.signal_max = signal_max;
  options.forecaster = std::move(forecaster);
  options.refit_periods = refit_periods;
  options.world_size = world_size;
  options.check_steps = check_steps;
  if (!clock.is_none()) {
    options.unix_now = [fn = hold_object(clock)] {
      py::gil_scoped_acquire gil;
      return (*fn)().cast<double>();
    };
  }
  b->plo = make_optimizer(monitor, py::none(), wait_steps, warmup_steps, profile_steps, pl_step,
                          profile_path, dry_run, observer_mode, reducer);
  options.reducer = b->plo->core_reducer.get();
  ReleaseGil release;
  b->controller =
      std::make_unique<zeus::carbon_aware::ChaseController>(*b->plo->impl, *b->source, options);
  return b;
}

py::tuple decision_tuple(const zeus::carbon_aware::ChaseDecision& d) {
  return py::make_tuple(d.period_start_utc, d.signal_seen, d.forecast, d.eta_eff,
                        watts_object(d.power_limit));
}

void bind_chase(py::module_& core) {
  py::module_ m = py::hasattr(core, "optimizer")
                      ? py::reinterpret_borrow<py::module_>(core.attr("optimizer"))
                      : core.def_submodule("optimizer", "Optimizer bindings.");
  using B = ChaseBinding;
  py::class_<B>(m, "ChasePowerLimitOptimizer", py::dynamic_attr(),
                "Core of zeuscpp.optimizer.power_limit.ChasePowerLimitOptimizer.")
      .def(py::init(&make_chase), py::arg("monitor"), py::arg("signal"), py::arg("unit"),
           py::arg("kind"), py::arg("eta"), py::arg("period_s"), py::arg("history_s"),
           py::arg("signal_max"), py::arg("forecaster"), py::arg("refit_periods"),
           py::arg("world_size"), py::arg("check_steps"), py::arg("clock"), py::arg("wait_steps"),
           py::arg("warmup_steps"), py::arg("profile_steps"), py::arg("pl_step"),
           py::arg("profile_path"), py::arg("dry_run"), py::arg("observer_mode"),
           py::arg("reducer"))
      .def(
          "on_step_begin",
          [](B& b) { b.step([](zeus::carbon_aware::ChaseController& c) { c.on_step_begin(); }); },
          "Call before every training step.")
      .def(
          "on_epoch_end",
          [](B& b) { b.step([](zeus::carbon_aware::ChaseController& c) { c.on_epoch_end(); }); },
          "Call after every epoch.")
      .def_property_readonly(
          "_decisions",
          [](const B& b) {
            py::list out;
            for (const auto& d : b.get().decisions()) out.append(decision_tuple(d));
            return out;
          },
          "(period start Unix s, signal seen, forecast, eta_eff, limit W) per decision.")
      .def(
          "decisions_csv", [](const B& b) { return b.get().decisions_csv(); },
          "The decisions as CSV: period_start_utc,signal_seen,forecast,eta_eff,power_limit_w.")
      .def_property_readonly(
          "failed_periods", [](const B& b) { return b.get().failed_periods(); },
          "Periods where the signal failed and the last limit was kept.")
      .def_property_readonly(
          "last_error",
          [](const B& b) -> py::object {
            const auto& e = b.get().last_error();
            return e.empty() ? py::object(py::none()) : py::object(py::str(e));
          },
          "Why the last failed period failed; None once a decision succeeds again.")
      .def_property_readonly(
          "world_size", [](const B& b) { return b.get().world_size(); },
          "The job's GPU count (MaxPower = the largest limit times this).")
      .def_property_readonly(
          "forecaster_name",
          [](const B& b) -> py::object {
            const auto* f = b.get().forecaster();
            return f ? py::object(py::str(f->name())) : py::object(py::none());
          },
          "The fitted forecaster's name (None before the first decision, and on ranks > 0).")
      .def_property_readonly(
          "forecaster_mape",
          [](const B& b) -> py::object {
            const auto* f = b.get().forecaster();
            if (!f || !f->mape()) return py::none();
            return py::float_(*f->mape());
          },
          "The forecaster's one-step MAPE (%) on its history, or None.")
      .def_property_readonly(
          "signal_kind",
          [](const B& b) {
            return std::string(zeus::carbon_aware::signal_kind_name(b.source->kind()));
          },
          "'carbon' or 'price'.")
      .def_property_readonly(
          "signal_description", [](const B& b) { return b.source->description(); },
          "Where the signal comes from.")
      .def_property_readonly(
          "_phase",
          [](const B& b) {
            const auto s = b.plo->get().state();
            return py::make_tuple(zeus::power_limit::phase_name(s.phase),
                                  watts_object(s.power_limit), s.steps);
          },
          "The optimizer's (phase, power limit W, steps left).")
      .def_property_readonly(
          "measurements",
          [](const B& b) {
            py::list out;
            for (const auto& x : b.plo->get().measurements()) out.append(py::cast(x));
            return out;
          },
          "The profile: completed measurements, in profiling order.")
      .def_property_readonly(
          "current_power_limit",
          [](const B& b) { return b.plo->get().applied_power_limit().value(); },
          "The limit last set on the GPUs (mW; in dry run: would have set).")
      .def_property_readonly(
          "done", [](const B& b) { return b.plo->get().done(); }, "Whether profiling is over.")
      .def_property_readonly(
          "dry_run", [](const B& b) { return b.plo->get().dry_run(); }, "Dry-run mode.")
      .def_property_readonly(
          "observer_mode", [](const B& b) { return b.plo->get().observer_mode(); },
          "Observer mode.");
}

}  // namespace

ZEUSCPP_BINDING(kOrderOptimizer + 1, bind_chase);

}  // namespace zeuscpp
