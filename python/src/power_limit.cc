// zeuscpp.optimizer.power_limit: the library's GlobalPowerLimitOptimizer and
// selectors. Python objects plug into the library's seams through two small
// adapters: any object with select(measurements) -> W is a PowerLimitSelector,
// and any object with all_reduce_sum/all_reduce_max/rank/world_size is a
// Reducer (torch.distributed's lives in zeuscpp/utils/framework.py). Both take
// the GIL for the call, since the optimizer runs with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "binding.h"
#include "monitor_binding.h"
#include "python_window_monitor.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/reducer.h"
#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

// Watts as the Python Zeus writes them: an int when whole.
py::object watts_object(zeus::Milliwatts mw) {
  if (mw.value() % 1000 == 0) return py::int_(mw.value() / 1000);
  return py::float_(zeus::to_watts(mw).value());
}

zeus::Milliwatts milliwatts_from(const py::handle& w, const char* what) {
  if (!py::isinstance<py::int_>(w) && !py::isinstance<py::float_>(w)) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{} must be a power limit in W (a number), got {}", what,
                                  py::repr(w).cast<std::string>()));
  }
  const double value = w.cast<double>();
  if (!std::isfinite(value)) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{} must be a finite power limit in W, got {}", what, value));
  }
  return zeus::to_milliwatts(zeus::Watts(value));
}

std::vector<zeus::PowerLimitMeasurement> measurements_from(const py::iterable& items) {
  std::vector<zeus::PowerLimitMeasurement> out;
  for (auto item : items) out.push_back(item.cast<zeus::PowerLimitMeasurement>());
  return out;
}

std::shared_ptr<py::object> hold(py::object obj) {
  return std::shared_ptr<py::object>(new py::object(std::move(obj)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

// A Python selector (upstream's OptimumSelector subclasses): select() gets
// the measurements in W and returns the chosen limit in W, which must be one
// of the measured limits.
class PythonSelector final : public zeus::PowerLimitSelector {
 public:
  explicit PythonSelector(py::object selector)
      : name_(py::type::of(selector).attr("__name__").cast<std::string>()),
        selector_(hold(std::move(selector))) {}

  zeus::Milliwatts select(std::span<const zeus::PowerLimitMeasurement> m) const override {
    if (m.empty()) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        "no power-limit measurements to choose from");
    }
    py::gil_scoped_acquire gil;
    py::list items;
    for (const auto& x : m) items.append(py::cast(x));
    const py::object chosen = selector_->attr("select")(items);
    const zeus::Milliwatts limit =
        milliwatts_from(chosen, fmt::format("{}.select()'s result", name_).c_str());
    for (const auto& x : m) {
      if (x.power_limit == limit) return limit;
    }
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{}.select() returned {} W, which is not one of the measured "
                                  "power limits; return the power_limit of one of the measurements",
                                  name_, zeus::to_watts(limit).value()));
  }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  std::shared_ptr<py::object> selector_;
};

// A Python reducer. rank and world size are read once (they do not change
// during a job).
class PythonReducer final : public zeus::Reducer {
 public:
  explicit PythonReducer(py::object reducer)
      : rank_(reducer.attr("rank")().cast<int>()),
        world_size_(reducer.attr("world_size")().cast<int>()),
        reducer_(hold(std::move(reducer))) {
    if (world_size_ < 1 || rank_ < 0 || rank_ >= world_size_) {
      zeus::throw_error(
          zeus::ErrorCode::kInvalidArgument,
          fmt::format("reducer reports rank {} of world size {}", rank_, world_size_));
    }
  }
  double all_reduce_sum(double local) override { return call("all_reduce_sum", local); }
  double all_reduce_max(double local) override { return call("all_reduce_max", local); }
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

 private:
  double call(const char* method, double local) {
    py::gil_scoped_acquire gil;
    return reducer_->attr(method)(local).cast<double>();
  }
  int rank_;
  int world_size_;
  std::shared_ptr<py::object> reducer_;
};

