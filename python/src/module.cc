// The extension module zeuscpp._core: runs every registered binder and
// arranges a clean interpreter exit (GPU settings restored, sampling threads
// stopped, logging back on stderr) while Python can still run code.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "binding.h"
#include "zeus/device/gpu_settings_guard.h"
#include "zeus/util/version.h"

namespace zeuscpp {
namespace {

struct Entry {
  int order;
  std::string name;
  BindFunction fn;
};

std::vector<Entry>& entries() {
  static std::vector<Entry> e;
  return e;
}

void at_interpreter_exit() {
  {
    ReleaseGil release;
    // Settings first: the optimizer's changes must come back even if a
    // sampling thread misbehaves below.
    zeus::device::GpuSettingsGuard::restore_all();
    stop_background_threads();
  }
  uninstall_python_log_sink();
}

}  // namespace

BindingRegistration::BindingRegistration(int order, const char* name, BindFunction fn) {
  entries().push_back(Entry{order, name, fn});
}

void run_bindings(py::module_& core) {
  auto list = entries();
  std::sort(list.begin(), list.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.order, a.name) < std::tie(b.order, b.name);
  });
  for (const Entry& e : list) e.fn(core);
}

std::string fspath(const py::handle& obj) {
  return py::module_::import("os").attr("fspath")(obj).cast<std::string>();
}

}  // namespace zeuscpp

PYBIND11_MODULE(_core, m) {
  m.doc() = "The C++ core of zeuscpp. Use the public modules (zeuscpp.monitor, ...), not this.";
  m.attr("__version__") = zeus::version();
  zeuscpp::install_python_log_sink();
  zeuscpp::run_bindings(m);
  m.def("_at_interpreter_exit", &zeuscpp::at_interpreter_exit,
        "Restores GPU settings, stops sampling threads and puts logging back on stderr. "
        "Registered with atexit; idempotent.");
  pybind11::module_::import("atexit").attr("register")(m.attr("_at_interpreter_exit"));
}
