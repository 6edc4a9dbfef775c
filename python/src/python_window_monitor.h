// A Python object with ZeusMonitor's methods as the library's WindowMonitor,
// so the power-limit optimizer takes any monitor-like object, as the Python
// Zeus's duck-typed optimizer does (its tests pass a log-replaying
// ReplayZeusMonitor). The GPUs whose settings the optimizer changes are this
// process's GPUs with the object's gpu_indices.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "zeus/device/devices.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeuscpp {

namespace py = pybind11;

class PythonWindowMonitor final : public zeus::monitor::WindowMonitor {
 public:
  // TypeError when the object lacks begin_window/end_window/gpu_indices;
  // kInvalidArgument when it names a GPU this process does not have. Call with
  // the GIL held.
  PythonWindowMonitor(const py::object& monitor,
                      std::shared_ptr<const zeus::device::DeviceInventory> inventory);
  ~PythonWindowMonitor() override = default;
  PythonWindowMonitor(const PythonWindowMonitor&) = delete;
  PythonWindowMonitor& operator=(const PythonWindowMonitor&) = delete;

  // These take the GIL for the call (the optimizer runs with it released).
  void begin_window(const std::string& name, bool sync, bool restart) override;
  zeus::monitor::Measurement end_window(const std::string& name, bool sync, bool cancel) override;
  bool window_running(const std::string& name) const override;
  const std::vector<int>& gpu_indices() const override { return gpu_indices_; }
  const std::shared_ptr<zeus::device::Gpu>& gpu(int gpu_index) const override;

 private:
  std::shared_ptr<py::object> monitor_;  // released with the GIL held
  std::shared_ptr<const zeus::device::DeviceInventory> inventory_;
  std::vector<int> gpu_indices_;
  // Windows begun through this adapter and not ended: the optimizer asks
  // whether its window runs, which ZeusMonitor-like objects need not answer.
  std::set<std::string> running_;
};

}  // namespace zeuscpp
