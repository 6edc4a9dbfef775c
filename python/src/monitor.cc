// zeuscpp.monitor: ZeusMonitor (energy windows) and PowerMonitor (power
// timelines) over the library's EnergyMonitor and PowerMonitor. The Python
// classes in zeuscpp/monitor/ derive from these and only resolve arguments.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "binding.h"
#include "monitor_binding.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

// Every library PowerMonitor the module created, so interpreter exit can stop
// their threads even when Python never frees the objects.
std::mutex g_power_monitors_mutex;  // guards g_power_monitors
std::set<zeus::monitor::PowerMonitor*> g_power_monitors;

void track(zeus::monitor::PowerMonitor* pm) {
  if (pm == nullptr) return;
  std::lock_guard lock(g_power_monitors_mutex);
  g_power_monitors.insert(pm);
}

void untrack(zeus::monitor::PowerMonitor* pm) {
  if (pm == nullptr) return;
  std::lock_guard lock(g_power_monitors_mutex);
  g_power_monitors.erase(pm);
}

// A Python callable held by library code that may copy or drop it without
// the GIL: the last reference is released under the GIL.
std::shared_ptr<py::object> hold(py::object fn) {
  return std::shared_ptr<py::object>(new py::object(std::move(fn)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

// ZeusMonitor core. Thread-safe (the library monitor is); fields are set once.
struct EnergyMonitorBinding {
  std::shared_ptr<const zeus::device::DeviceInventory> inventory;
  std::unique_ptr<zeus::monitor::EnergyMonitor> monitor;
  WindowGilPolicy gil;

  ~EnergyMonitorBinding() {
    if (monitor) untrack(monitor->power_monitor());
  }
};

// The simulated GPU draws power from its own model of the work it is given
// (SimulatedGPU.execute); it cannot see PyTorch's kernels. Left alone it runs
// at the model's load (full by default), so a training loop measured on it
// gets the model's busy power (capped by its limit) over wall time, and an
// optimizer on it "learns" that the lowest limit is as fast as any. Said once
// per process.
void warn_once_if_simulated(const zeus::device::DeviceInventory& inventory,
                            const zeus::monitor::EnergyMonitor& monitor) {
  static bool warned = false;
  if (warned || inventory.gpu_backend != "sim" || monitor.gpu_indices().empty()) return;
  warned = true;
  const char* text =
      "measuring a simulated GPU (ZEUS_GPU_BACKEND=sim): it cannot see PyTorch's work, so a "
      "window's energy is the model's busy power (capped by its power limit) over the wall "
      "time, whatever the script does, unless the script runs work on it with "
      "zeuscpp.device.get_gpus().simulated(i).execute(work_units); power-limit choices made on "
      "it say nothing about a real GPU";
  if (PyErr_WarnEx(PyExc_UserWarning, text, 1) != 0) throw py::error_already_set();
}

std::unique_ptr<EnergyMonitorBinding> make_energy_monitor(
    std::optional<std::vector<int>> gpu_indices, std::optional<std::vector<int>> cpu_indices,
    bool approx_instant_energy, const py::object& log_file, const py::object& sync) {
  auto b = std::make_unique<EnergyMonitorBinding>();
  b->inventory = device_inventory();
  zeus::monitor::EnergyMonitorOptions options;
  options.warn_when_empty = false;  // a RuntimeWarning below says it, Python's way
  options.gpu_indices = std::move(gpu_indices);
  options.cpu_indices = std::move(cpu_indices);
  options.approx_instant_energy = approx_instant_energy;
  if (!log_file.is_none()) options.log_file = fspath(log_file);
  if (!sync.is_none()) {
    if (!PyCallable_Check(sync.ptr())) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        "sync_execution_with must be 'torch', 'jax', 'cupy', a callable or None");
    }
    options.sync_execution = [fn = hold(sync)] {
      py::gil_scoped_acquire gil;
      (*fn)();
    };
  }
  {
    ReleaseGil release;
    b->monitor = std::make_unique<zeus::monitor::EnergyMonitor>(*b->inventory, std::move(options));
  }
  track(b->monitor->power_monitor());
  warn_once_if_simulated(*b->inventory, *b->monitor);
  // Upstream scripts build monitors on GPU-less machines, so this is a warning
  // (once per call site, Python's default), not an error; it says why.
  // A Jetson's rails are measured even with no GPU or CPU package selected.
  if (b->monitor->gpu_indices().empty() && b->monitor->cpu_indices().empty() &&
      !b->inventory->jetson) {
    // nothing_to_measure says nothing when devices exist but none was chosen.
    const auto why =
        zeus::device::nothing_to_measure(*b->inventory, zeus::device::DeviceSelection{});
    const std::string text = why.value_or("gpu_indices and cpu_indices select no device") +
                             "; every window of this ZeusMonitor will be empty";
    if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0) throw py::error_already_set();
  }
  return b;
}

