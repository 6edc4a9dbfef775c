// ZeusMonitor.begin_window / end_window with CPython's vectorcall convention.
//
// A training loop calls these two every step, so their cost is the binding's
// cost: pybind11's general dispatcher (overload list, keyword matching, one
// caster per argument) took longer than the library's whole window. Bound as
// METH_FASTCALL | METH_KEYWORDS methods they take their arguments straight
// from the interpreter's stack. Names, parameters, defaults and errors are the
// same as with pybind11; the GIL is released around the library call when it
// can take long (call_library).
#include <pybind11/pybind11.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "binding.h"
#include "monitor_binding.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeuscpp {
namespace {

// The positional-or-keyword parameters of one window call: `key` (required
// str) and two flags with their defaults.
struct WindowArguments {
  std::string key;
  bool sync_execution = true;
  bool flag = false;  // restart (begin_window) or cancel (end_window)
};

// Parses (key, sync_execution=True, <flag_name>=False); false with a
// TypeError set, as Python would raise it, when they do not fit.
bool parse_arguments(const char* method, const char* flag_name, PyObject* const* args,
                     Py_ssize_t nargs, PyObject* kwnames, WindowArguments& out) {
  if (kwnames == nullptr && PyVectorcall_NARGS(nargs) == 1 && PyUnicode_Check(args[0])) {
    // The common call, begin_window("step"): the key alone, flags defaulted.
    Py_ssize_t key_size = 0;
    const char* key = PyUnicode_AsUTF8AndSize(args[0], &key_size);
    if (key == nullptr) return false;
    out.key.assign(key, static_cast<size_t>(key_size));
    return true;
  }
  const std::array<std::string_view, 3> names{"key", "sync_execution", flag_name};
  std::array<PyObject*, 3> values{nullptr, nullptr, nullptr};
  const Py_ssize_t positional = PyVectorcall_NARGS(nargs);
  if (positional > 3) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most 3 arguments (%zd given)", method, positional);
    return false;
  }
  for (Py_ssize_t i = 0; i < positional; ++i) values[static_cast<size_t>(i)] = args[i];
  const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < keywords; ++i) {
    PyObject* name_object = PyTuple_GET_ITEM(kwnames, i);
    Py_ssize_t size = 0;
    const char* name = PyUnicode_AsUTF8AndSize(name_object, &size);
    if (name == nullptr) return false;
    size_t slot = names.size();
    for (size_t s = 0; s < names.size(); ++s) {
      if (names[s] == std::string_view(name, static_cast<size_t>(size))) slot = s;
    }
    if (slot == names.size()) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", method, name);
      return false;
    }
    if (values[slot] != nullptr) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", method, name);
      return false;
    }
    values[slot] = args[positional + i];
  }
  if (values[0] == nullptr) {
    PyErr_Format(PyExc_TypeError, "%s() missing required argument 'key'", method);
    return false;
  }
  if (!PyUnicode_Check(values[0])) {
    PyErr_Format(PyExc_TypeError, "%s(): key must be str, not %s", method,
                 Py_TYPE(values[0])->tp_name);
    return false;
  }
  Py_ssize_t key_size = 0;
  const char* key = PyUnicode_AsUTF8AndSize(values[0], &key_size);
  if (key == nullptr) return false;
  out.key.assign(key, static_cast<size_t>(key_size));
  for (size_t s = 1; s < values.size(); ++s) {
    if (values[s] == nullptr) continue;
    const int truth = PyObject_IsTrue(values[s]);
    if (truth < 0) return false;
    (s == 1 ? out.sync_execution : out.flag) = truth == 1;
  }
  return true;
}

// Whether to release the GIL around the library call. Releasing and
// re-taking it costs about as much as reading a counter on a fast backend,
// and holding it for a few microseconds is invisible to other threads
// (CPython hands the GIL over every 5 ms at best). So: release it whenever
// the call may wait (a sync function, the log file) or the reads were slow
// when last timed; time one call in kTimedEvery with the GIL released to
// notice reads that become slow; hold it otherwise.
constexpr int kTimedEvery = 16;
constexpr std::chrono::microseconds kSlowCall{20};

template <class Call>
void call_library(WindowGilPolicy& gil, bool may_wait, Call&& call) {
  if (!may_wait && !gil.release && gil.calls_until_timed > 0) {
    --gil.calls_until_timed;
    call();
    return;
  }
  std::chrono::steady_clock::duration took{};
  {
    ReleaseGil release;
    const auto start = std::chrono::steady_clock::now();
    call();
    took = std::chrono::steady_clock::now() - start;
  }
  if (!may_wait) {
    gil.release = took >= kSlowCall;
    gil.calls_until_timed = kTimedEvery;
  }
}

PyObject* begin_window(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  WindowArguments a;
  if (!parse_arguments("begin_window", "restart", args, nargs, kwnames, a)) return nullptr;
  try {
    const WindowTarget target = window_target_of(self);
    call_library(*target.gil, target.monitor->window_call_may_wait(a.sync_execution),
                 [&] { target.monitor->begin_window(a.key, a.sync_execution, a.flag); });
    Py_RETURN_NONE;
  } catch (...) {
    raise_current_exception();
    return nullptr;
  }
}

PyObject* end_window(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  WindowArguments a;
  if (!parse_arguments("end_window", "cancel", args, nargs, kwnames, a)) return nullptr;
  try {
    const WindowTarget target = window_target_of(self);
    std::optional<zeus::monitor::Measurement> result;
    call_library(
        *target.gil, !a.flag && target.monitor->window_call_may_wait(a.sync_execution),
        [&] { result.emplace(target.monitor->end_window(a.key, a.sync_execution, a.flag)); });
    return new_measurement_object(std::move(*result));
  } catch (...) {
    raise_current_exception();
    return nullptr;
  }
}

// The "name($self, ...)\n--\n\n" prefix is CPython's text signature, so
// inspect.signature and help() show the parameters as for any method.
PyMethodDef g_begin_window{
    "begin_window", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&begin_window)),
    METH_FASTCALL | METH_KEYWORDS,
    "begin_window($self, /, key, sync_execution=True, restart=False)\n--\n\n"
    "Begins window `key` (ValueError if it is running, unless restart=True)."};
PyMethodDef g_end_window{
    "end_window", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&end_window)),
    METH_FASTCALL | METH_KEYWORDS,
    "end_window($self, /, key, sync_execution=True, cancel=False)\n--\n\n"
    "Ends window `key` and returns its Measurement (ValueError for a window that is not "
    "running). cancel=True drops it: zeros, nothing logged."};

void add_method(const py::handle& cls, PyMethodDef& def) {
  py::object descriptor = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def));
  if (!descriptor) throw py::error_already_set();
  py::setattr(cls, def.ml_name, descriptor);
}

}  // namespace

void add_window_methods(const py::handle& energy_monitor_class) {
  add_method(energy_monitor_class, g_begin_window);
  add_method(energy_monitor_class, g_end_window);
}

}  // namespace zeuscpp
