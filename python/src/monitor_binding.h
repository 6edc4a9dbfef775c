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

// zeuscpp.monitor.Measurement: the Python Zeus's dataclass fields as plain,
// mutable attributes (dicts built once, when the window ends), plus our flag
// for windows shorter than the counter period. Touched with the GIL held.
struct MeasurementBinding {
  double time = 0;
  py::dict gpu_energy;
  py::object cpu_energy = py::none();
  py::object dram_energy = py::none();
  py::object soc_energy = py::none();
  // repr() of the exception that ended the window early (a `with
  // monitor.window(...)` block that raised), or None: such a window measured
  // only part of its work. A string, not the exception: its traceback holds
  // the frames that hold the measurement, a cycle through this class (which
  // the garbage collector cannot see into) that would keep the monitor alive.
  py::object interrupted_by = py::none();
  std::vector<int> below_update_period;
  std::map<int, zeus::EnergySource> sources;
};

MeasurementBinding to_python(const zeus::Measurement& m);

// The library monitor behind a zeuscpp._core.monitor.ZeusMonitor (or a
// subclass) instance; pybind11's cast_error for any other object.
zeus::EnergyMonitor& energy_monitor_of(PyObject* self);

// Binds begin_window/end_window on that class (window_calls.cc).
void add_window_methods(const py::handle& energy_monitor_class);

// "device_instant", "device_average", "memory_average" (upstream's PowerDomain
// values) <-> the library's domains. kInvalidArgument for other names.
zeus::PowerDomain parse_power_domain(const std::string& name);
std::string power_domain_value(zeus::PowerDomain domain);

// Stops the threads of every live TemperatureMonitor (temperature.cc); called
// at interpreter exit with the power monitors'.
void stop_temperature_monitors();

// The library monitor inside a zeuscpp ZeusMonitor (TypeError for other objects).
zeus::EnergyMonitor& energy_monitor_of(const py::handle& obj);
// Whether obj is a zeuscpp ZeusMonitor (energy_monitor_of accepts it).
bool is_energy_monitor(const py::handle& obj);

}  // namespace zeuscpp