// The power-monitor core: the library monitor plus the offset that turns its
// steady-clock times into time.time() values, which is what Python Zeus users
// pass and get back.
struct PowerMonitorBinding {
  std::shared_ptr<const zeus::device::DeviceInventory> inventory;
  std::unique_ptr<zeus::monitor::PowerMonitor> monitor;
  double wall_offset = 0;  // wall time - steady time

  ~PowerMonitorBinding() { untrack(monitor.get()); }

  zeus::Seconds steady(double wall) const { return zeus::Seconds(wall - wall_offset); }
  double wall(zeus::Seconds steady_time) const { return steady_time.count() + wall_offset; }

  zeus::device::PowerDomain monitored(const std::string& name) const {
    const zeus::device::PowerDomain d = parse_power_domain(name);
    for (zeus::device::PowerDomain m : monitor->domains()) {
      if (m == d) return d;
    }
    std::string list;
    for (zeus::device::PowerDomain m : monitor->domains()) {
      list += (list.empty() ? "" : ", ") + power_domain_value(m);
    }
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("power domain '{}' is not monitored (monitored: {}); pass it in "
                                  "power_domains when creating the PowerMonitor",
                                  name, list));
  }

  std::vector<int> gpus(std::optional<int> gpu_index) const {
    if (!gpu_index) return monitor->gpu_indices();
    for (int i : monitor->gpu_indices()) {
      if (i == *gpu_index) return {i};
    }
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("GPU {} is not monitored by this PowerMonitor (GPUs: {})",
                                  *gpu_index, fmt::join(monitor->gpu_indices(), ", ")));
  }

  py::dict timeline(const std::string& domain_name, std::optional<int> gpu_index,
                    std::optional<double> start, std::optional<double> end) const {
    const zeus::device::PowerDomain d = monitored(domain_name);
    std::optional<zeus::Seconds> s, e;
    if (start) s = steady(*start);
    if (end) e = steady(*end);
    std::map<int, std::vector<zeus::monitor::PowerSample>> samples;
    {
      ReleaseGil release;
      for (int i : gpus(gpu_index)) samples[i] = monitor->gpu_timeline(i, d, s, e);
    }
    py::dict out;
    for (const auto& [i, list] : samples) {
      py::list points;
      for (const auto& p : list) points.append(py::make_tuple(wall(p.time), p.power.value()));
      out[py::int_(i)] = points;
    }
    return out;
  }
};

std::unique_ptr<PowerMonitorBinding> make_power_monitor(
    std::optional<std::vector<int>> gpu_indices, std::optional<double> update_period,
    std::optional<long long> max_samples, std::optional<std::vector<std::string>> domains) {
  if (gpu_indices && gpu_indices->empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "gpu_indices must be None (all GPUs) or a non-empty list");
  }
  if (domains && domains->empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "power_domains must be None (the default domain) or a non-empty list");
  }
  if (max_samples && *max_samples <= 0) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("max_samples_per_gpu must be positive, got {}", *max_samples));
  }
  auto b = std::make_unique<PowerMonitorBinding>();
  b->inventory = device_inventory();
  zeus::device::DeviceSelection sel =
      zeus::device::select_devices(*b->inventory, gpu_indices, std::vector<int>{});
  zeus::monitor::PowerMonitorOptions options;
  if (domains) {
    for (const auto& name : *domains) options.domains.push_back(parse_power_domain(name));
  }
  if (update_period) options.interval = zeus::Seconds(*update_period);
  if (max_samples) options.max_samples = static_cast<std::size_t>(*max_samples);
  {
    ReleaseGil release;
    b->wall_offset = zeus::wall_time_seconds() - zeus::SteadyClock::instance().now().count();
    b->monitor = std::make_unique<zeus::monitor::PowerMonitor>(
        std::move(sel.gpus), std::move(sel.gpu_indices),
        std::vector<std::shared_ptr<zeus::device::Cpu>>{}, std::vector<int>{}, std::move(options));
  }
  track(b->monitor.get());
  return b;
}

