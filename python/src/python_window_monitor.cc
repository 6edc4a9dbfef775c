#include "python_window_monitor.h"

#include <fmt/format.h>

#include <utility>

#include "zeus/util/error.h"

namespace zeuscpp {

namespace {

std::string text_of(const py::handle& obj) { return py::repr(obj).cast<std::string>(); }

// The object, released with the GIL held whichever thread drops it last.
std::shared_ptr<py::object> hold(const py::object& obj) {
  return std::shared_ptr<py::object>(new py::object(obj), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

}  // namespace

PythonWindowMonitor::PythonWindowMonitor(
    const py::object& monitor, std::shared_ptr<const zeus::device::DeviceInventory> inventory)
    : monitor_(hold(monitor)), inventory_(std::move(inventory)) {
  for (const char* method : {"begin_window", "end_window"}) {
    if (!py::hasattr(monitor, method) || !PyCallable_Check(monitor.attr(method).ptr())) {
      throw py::type_error(
          fmt::format("monitor must be a ZeusMonitor or an object with its "
                      "methods (begin_window, end_window, gpu_indices); {} has "
                      "no {}()",
                      text_of(monitor), method));
    }
  }
  try {
    for (auto i : monitor.attr("gpu_indices")) gpu_indices_.push_back(i.cast<int>());
  } catch (const py::error_already_set&) {
    throw py::type_error(
        fmt::format("monitor {} must have gpu_indices, a list of GPU indices", text_of(monitor)));
  } catch (const py::cast_error&) {
    throw py::type_error(
        fmt::format("monitor {}'s gpu_indices must be a list of integers", text_of(monitor)));
  }
  for (int i : gpu_indices_) {
    if (i < 0 || static_cast<std::size_t>(i) >= inventory_->gpus.size()) {
      zeus::throw_error(
          zeus::ErrorCode::kInvalidArgument,
          fmt::format("monitor {} measures GPU {}, but this process has {} GPU(s) "
                      "(backend '{}'); the optimizer sets limits on the GPUs the "
                      "monitor names",
                      text_of(monitor), i, inventory_->gpus.size(), inventory_->gpu_backend));
    }
  }
}

void PythonWindowMonitor::begin_window(const std::string& name, bool sync, bool restart) {
  py::gil_scoped_acquire gil;
  if (restart) {
    monitor_->attr("begin_window")(name, py::arg("sync_execution") = sync,
                                   py::arg("restart") = true);
  } else {
    monitor_->attr("begin_window")(name, py::arg("sync_execution") = sync);
  }
  running_.insert(name);
}

zeus::monitor::Measurement PythonWindowMonitor::end_window(const std::string& name, bool sync,
                                                           bool cancel) {
  py::gil_scoped_acquire gil;
  running_.erase(name);  // ended even when the call fails, as EnergyMonitor's windows are
  py::object result;
  if (cancel) {
    result = monitor_->attr("end_window")(name, py::arg("sync_execution") = sync,
                                          py::arg("cancel") = true);
  } else {
    result = monitor_->attr("end_window")(name, py::arg("sync_execution") = sync);
  }
  zeus::monitor::Measurement m;
  try {
    m.time = zeus::Seconds(result.attr("time").cast<double>());
    for (auto item : result.attr("gpu_energy").cast<py::dict>()) {
      m.gpu_energy[item.first.cast<int>()] = zeus::Joules(item.second.cast<double>());
    }
  } catch (const std::exception&) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("end_window('{}') returned {}, not a Measurement (time in s, "
                                  "gpu_energy a dict of J by GPU index)",
                                  name, text_of(result)));
  }
  return m;
}

bool PythonWindowMonitor::window_running(const std::string& name) const {
  py::gil_scoped_acquire gil;  // running_ is touched with the GIL held
  return running_.contains(name);
}

const std::shared_ptr<zeus::device::Gpu>& PythonWindowMonitor::gpu(int gpu_index) const {
  for (int i : gpu_indices_) {
    if (i == gpu_index) return inventory_->gpus[static_cast<std::size_t>(i)];
  }
  zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                    fmt::format("GPU {} is not one the monitor measures", gpu_index));
}

}  // namespace zeuscpp