// Core of zeuscpp.optimizer.power_limit.GlobalPowerLimitOptimizer. The monitor
// is a ZeusMonitor or any object with its methods (PythonWindowMonitor). Members are
// declared so that the optimizer goes first on destruction (it restores the
// GPU settings and may end a window on the monitor it references).
struct OptimizerBinding {
  py::object monitor;                                   // keeps the ZeusMonitor alive
  std::unique_ptr<PythonWindowMonitor> python_monitor;  // for a monitor-like Python object
  py::object selector;                                  // the user's selector object (or None)
  py::object reducer;                                   // the user's reducer object (or None)
  std::shared_ptr<const zeus::PowerLimitSelector> core_selector;
  std::unique_ptr<zeus::Reducer> core_reducer;
  std::unique_ptr<zeus::GlobalPowerLimitOptimizer> impl;

  bool save_error_warned = false;

  zeus::GlobalPowerLimitOptimizer& get() const {
    if (!impl) {
      zeus::throw_error(zeus::ErrorCode::kFailedPrecondition,
                        "the GlobalPowerLimitOptimizer is not initialized");
    }
    return *impl;
  }

  // Runs one optimizer hook without the GIL; then, with it, says once (a
  // RuntimeWarning, not only a log line) when the profile could not be saved:
  // the next run would profile again.
  template <class Hook>
  void step(Hook hook) {
    {
      ReleaseGil release;
      hook(get());
    }
    if (save_error_warned || impl->profile_save_error().empty()) return;
    save_error_warned = true;
    const std::string text =
        "the power-limit profile was not saved (the chosen limit stands, "
        "but the next run profiles again): " +
        impl->profile_save_error();
    if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0) throw py::error_already_set();
  }
};

std::shared_ptr<const zeus::PowerLimitSelector> selector_from(const py::object& selector) {
  if (selector.is_none()) return nullptr;
  if (py::isinstance<zeus::PowerLimitSelector>(selector)) {
    return selector.cast<std::shared_ptr<zeus::PowerLimitSelector>>();
  }
  if (py::hasattr(selector, "_core_selector")) {
    const py::object core = selector.attr("_core_selector");
    if (py::isinstance<zeus::PowerLimitSelector>(core)) {
      return core.cast<std::shared_ptr<zeus::PowerLimitSelector>>();
    }
  }
  if (!py::hasattr(selector, "select") || !PyCallable_Check(selector.attr("select").ptr())) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("optimum_selector must be an OptimumSelector (an object with "
                                  "select(measurements) -> W), got {}",
                                  py::repr(selector).cast<std::string>()));
  }
  return std::make_shared<PythonSelector>(selector);
}

std::unique_ptr<OptimizerBinding> make_optimizer(py::object monitor, py::object selector,
                                                 int wait_steps, int warmup_steps,
                                                 int profile_steps, double pl_step,
                                                 py::object profile_path, bool dry_run,
                                                 bool observer_mode, py::object reducer) {
  auto b = std::make_unique<OptimizerBinding>();
  zeus::WindowMonitor* window_monitor = nullptr;
  if (is_energy_monitor(monitor)) {
    window_monitor = &energy_monitor_of(monitor);
  } else {
    b->python_monitor = std::make_unique<PythonWindowMonitor>(monitor, device_inventory());
    window_monitor = b->python_monitor.get();
  }
  b->monitor = monitor;
  b->selector = selector;
  b->reducer = reducer;
  b->core_selector = selector_from(selector);
  zeus::GlobalPowerLimitOptimizerOptions options;
  options.selector = b->core_selector;
  options.wait_steps = wait_steps;
  options.warmup_steps = warmup_steps;
  options.profile_steps = profile_steps;
  options.pl_step = zeus::Watts(pl_step);
  if (!profile_path.is_none()) options.profile_path = fspath(profile_path);
  options.dry_run = dry_run;
  options.observer_mode = observer_mode;
  if (!reducer.is_none()) {
    b->core_reducer = std::make_unique<PythonReducer>(reducer);
    options.reducer = b->core_reducer.get();
  }
  {
    ReleaseGil release;
    b->impl =
        std::make_unique<zeus::GlobalPowerLimitOptimizer>(*window_monitor, std::move(options));
  }
  return b;
}

