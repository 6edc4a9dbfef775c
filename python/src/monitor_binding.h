// What the monitor bindings share with other bindings (the optimizer takes a
// ZeusMonitor; a future temperature monitor reuses the domain names).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <vector>

#include "binding.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeuscpp {

// zeuscpp.monitor.Measurement (measurement.cc): the Python Zeus's dataclass
// fields as mutable attributes, plus our flag for windows shorter than the
// counter period. A window's Measurement keeps the library's result and builds
// its energy dicts when they are first read.
void add_measurement_type(py::module_& module);
// A window's Measurement: a new reference, or nullptr with a Python error set.
PyObject* new_measurement_object(zeus::monitor::Measurement&& m);
// The same as a py::object (error_already_set when it cannot be made).
py::object to_python(zeus::monitor::Measurement m);

// What begin_window/end_window hold per ZeusMonitor to decide whether to
// release the GIL around the library call (window_calls.cc).
struct WindowGilPolicy {
  int calls_until_timed = 0;  // the next call with this at 0 releases the GIL and is timed
  bool release = true;        // the last timed call was slow: release it every call
};

struct WindowTarget {
  zeus::monitor::EnergyMonitor* monitor;
  WindowGilPolicy* gil;
};

// The library monitor behind a zeuscpp._core.monitor.ZeusMonitor (or a
// subclass) instance and its GIL policy; pybind11's cast_error for any other
// object. Called with the GIL held.
WindowTarget window_target_of(PyObject* self);

// Binds begin_window/end_window on that class (window_calls.cc).
void add_window_methods(const py::handle& energy_monitor_class);

// "device_instant", "device_average", "memory_average" (upstream's PowerDomain
// values) <-> the library's domains. kInvalidArgument for other names.
zeus::device::PowerDomain parse_power_domain(const std::string& name);
std::string power_domain_value(zeus::device::PowerDomain domain);

// Stops the threads of every live TemperatureMonitor (temperature.cc); called
// at interpreter exit with the power monitors'.
void stop_temperature_monitors();

// The library monitor inside a zeuscpp ZeusMonitor (TypeError for other objects).
zeus::monitor::EnergyMonitor& energy_monitor_of(const py::handle& obj);
// Whether obj is a zeuscpp ZeusMonitor (energy_monitor_of accepts it).
bool is_energy_monitor(const py::handle& obj);

}  // namespace zeuscpp
