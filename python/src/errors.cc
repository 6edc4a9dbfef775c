// zeus::Error -> the Python exception of its code (zeuscpp/exception.py holds
// the hierarchy and the code -> class table). The message is the library's,
// unchanged; the code name and, for NVML failures, the NVML return value and
// function ride along as attributes.
#include <pybind11/pybind11.h>

#include <cxxabi.h>

#include <exception>
#include <string>

#include "binding.h"
#include "zeus/device/nvml.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

void raise_library_error(const zeus::Error& e, const zeus::device::NvmlError* nvml) {
  const std::string code(zeus::error_code_name(e.code()));
  try {
    py::object cls = py::module_::import("zeuscpp.exception").attr("error_class_for_code")(code);
    py::object exc = cls(e.what());
    exc.attr("code") = code;
    if (nvml != nullptr) {
      exc.attr("nvml_return") = nvml->nvml_return();
      exc.attr("nvml_function") = nvml->function();
    }
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (py::error_already_set&) {
    // The package is incomplete (e.g. _core imported on its own): still say what failed.
    PyErr_SetString(PyExc_RuntimeError, (code + ": " + e.what()).c_str());
  }
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const zeus::device::NvmlError& e) {
    raise_library_error(e, &e);
  } catch (const zeus::Error& e) {
    raise_library_error(e, nullptr);
  }
}

}  // namespace

void raise_current_exception() {
  try {
    throw;
  } catch (const abi::__forced_unwind&) {
    throw;  // a daemon thread ending at interpreter exit (see ReleaseGil)
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const zeus::device::NvmlError& e) {
    raise_library_error(e, &e);
  } catch (const zeus::Error& e) {
    raise_library_error(e, nullptr);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

namespace {

void bind_errors(py::module_& core) {
  py::register_exception_translator(&translate);
  core.def(
      "_raise_library_error",
      [](const std::string& code, const std::string& message) {
        for (int c = 0; c <= static_cast<int>(zeus::ErrorCode::kUnknown); ++c) {
          const auto ec = static_cast<zeus::ErrorCode>(c);
          if (zeus::error_code_name(ec) == code) throw zeus::Error(ec, message);
        }
        throw zeus::Error(zeus::ErrorCode::kInvalidArgument, "no error code named '" + code + "'");
      },
      py::arg("code"), py::arg("message"),
      "Throws a zeus::Error with this code through the translator (tests of the mapping).");
  core.attr("_error_code_names") = [] {
    py::list names;
    for (int c = 0; c <= static_cast<int>(zeus::ErrorCode::kUnknown); ++c) {
      names.append(std::string(zeus::error_code_name(static_cast<zeus::ErrorCode>(c))));
    }
    return names;
  }();
}

}  // namespace

ZEUSCPP_BINDING(kOrderErrors, bind_errors);

}  // namespace zeuscpp
