// The power-limit optimizer's Python-facing core (see power_limit_binding.h).
#include "power_limit_binding.h"

#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "monitor_binding.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

// A Python selector (upstream's OptimumSelector subclasses): select() gets
// the measurements in W and returns the chosen limit in W, which must be one
// of the measured limits.
class PythonSelector final : public zeus::power_limit::PowerLimitSelector {
 public:
  explicit PythonSelector(py::object selector)
      : name_(py::type::of(selector).attr("__name__").cast<std::string>()),
        selector_(hold_object(std::move(selector))) {}

  zeus::Milliwatts select(
      std::span<const zeus::power_limit::PowerLimitMeasurement> m) const override {
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

std::shared_ptr<const zeus::power_limit::PowerLimitSelector> selector_from(
    const py::object& selector) {
  if (selector.is_none()) return nullptr;
  if (py::isinstance<zeus::power_limit::PowerLimitSelector>(selector)) {
    return selector.cast<std::shared_ptr<zeus::power_limit::PowerLimitSelector>>();
  }
  if (py::hasattr(selector, "_core_selector")) {
    const py::object core = selector.attr("_core_selector");
    if (py::isinstance<zeus::power_limit::PowerLimitSelector>(core)) {
      return core.cast<std::shared_ptr<zeus::power_limit::PowerLimitSelector>>();
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

}  // namespace

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

std::shared_ptr<py::object> hold_object(py::object obj) {
  return std::shared_ptr<py::object>(new py::object(std::move(obj)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

PythonReducer::PythonReducer(py::object reducer)
    : rank_(reducer.attr("rank")().cast<int>()),
      world_size_(reducer.attr("world_size")().cast<int>()),
      reducer_(hold_object(std::move(reducer))) {
  if (world_size_ < 1 || rank_ < 0 || rank_ >= world_size_) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("reducer reports rank {} of world size {}", rank_, world_size_));
  }
}

double PythonReducer::call(const char* method, double local) {
  py::gil_scoped_acquire gil;
  return reducer_->attr(method)(local).cast<double>();
}

void OptimizerBinding::warn_if_profile_unsaved() {
  if (save_error_warned || !impl || impl->profile_save_error().empty()) return;
  save_error_warned = true;
  const std::string text =
      "the power-limit profile was not saved (the chosen limit stands, "
      "but the next run profiles again): " +
      impl->profile_save_error();
  if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0) throw py::error_already_set();
}

std::unique_ptr<OptimizerBinding> make_optimizer(py::object monitor, py::object selector,
                                                 int wait_steps, int warmup_steps,
                                                 int profile_steps, double pl_step,
                                                 py::object profile_path, bool dry_run,
                                                 bool observer_mode, py::object reducer) {
  auto b = std::make_unique<OptimizerBinding>();
  zeus::monitor::WindowMonitor* window_monitor = nullptr;
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
  zeus::power_limit::GlobalPowerLimitOptimizerOptions options;
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
    b->impl = std::make_unique<zeus::power_limit::GlobalPowerLimitOptimizer>(*window_monitor,
                                                                             std::move(options));
  }
  return b;
}

}  // namespace zeuscpp
