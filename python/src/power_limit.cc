// zeuscpp.optimizer.power_limit: the library's GlobalPowerLimitOptimizer and
// selectors. The optimizer's core and the Python adapters (a selector or a
// reducer written in Python) are in power_limit_binding.h/.cc, shared with the
// carbon-aware controller's binding (chase.cc).
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
#include "power_limit_binding.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

std::vector<zeus::power_limit::PowerLimitMeasurement> measurements_from(const py::iterable& items) {
  std::vector<zeus::power_limit::PowerLimitMeasurement> out;
  for (auto item : items) out.push_back(item.cast<zeus::power_limit::PowerLimitMeasurement>());
  return out;
}

struct OptimizerState {
  std::string phase;
  py::object power_limit;  // W
  int steps;
};

void bind_power_limit_measurement(py::module_& m) {
  py::class_<zeus::power_limit::PowerLimitMeasurement>(
      m, "PowerLimitMeasurement",
      "Energy (J) and time (s) of the same amount of training at one power limit (W).")
      .def(py::init([](const py::object& power_limit, double energy, double time) {
             return zeus::power_limit::PowerLimitMeasurement{
                 milliwatts_from(power_limit, "power_limit"), zeus::Joules(energy),
                 zeus::Seconds(time)};
           }),
           py::arg("power_limit"), py::arg("energy"), py::arg("time"))
      .def_property_readonly(
          "power_limit",
          [](const zeus::power_limit::PowerLimitMeasurement& x) {
            return watts_object(x.power_limit);
          },
          "Power limit (W).")
      .def_property_readonly(
          "energy",
          [](const zeus::power_limit::PowerLimitMeasurement& x) { return x.energy.value(); },
          "Energy (J), summed over GPUs and ranks.")
      .def_property_readonly(
          "time", [](const zeus::power_limit::PowerLimitMeasurement& x) { return x.time.count(); },
          "Time (s), the slowest rank's.")
      .def("__eq__",
           [](const zeus::power_limit::PowerLimitMeasurement& a, const py::object& other) {
             if (!py::isinstance<zeus::power_limit::PowerLimitMeasurement>(other)) return false;
             const auto& b = other.cast<const zeus::power_limit::PowerLimitMeasurement&>();
             return a.power_limit == b.power_limit && a.energy == b.energy && a.time == b.time;
           })
      .def("__repr__", [](const zeus::power_limit::PowerLimitMeasurement& x) {
        return fmt::format("PowerLimitMeasurement(power_limit={}, energy={}, time={})",
                           py::repr(watts_object(x.power_limit)).cast<std::string>(),
                           py::repr(py::float_(x.energy.value())).cast<std::string>(),
                           py::repr(py::float_(x.time.count())).cast<std::string>());
      });
}

// The library's selectors: the Selector base and its implementations.
void bind_selectors(py::module_& m) {
  py::class_<zeus::power_limit::PowerLimitSelector,
             std::shared_ptr<zeus::power_limit::PowerLimitSelector>>(
      m, "Selector", "A selector implemented in the library.")
      .def(
          "select",
          [](const zeus::power_limit::PowerLimitSelector& s, const py::iterable& measurements) {
            const auto list = measurements_from(measurements);
            return watts_object(s.select(list));
          },
          py::arg("measurements"), "The chosen power limit (W) among the measurements.")
      .def("name", &zeus::power_limit::PowerLimitSelector::name,
           "For logs, e.g. 'zeus-cost(eta=0.5)'.");
  py::class_<zeus::power_limit::EnergySelector, zeus::power_limit::PowerLimitSelector,
             std::shared_ptr<zeus::power_limit::EnergySelector>>(m, "EnergySelector")
      .def(py::init<>());
  py::class_<zeus::power_limit::TimeSelector, zeus::power_limit::PowerLimitSelector,
             std::shared_ptr<zeus::power_limit::TimeSelector>>(m, "TimeSelector")
      .def(py::init<>());
  py::class_<zeus::power_limit::ZeusCostSelector, zeus::power_limit::PowerLimitSelector,
             std::shared_ptr<zeus::power_limit::ZeusCostSelector>>(m, "ZeusCostSelector")
      .def(py::init<double, int>(), py::arg("eta_knob"), py::arg("world_size") = 1);
  py::class_<zeus::power_limit::MaxSlowdownSelector, zeus::power_limit::PowerLimitSelector,
             std::shared_ptr<zeus::power_limit::MaxSlowdownSelector>>(m, "MaxSlowdownSelector")
      .def(py::init<double>(), py::arg("factor"));
}

void bind_optimizer_state(py::module_& m) {
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
}

void bind_global_power_limit_optimizer(py::module_& m) {
  using B = OptimizerBinding;
  py::class_<OptimizerBinding>(m, "GlobalPowerLimitOptimizer", py::dynamic_attr(),
                               "Core of zeuscpp.optimizer.power_limit.GlobalPowerLimitOptimizer.")
      .def(py::init(&make_optimizer), py::arg("monitor"), py::arg("optimum_selector"),
           py::arg("wait_steps"), py::arg("warmup_steps"), py::arg("profile_steps"),
           py::arg("pl_step"), py::arg("profile_path"), py::arg("dry_run"),
           py::arg("observer_mode"), py::arg("reducer"))
      .def(
          "on_step_begin",
          [](B& b) {
            b.step([](zeus::power_limit::GlobalPowerLimitOptimizer& o) { o.on_step_begin(); });
          },
          "Call before every training step.")
      .def(
          "on_epoch_end",
          [](B& b) {
            b.step([](zeus::power_limit::GlobalPowerLimitOptimizer& o) { o.on_epoch_end(); });
          },
          "Call after every epoch.")
      .def_property_readonly(
          "state",
          [](const B& b) {
            const auto s = b.get().state();
            return OptimizerState{zeus::power_limit::phase_name(s.phase),
                                  watts_object(s.power_limit), s.steps};
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
}

void bind_window_name(py::module_& m) {
  m.def(
      "window_name",
      [](const py::object& w) {
        return zeus::power_limit::GlobalPowerLimitOptimizer::window_name(
            milliwatts_from(w, "power_limit"));
      },
      py::arg("power_limit"), "The profiling window's name for a limit (W).");
}

void bind_power_limit(py::module_& core) {
  py::module_ m = core.def_submodule("optimizer", "Optimizer bindings.");
  bind_power_limit_measurement(m);
  bind_selectors(m);
  bind_optimizer_state(m);
  bind_global_power_limit_optimizer(m);
  bind_window_name(m);
}

}  // namespace

ZEUSCPP_BINDING(kOrderOptimizer, bind_power_limit);

}  // namespace zeuscpp
