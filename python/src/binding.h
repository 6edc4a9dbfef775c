// Shared pieces of the zeuscpp._core extension module: how each part of the
// library registers its bindings, the GIL-release guard every device-touching
// call uses, and small conversions. The bindings only translate between Python
// and the library; every rule lives in the library.
//
// Adding a part (say a batch-size client): write python/src/<part>.cc with a
// function `void bind_<part>(pybind11::module_& core)` and register it with
// ZEUSCPP_BINDING(<order>, bind_<part>); CMake compiles every .cc here.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

namespace zeus::device {
struct DeviceInventory;
}

namespace zeuscpp {

namespace py = pybind11;

// Registration order: a part's classes may derive from or take classes of a
// part registered earlier.
inline constexpr int kOrderErrors = 0;
inline constexpr int kOrderDevice = 20;
inline constexpr int kOrderMonitor = 30;
inline constexpr int kOrderOptimizer = 40;
inline constexpr int kOrderClients = 50;

using BindFunction = void (*)(py::module_& core);

// Adds `fn` to the list the module's init runs, sorted by `order` (then name).
struct BindingRegistration {
  BindingRegistration(int order, const char* name, BindFunction fn);
};

#define ZEUSCPP_BINDING(order, fn) \
  static const ::zeuscpp::BindingRegistration zeuscpp_registration_##fn(order, #fn, &fn)

// Inside a catch block: sets the Python error for the exception in flight
// as pybind11's translators would (zeus::Error -> its zeuscpp exception).
// For functions bound with the raw C API instead of pybind11 (window_calls.cc).
void raise_current_exception();

// Runs every registered binder (module.cc).
void run_bindings(py::module_& core);

// Releases the GIL for the duration of a library call (use as
// py::call_guard<ReleaseGil>). Library log lines written by this thread while
// the GIL is released are kept and handed to Python's `logging` once it is
// taken back, so they keep their order and their thread.
class ReleaseGil {
 public:
  ReleaseGil();
  // May throw: when the interpreter is exiting, taking the GIL back ends a
  // daemon thread by unwinding its stack (pthread_exit), and that unwind must
  // be allowed through here; a noexcept destructor would turn it into
  // std::terminate and lose the script's exit code.
  ~ReleaseGil() noexcept(false);
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

// Routes the library's log to the `zeuscpp` logger (log_sink.cc).
void install_python_log_sink();
// Back to the library's stderr sink; called at interpreter exit, before
// Python can no longer run code.
void uninstall_python_log_sink();

// os.fspath(obj) for str and path-like objects; TypeError otherwise.
std::string fspath(const py::handle& obj);

// The process's devices, discovered once on first use (like the Python Zeus's
// get_gpus()/get_cpus() singletons) and shared by every monitor and optimizer,
// so all of them see the same GPUs (and the same simulated GPU state).
// Thread-safe; releases the GIL while discovering.
std::shared_ptr<const zeus::device::DeviceInventory> device_inventory();

// Stops every power-sampling thread the module started (monitor.cc), so no
// library thread touches a device while the interpreter shuts down.
void stop_background_threads();

}  // namespace zeuscpp
