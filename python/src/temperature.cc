// zeuscpp.monitor.TemperatureMonitor over the library's TemperatureMonitor.
// Times cross the boundary as time.time() values, as upstream's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "binding.h"
#include "monitor_binding.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/temperature_monitor.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

// Every library TemperatureMonitor alive, so interpreter exit can stop their
// threads even when Python never frees the objects.
std::mutex g_monitors_mutex;  // guards g_monitors
std::set<zeus::monitor::TemperatureMonitor*> g_monitors;

struct TemperatureMonitorBinding {
  std::shared_ptr<const zeus::device::DeviceInventory> inventory;
  std::unique_ptr<zeus::monitor::TemperatureMonitor> monitor;
  double wall_offset = 0;  // wall time - steady time

  ~TemperatureMonitorBinding() {
    std::lock_guard lock(g_monitors_mutex);
    g_monitors.erase(monitor.get());
  }

  std::vector<int> gpus(std::optional<int> gpu_index) const {
    if (!gpu_index) return monitor->gpu_indices();
    for (int i : monitor->gpu_indices()) {
      if (i == *gpu_index) return {i};
    }
    zeus::throw_error(
        zeus::ErrorCode::kInvalidArgument,
        "GPU " + std::to_string(*gpu_index) + " is not monitored by this TemperatureMonitor");
  }

  py::dict timeline(std::optional<int> gpu_index, std::optional<double> start,
                    std::optional<double> end) const {
    py::dict out;
    for (int i : gpus(gpu_index)) {
      std::vector<zeus::monitor::TemperatureSample> samples;
      {
        ReleaseGil release;
        samples = monitor->timeline(
            i, start ? std::optional(zeus::Seconds(*start - wall_offset)) : std::nullopt,
            end ? std::optional(zeus::Seconds(*end - wall_offset)) : std::nullopt);
      }
      py::list points;
      for (const auto& s : samples) {
        points.append(py::make_tuple(s.time.count() + wall_offset, s.temperature.value()));
      }
      out[py::int_(i)] = points;
    }
    return out;
  }

  py::object temperatures(std::optional<double> time) const {
    std::optional<std::map<int, zeus::Celsius>> all;
    {
      ReleaseGil release;
      all = monitor->temperatures(time ? std::optional(zeus::Seconds(*time - wall_offset))
                                       : std::nullopt);
    }
    if (!all) return py::none();
    py::dict out;
    for (const auto& [i, c] : *all) out[py::int_(i)] = c.value();
    return out;
  }
};

std::unique_ptr<TemperatureMonitorBinding> make_temperature_monitor(
    std::optional<std::vector<int>> gpu_indices, double update_period,
    std::optional<long long> max_samples) {
  if (gpu_indices && gpu_indices->empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "gpu_indices must be None (all GPUs) or a non-empty list");
  }
  if (max_samples && *max_samples <= 0) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument, "max_samples_per_gpu must be positive");
  }
  auto b = std::make_unique<TemperatureMonitorBinding>();
  b->inventory = device_inventory();
  zeus::device::DeviceSelection sel =
      zeus::device::select_devices(*b->inventory, gpu_indices, std::vector<int>{});
  if (sel.gpus.empty()) {
    zeus::throw_error(zeus::ErrorCode::kNotFound, "no GPU to monitor");
  }
  zeus::monitor::TemperatureMonitorOptions options;
  options.interval = zeus::Seconds(update_period);
  if (max_samples) options.max_samples = static_cast<std::size_t>(*max_samples);
  {
    ReleaseGil release;
    b->wall_offset = zeus::wall_time_seconds() - zeus::SteadyClock::instance().now().count();
    b->monitor = std::make_unique<zeus::monitor::TemperatureMonitor>(
        std::move(sel.gpus), std::move(sel.gpu_indices), options);
  }
  std::lock_guard lock(g_monitors_mutex);
  g_monitors.insert(b->monitor.get());
  return b;
}

void bind_temperature(py::module_& core) {
  py::module_ m = core.attr("monitor");
  py::class_<TemperatureMonitorBinding>(m, "TemperatureMonitor", py::dynamic_attr(),
                                        "Background GPU temperature sampling (C++ thread).")
      .def(py::init(&make_temperature_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("update_period") = 1.0, py::arg("max_samples_per_gpu") = py::none())
      .def(
          "stop", [](TemperatureMonitorBinding& b) { b.monitor->stop(); },
          py::call_guard<ReleaseGil>(), "Stops sampling (idempotent); timelines stay.")
      .def_property_readonly(
          "gpu_indices",
          [](const TemperatureMonitorBinding& b) { return b.monitor->gpu_indices(); },
          "The monitored GPUs.")
      .def_property_readonly(
          "update_period",
          [](const TemperatureMonitorBinding& b) { return b.monitor->interval().count(); },
          "Seconds between samples.")
      .def("_timeline", &TemperatureMonitorBinding::timeline, py::arg("gpu_index"),
           py::arg("start_time"), py::arg("end_time"))
      .def("_temperature", &TemperatureMonitorBinding::temperatures, py::arg("time"));
}

}  // namespace

void stop_temperature_monitors() {
  std::lock_guard lock(g_monitors_mutex);
  for (zeus::monitor::TemperatureMonitor* tm : g_monitors) tm->stop();
}

ZEUSCPP_BINDING(kOrderMonitor, bind_temperature);

}  // namespace zeuscpp
