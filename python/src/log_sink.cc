// The library's log, seen from Python: every line goes to the `zeuscpp`
// logger of Python's `logging`, so users filter and format it like any other
// Python log.
//
// Threads. The sink never waits for the GIL (a thread holding the sink's
// mutex while waiting for the GIL could deadlock against a thread holding the
// GIL that logs). So:
//   - a thread that holds the GIL delivers at once;
//   - a Python thread inside a ReleaseGil region keeps its lines in a
//     thread-local buffer, delivered when the region ends and the GIL is back;
//   - any other thread (the library's sampling and signal-restore threads) and
//     anything after interpreter exit write to stderr like the CLI does.
#include <Python.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding.h"
#include "zeus/util/log.h"

namespace zeuscpp {
namespace {

using zeus::log::Level;

thread_local int t_release_depth = 0;
thread_local std::vector<std::pair<Level, std::string>> t_pending;

std::atomic<bool> g_active{false};
py::object* g_logger = nullptr;  // leaked on purpose: used until the very end, GIL held
std::shared_ptr<zeus::log::Sink> g_stderr;

int python_level(Level level) {
  switch (level) {
    case Level::kDebug:
      return 10;
    case Level::kInfo:
      return 20;
    case Level::kWarn:
      return 30;
    case Level::kError:
    case Level::kOff:
      return 40;
  }
  return 40;
}

bool python_usable() { return g_active.load() && Py_IsInitialized() && !_Py_IsFinalizing(); }

// Requires the GIL. Keeps any Python error being raised (a log line written
// while an exception is translated must not replace it).
void deliver(Level level, std::string_view message) {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* text =
      PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace");
  if (text != nullptr) {
    PyObject* result =
        PyObject_CallMethod(g_logger->ptr(), "log", "isO", python_level(level), "%s", text);
    Py_XDECREF(result);
    Py_DECREF(text);
  }
  PyErr_Clear();  // a failing handler must not turn into the caller's error
  PyErr_Restore(type, value, traceback);
}

void flush_pending() {
  std::vector<std::pair<Level, std::string>> lines;
  lines.swap(t_pending);
  for (const auto& [level, message] : lines) {
    if (python_usable()) {
      deliver(level, message);
    } else {
      g_stderr->log(level, message);
    }
  }
}

// Thread-safety: the base class serializes write().
class PythonLogSink final : public zeus::log::Sink {
 protected:
  void write(Level level, std::string_view message) override {
    const bool holds_gil = Py_IsInitialized() && PyGILState_Check() != 0;
    if (t_release_depth > 0 && !holds_gil) {
      t_pending.emplace_back(level, std::string(message));
    } else if (holds_gil && python_usable()) {
      deliver(level, message);
    } else {
      g_stderr->log(level, message);
    }
  }
};

}  // namespace

ReleaseGil::ReleaseGil() {
  ++t_release_depth;
  state_ = PyEval_SaveThread();
}

ReleaseGil::~ReleaseGil() noexcept(false) {
  --t_release_depth;  // first: PyEval_RestoreThread may not return (see binding.h)
  PyEval_RestoreThread(state_);
  if (!t_pending.empty()) flush_pending();
}

void install_python_log_sink() {
  if (g_logger == nullptr) {
    g_logger = new py::object(py::module_::import("logging").attr("getLogger")("zeuscpp"));
    g_stderr = std::make_shared<zeus::log::StderrSink>();
  }
  zeus::log::set_sink(std::make_shared<PythonLogSink>());
  g_active.store(true);
}

void uninstall_python_log_sink() {
  g_active.store(false);
  zeus::log::set_sink(nullptr);
}

}  // namespace zeuscpp