void bind_zeus_monitor_class(py::module_& m) {
  py::class_<EnergyMonitorBinding> energy_monitor_class(m, "ZeusMonitor", py::dynamic_attr(),
                                                        "Core of zeuscpp.monitor.ZeusMonitor.");
  energy_monitor_class
      .def(py::init(&make_energy_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("cpu_indices") = py::none(), py::arg("approx_instant_energy") = false,
           py::arg("log_file") = py::none(), py::arg("sync") = py::none())
      .def(
          "reset_windows", [](EnergyMonitorBinding& b) { b.monitor->reset_windows(); },
          "Drops every running window.")
      .def(
          "window_running",
          [](const EnergyMonitorBinding& b, const std::string& key) {
            return b.monitor->window_running(key);
          },
          py::arg("key"), "Whether window `key` is running.")
      .def(
          "running",
          [](EnergyMonitorBinding& b, const std::string& key, bool sync_execution) {
            zeus::monitor::Measurement so_far;
            {
              ReleaseGil release;
              so_far = b.monitor->running(key, sync_execution);
            }
            return to_python(std::move(so_far));
          },
          py::arg("key"), py::arg("sync_execution") = false,
          "The Measurement of running window `key` so far, without ending it (progress bars, "
          "early stopping); nothing is logged. ValueError (ZeusNotFoundError) for a window that "
          "is not running. sync_execution=True waits for queued GPU work first.")
      .def_property_readonly(
          "gpu_indices", [](const EnergyMonitorBinding& b) { return b.monitor->gpu_indices(); },
          "Measured GPU indices.")
      .def_property_readonly(
          "cpu_indices", [](const EnergyMonitorBinding& b) { return b.monitor->cpu_indices(); },
          "Measured CPU package indices.");
  add_window_methods(energy_monitor_class);
}

void bind_power_monitor_class(py::module_& m) {
  py::class_<PowerMonitorBinding>(m, "PowerMonitor", py::dynamic_attr(),
                                  "Core of zeuscpp.monitor.PowerMonitor.")
      .def(py::init(&make_power_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("update_period") = py::none(), py::arg("max_samples_per_gpu") = py::none(),
           py::arg("power_domains") = py::none())
      .def(
          "stop", [](PowerMonitorBinding& b) { b.monitor->stop(); }, py::call_guard<ReleaseGil>(),
          "Stops sampling (idempotent); timelines stay queryable.")
      .def_property_readonly(
          "gpu_indices", [](const PowerMonitorBinding& b) { return b.monitor->gpu_indices(); },
          "Monitored GPU indices.")
      .def_property_readonly(
          "update_period",
          [](const PowerMonitorBinding& b) { return b.monitor->interval().count(); },
          "Sampling interval (s).")
      .def_property_readonly(
          "power_domains",
          [](const PowerMonitorBinding& b) {
            std::vector<std::string> out;
            for (auto d : b.monitor->domains()) out.push_back(power_domain_value(d));
            return out;
          },
          "Sampled domains ('device_instant', 'device_average', 'memory_average').")
      .def("_timeline", &PowerMonitorBinding::timeline, py::arg("power_domain"),
           py::arg("gpu_index") = py::none(), py::arg("start_time") = py::none(),
           py::arg("end_time") = py::none())
      .def(
          "_energy",
          [](const PowerMonitorBinding& b, double start, double end,
             const std::string& domain_name) -> py::object {
            const zeus::device::PowerDomain d = b.monitored(domain_name);
            std::map<int, std::optional<zeus::Joules>> energy;
            {
              ReleaseGil release;
              for (int i : b.monitor->gpu_indices()) {
                energy[i] = b.monitor->gpu_energy(i, d, b.steady(start), b.steady(end));
              }
            }
            py::dict out;
            for (const auto& [i, e] : energy) {
              if (!e) return py::none();
              out[py::int_(i)] = e->value();
            }
            return out;
          },
          py::arg("start_time"), py::arg("end_time"), py::arg("power_domain"))
      .def(
          "_power",
          [](const PowerMonitorBinding& b, std::optional<double> time,
             const std::string& domain_name) -> py::object {
            const zeus::device::PowerDomain d = b.monitored(domain_name);
            std::map<int, std::optional<zeus::Watts>> power;
            {
              ReleaseGil release;
              for (int i : b.monitor->gpu_indices()) {
                power[i] = time ? b.monitor->gpu_power_at(i, d, b.steady(*time))
                                : b.monitor->latest_gpu_power(i, d);
              }
            }
            py::dict out;
            for (const auto& [i, p] : power) {
              if (!p) return py::none();
              out[py::int_(i)] = p->value();
            }
            return out;
          },
          py::arg("time"), py::arg("power_domain"));
}

void bind_monitor(py::module_& core) {
  py::module_ m = core.def_submodule("monitor", "Monitor bindings.");

  add_measurement_type(m);
  bind_zeus_monitor_class(m);
  bind_power_monitor_class(m);
}

}  // namespace

zeus::device::PowerDomain parse_power_domain(const std::string& name) {
  if (name == "device_instant") return zeus::device::PowerDomain::kDeviceInstant;
  if (name == "device_average") return zeus::device::PowerDomain::kDeviceAverage;
  if (name == "memory_average") return zeus::device::PowerDomain::kMemoryAverage;
  zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                    fmt::format("'{}' is not a power domain; use device_instant, device_average "
                                "or memory_average",
                                name));
}