struct OptimizerState {
  std::string phase;
  py::object power_limit;  // W
  int steps;
};

void bind_power_limit(py::module_& core) {
  py::module_ m = core.def_submodule("optimizer", "Optimizer bindings.");

  py::class_<zeus::PowerLimitMeasurement>(
      m, "PowerLimitMeasurement",
      "Energy (J) and time (s) of the same amount of training at one power limit (W).")
      .def(py::init([](const py::object& power_limit, double energy, double time) {
             return zeus::PowerLimitMeasurement{milliwatts_from(power_limit, "power_limit"),
                                                zeus::Joules(energy), zeus::Seconds(time)};
           }),
           py::arg("power_limit"), py::arg("energy"), py::arg("time"))
      .def_property_readonly(
          "power_limit",
          [](const zeus::PowerLimitMeasurement& x) { return watts_object(x.power_limit); },
          "Power limit (W).")
      .def_property_readonly(
          "energy", [](const zeus::PowerLimitMeasurement& x) { return x.energy.value(); },
          "Energy (J), summed over GPUs and ranks.")
      .def_property_readonly(
          "time", [](const zeus::PowerLimitMeasurement& x) { return x.time.count(); },
          "Time (s), the slowest rank's.")
      .def("__eq__",
           [](const zeus::PowerLimitMeasurement& a, const py::object& other) {
             if (!py::isinstance<zeus::PowerLimitMeasurement>(other)) return false;
             const auto& b = other.cast<const zeus::PowerLimitMeasurement&>();
             return a.power_limit == b.power_limit && a.energy == b.energy && a.time == b.time;
           })
      .def("__repr__", [](const zeus::PowerLimitMeasurement& x) {
        return fmt::format("PowerLimitMeasurement(power_limit={}, energy={}, time={})",
                           py::repr(watts_object(x.power_limit)).cast<std::string>(),
                           py::repr(py::float_(x.energy.value())).cast<std::string>(),
                           py::repr(py::float_(x.time.count())).cast<std::string>());
      });

  py::class_<zeus::PowerLimitSelector, std::shared_ptr<zeus::PowerLimitSelector>>(
      m, "Selector", "A selector implemented in the library.")
      .def(
          "select",
          [](const zeus::PowerLimitSelector& s, const py::iterable& measurements) {
            const auto list = measurements_from(measurements);
            return watts_object(s.select(list));
          },
          py::arg("measurements"), "The chosen power limit (W) among the measurements.")
      .def("name", &zeus::PowerLimitSelector::name, "For logs, e.g. 'zeus-cost(eta=0.5)'.");
  py::class_<zeus::EnergySelector, zeus::PowerLimitSelector, std::shared_ptr<zeus::EnergySelector>>(
      m, "EnergySelector")
      .def(py::init<>());
  py::class_<zeus::TimeSelector, zeus::PowerLimitSelector, std::shared_ptr<zeus::TimeSelector>>(
      m, "TimeSelector")
      .def(py::init<>());
  py::class_<zeus::ZeusCostSelector, zeus::PowerLimitSelector,
             std::shared_ptr<zeus::ZeusCostSelector>>(m, "ZeusCostSelector")
      .def(py::init<double, int>(), py::arg("eta_knob"), py::arg("world_size") = 1);
  py::class_<zeus::MaxSlowdownSelector, zeus::PowerLimitSelector,
             std::shared_ptr<zeus::MaxSlowdownSelector>>(m, "MaxSlowdownSelector")
      .def(py::init<double>(), py::arg("factor"));

  py::class_<OptimizerState>(m, "OptimizerState",
                             "Where the optimizer is: phase ('ready', 'warmup', 'profiling', "
                             "'done'), the power limit (W) it concerns, and steps left.")
      .def_readonly("phase", &OptimizerState::phase, "'ready', 'warmup', 'profiling' or 'done'.")
      .def_readonly("power_limit", &OptimizerState::power_limit,
                    "The power limit (W) the phase concerns.")
      .def_readonly("steps", &OptimizerState::steps, "Steps left in the phase.")
      .def("__repr__", [](const OptimizerState& s) {
        return fmt::format("OptimizerState(phase='{}', power_limit={}, steps={})", s.phase,
                           py::repr(s.power_limit).cast<std::string>(), s.steps);
      });

  using B = OptimizerBinding;
  py::class_<OptimizerBinding>(m, "GlobalPowerLimitOptimizer", py::dynamic_attr(),
                               "Core of zeuscpp.optimizer.power_limit.GlobalPowerLimitOptimizer.")
      .def(py::init(&make_optimizer), py::arg("monitor"), py::arg("optimum_selector"),
           py::arg("wait_steps"), py::arg("warmup_steps"), py::arg("profile_steps"),
           py::arg("pl_step"), py::arg("profile_path"), py::arg("dry_run"),
           py::arg("observer_mode"), py::arg("reducer"))
      .def(
          "on_step_begin",
          [](B& b) { b.step([](zeus::GlobalPowerLimitOptimizer& o) { o.on_step_begin(); }); },
          "Call before every training step.")
      .def(
          "on_epoch_end",
          [](B& b) { b.step([](zeus::GlobalPowerLimitOptimizer& o) { o.on_epoch_end(); }); },
          "Call after every epoch.")
      .def_property_readonly(
          "state",
          [](const B& b) {
            const auto s = b.get().state();
            return OptimizerState{zeus::phase_name(s.phase), watts_object(s.power_limit), s.steps};
          },
          "Current phase, the limit it concerns and steps left.")
      .def_property_readonly(
          "power_limits",
          [](const B& b) {
            std::vector<long long> out;
            for (auto l : b.get().candidate_limits()) out.push_back(l.value());
            return out;
          },
          "Candidate limits in mW, highest first (as upstream's power_limits).")
      .def_property_readonly(
          "current_power_limit", [](const B& b) { return b.get().applied_power_limit().value(); },
          "The limit last set on the GPUs (mW; in dry run: would have set).")
      .def_property_readonly(
          "measurements",
          [](const B& b) {
            py::list out;
            for (const auto& x : b.get().measurements()) out.append(py::cast(x));
            return out;
          },
          "Completed measurements, in profiling order.")
      .def_property_readonly(
          "optimal_power_limit",
          [](const B& b) -> py::object {
            const auto l = b.get().optimal_power_limit();
            return l ? watts_object(*l) : py::none();
          },
          "The selector's choice (W) once done, else None.")
      .def_property_readonly(
          "done", [](const B& b) { return b.get().done(); }, "Whether profiling is over.")
      .def_property_readonly(
          "selector_name", [](const B& b) { return b.get().selector().name(); },
          "The selector in use, e.g. 'zeus-cost(eta=0.5)'.")
      .def_property_readonly(
          "dry_run", [](const B& b) { return b.get().dry_run(); }, "Dry-run mode.")
      .def_property_readonly(
          "observer_mode", [](const B& b) { return b.get().observer_mode(); }, "Observer mode.")
      .def_property_readonly(
          "saving",
          [](const B& b) -> py::object {
            const auto s = b.get().saving();
            if (!s) return py::none();
            py::dict d;
            d["chosen_power_limit"] = watts_object(s->chosen);
            d["maximum_power_limit"] = watts_object(s->maximum);
            d["energy_saving_fraction"] = s->energy_saving_fraction();
            d["time_change_fraction"] = s->time_change_fraction();
            return d;
          },
          "Energy saved and time changed at the chosen limit against the maximum limit, from "
          "the profile (None before the end).");

  m.def(
      "window_name",
      [](const py::object& w) {
        return zeus::GlobalPowerLimitOptimizer::window_name(milliwatts_from(w, "power_limit"));
      },
      py::arg("power_limit"), "The profiling window's name for a limit (W).");
}

}  // namespace

ZEUSCPP_BINDING(kOrderOptimizer, bind_power_limit);

}  // namespace zeuscpp
