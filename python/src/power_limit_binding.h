// What the power-limit optimizer bindings share: the Python-facing core of a
// GlobalPowerLimitOptimizer (power_limit.cc binds it as is; chase.cc wraps it
// in the carbon-aware controller), the Python reducer adapter, and watts in
// and out of Python.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "binding.h"
#include "python_window_monitor.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit/reducer.h"
#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/util/error.h"

namespace zeuscpp {

// Watts as the Python Zeus writes them: an int when whole.
py::object watts_object(zeus::Milliwatts mw);
// A power limit in W from Python (an int or float); kInvalidArgument naming
// `what` for anything else or a non-finite number.
zeus::Milliwatts milliwatts_from(const py::handle& w, const char* what);

// A Python object owned from C++ that may be freed without the GIL held.
std::shared_ptr<py::object> hold_object(py::object obj);

// A Python reducer (all_reduce_sum/all_reduce_max/rank/world_size; the
// torch.distributed one lives in zeuscpp/utils/framework.py). rank and world
// size are read once (they do not change during a job); each reduction takes
// the GIL, since the optimizer runs with it released.
class PythonReducer final : public zeus::power_limit::Reducer {
 public:
  explicit PythonReducer(py::object reducer);
  double all_reduce_sum(double local) override { return call("all_reduce_sum", local); }
  double all_reduce_max(double local) override { return call("all_reduce_max", local); }
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

 private:
  double call(const char* method, double local);
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
  std::shared_ptr<const zeus::power_limit::PowerLimitSelector> core_selector;
  std::unique_ptr<zeus::power_limit::Reducer> core_reducer;
  std::unique_ptr<zeus::power_limit::GlobalPowerLimitOptimizer> impl;

  bool save_error_warned = false;

  zeus::power_limit::GlobalPowerLimitOptimizer& get() const {
    if (!impl) {
      zeus::throw_error(zeus::ErrorCode::kFailedPrecondition,
                        "the GlobalPowerLimitOptimizer is not initialized");
    }
    return *impl;
  }

  // Runs one hook (of the optimizer, or of a controller around it) without
  // the GIL; then, with it, says once (a RuntimeWarning, not only a log line)
  // when the profile could not be saved: the next run would profile again.
  template <class Hook>
  void step(Hook hook) {
    {
      ReleaseGil release;
      hook(get());
    }
    warn_if_profile_unsaved();
  }
  void warn_if_profile_unsaved();
};

// The optimizer of a GlobalPowerLimitOptimizer Python object (arguments as
// its constructor's; selector and reducer may be None).
std::unique_ptr<OptimizerBinding> make_optimizer(py::object monitor, py::object selector,
                                                 int wait_steps, int warmup_steps,
                                                 int profile_steps, double pl_step,
                                                 py::object profile_path, bool dry_run,
                                                 bool observer_mode, py::object reducer);

}  // namespace zeuscpp