std::string power_domain_value(zeus::device::PowerDomain domain) {
  switch (domain) {
    case zeus::device::PowerDomain::kDeviceInstant:
      return "device_instant";
    case zeus::device::PowerDomain::kDeviceAverage:
      return "device_average";
    case zeus::device::PowerDomain::kMemoryAverage:
      return "memory_average";
  }
  return "device_instant";
}

bool is_energy_monitor(const py::handle& obj) { return py::isinstance<EnergyMonitorBinding>(obj); }

WindowTarget window_target_of(PyObject* self) {
  // The last Python class seen here whose instances hold an
  // EnergyMonitorBinding as their only pybind11 base (zeuscpp.monitor's
  // ZeusMonitor, a subclass): its instances skip pybind11's cast, which hashes
  // type names. A strong reference keeps its address from being reused.
  static PyTypeObject* fast_type = nullptr;
  if (Py_TYPE(self) == fast_type) {
    auto* inst = reinterpret_cast<py::detail::instance*>(self);
    py::detail::value_and_holder v_h = inst->get_value_and_holder();
    if (v_h.holder_constructed()) {
      auto& b = *v_h.value_ptr<EnergyMonitorBinding>();
      if (b.monitor) return {b.monitor.get(), &b.gil};
    }
  }
  auto& b = py::handle(self).cast<EnergyMonitorBinding&>();
  if (!b.monitor) {
    zeus::throw_error(zeus::ErrorCode::kFailedPrecondition, "the ZeusMonitor is not initialized");
  }
  if (Py_TYPE(self) != fast_type && py::detail::all_type_info(Py_TYPE(self)).size() == 1 &&
      reinterpret_cast<py::detail::instance*>(self)->simple_layout) {
    Py_INCREF(Py_TYPE(self));
    Py_XDECREF(fast_type);
    fast_type = Py_TYPE(self);
  }
  return {b.monitor.get(), &b.gil};
}

zeus::monitor::EnergyMonitor& energy_monitor_of(const py::handle& obj) {
  if (!py::isinstance<EnergyMonitorBinding>(obj)) {
    throw py::type_error("monitor must be a zeuscpp.monitor.ZeusMonitor, got " +
                         py::repr(obj).cast<std::string>());
  }
  auto& b = obj.cast<EnergyMonitorBinding&>();
  if (!b.monitor) {
    zeus::throw_error(zeus::ErrorCode::kFailedPrecondition, "the ZeusMonitor is not initialized");
  }
  return *b.monitor;
}

void stop_background_threads() {
  std::lock_guard lock(g_power_monitors_mutex);
  for (zeus::monitor::PowerMonitor* pm : g_power_monitors) pm->stop();
  stop_temperature_monitors();
}

ZEUSCPP_BINDING(kOrderMonitor, bind_monitor);

}  // namespace zeuscpp
