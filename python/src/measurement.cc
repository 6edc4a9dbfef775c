// zeuscpp.monitor.Measurement as a plain CPython type.
//
// end_window returns one per window, so making it is part of every window's
// cost. As a pybind11 class it cost more than the library's window: a holder
// allocated beside the object, the instance registered in (and removed from)
// pybind11's instance table, and the energy dicts built whether read or not.
// Here the object carries the library's result inline and builds each dict
// the first time it is read. What Python sees is unchanged: the attributes
// (read-write), the totals, ==, repr, pickling (the same state tuples, so
// older pickles load) and the constructor's parameters.
#include <Python.h>

#include <fmt/format.h>

#include <map>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "binding.h"
#include "monitor_binding.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeuscpp {
namespace {

struct MeasurementObject {
  PyObject_HEAD double time;
  // Owned references; nullptr: not built yet (gpu/cpu/dram energy, built
  // from `measured` on first read).
  PyObject* gpu_energy;
  PyObject* cpu_energy;
  PyObject* dram_energy;
  PyObject* soc_energy;      // never nullptr (None without a Jetson)
  PyObject* interrupted_by;  // never nullptr (None unless set)
  // Placement-constructed in tp_new/new_measurement_object, destroyed in dealloc.
  zeus::monitor::Measurement measured;
};

PyTypeObject* g_type = nullptr;  // set once by add_measurement_type, never freed

// Memory of freed Measurements (their members destroyed), reused by the next
// ones: a loop that ends a window per step and drops its Measurement gets the
// same block back instead of a trip through the allocator. Guarded by the GIL.
constexpr int kFreeListSize = 8;
PyObject* g_free[kFreeListSize];
int g_free_count = 0;

MeasurementObject* as_measurement(PyObject* self) {
  return reinterpret_cast<MeasurementObject*>(self);
}

// A new dict {index: joules}, or None for an empty map when none_if_empty.
PyObject* energy_dict(const std::map<int, zeus::Joules>& energies, bool none_if_empty) {
  if (none_if_empty && energies.empty()) Py_RETURN_NONE;
  PyObject* d = PyDict_New();
  if (d == nullptr) return nullptr;
  for (const auto& [index, joules] : energies) {
    PyObject* k = PyLong_FromLong(index);
    PyObject* v = PyFloat_FromDouble(joules.value());
    const int rc = (k != nullptr && v != nullptr) ? PyDict_SetItem(d, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    if (rc != 0) {
      Py_DECREF(d);
      return nullptr;
    }
  }
  return d;
}

// The attribute's object (a borrowed reference), built on first use.
PyObject* gpu_energy(MeasurementObject* m) {
  if (m->gpu_energy == nullptr) m->gpu_energy = energy_dict(m->measured.gpu_energy, false);
  return m->gpu_energy;
}
PyObject* cpu_energy(MeasurementObject* m) {
  if (m->cpu_energy == nullptr) m->cpu_energy = energy_dict(m->measured.cpu_energy, true);
  return m->cpu_energy;
}
PyObject* dram_energy(MeasurementObject* m) {
  if (m->dram_energy == nullptr) m->dram_energy = energy_dict(m->measured.dram_energy, true);
  return m->dram_energy;
}

// A Measurement of `measured` (empty: time 0, nothing measured, what __new__
// and unpickling start from).
PyObject* allocate(PyTypeObject* type, zeus::monitor::Measurement&& measured) {
  PyObject* self = nullptr;
  if (type == g_type && g_free_count > 0) {
    self = g_free[--g_free_count];
    PyObject_Init(self, type);  // a new reference, and one to the type
  } else {
    self = type->tp_alloc(type, 0);
  }
  if (self == nullptr) return nullptr;
  MeasurementObject* m = as_measurement(self);
  m->gpu_energy = m->cpu_energy = m->dram_energy = nullptr;
  m->soc_energy = Py_NewRef(Py_None);
  m->interrupted_by = Py_NewRef(Py_None);
  new (&m->measured) zeus::monitor::Measurement(std::move(measured));
  m->time = m->measured.time.count();
  return self;
}

PyObject* measurement_new(PyTypeObject* type, PyObject*, PyObject*) {
  return allocate(type, zeus::monitor::Measurement());
}

void measurement_dealloc(PyObject* self) {
  MeasurementObject* m = as_measurement(self);
  Py_CLEAR(m->gpu_energy);
  Py_CLEAR(m->cpu_energy);
  Py_CLEAR(m->dram_energy);
  Py_CLEAR(m->soc_energy);
  Py_CLEAR(m->interrupted_by);
  m->measured.~Measurement();
  PyTypeObject* type = Py_TYPE(self);
  if (type == g_type && g_free_count < kFreeListSize) {
    g_free[g_free_count++] = self;
  } else {
    type->tp_free(self);
  }
  Py_DECREF(type);  // instances of heap types hold a reference to their type
}

void replace(PyObject*& slot, PyObject* value) {
  PyObject* old = slot;
  slot = Py_XNewRef(value);
  Py_XDECREF(old);
}

int measurement_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"time",        "gpu_energy", "cpu_energy",
                                   "dram_energy", "soc_energy", nullptr};
  double time = 0;
  PyObject* gpu = nullptr;
  PyObject* cpu = Py_None;
  PyObject* dram = Py_None;
  PyObject* soc = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "dO!|OOO:Measurement",
                                   const_cast<char**>(keywords), &time, &PyDict_Type, &gpu, &cpu,
                                   &dram, &soc)) {
    return -1;
  }
  MeasurementObject* m = as_measurement(self);
  m->time = time;
  replace(m->gpu_energy, gpu);
  replace(m->cpu_energy, cpu);
  replace(m->dram_energy, dram);
  replace(m->soc_energy, soc);
  return 0;
}

int refuse_delete(PyObject* value, const char* name) {
  if (value != nullptr) return 0;
  PyErr_Format(PyExc_AttributeError, "can't delete Measurement.%s", name);
  return -1;
}

PyObject* soc_energy(MeasurementObject* m) { return m->soc_energy; }

// The four energy attributes: the getter builds the object on first use
// (`Built`), the setter replaces it; their name is the getset's closure.
template <PyObject* (*Built)(MeasurementObject*)>
PyObject* get_energy(PyObject* self, void*) {
  return Py_XNewRef(Built(as_measurement(self)));
}
template <PyObject* MeasurementObject::*Slot, bool kDictOnly>
int set_energy(PyObject* self, PyObject* value, void* name) {
  if (refuse_delete(value, static_cast<const char*>(name)) != 0) return -1;
  if (kDictOnly && !PyDict_Check(value)) {  // upstream's type insists on a dict here
    PyErr_Format(PyExc_TypeError, "Measurement.%s must be a dict, not %s",
                 static_cast<const char*>(name), Py_TYPE(value)->tp_name);
    return -1;
  }
  replace(as_measurement(self)->*Slot, value);
  return 0;
}

PyObject* get_interrupted_by(PyObject* self, void*) {
  return Py_NewRef(as_measurement(self)->interrupted_by);
}
int set_interrupted_by(PyObject* self, PyObject* value, void*) {
  if (refuse_delete(value, "interrupted_by") != 0) return -1;
  replace(as_measurement(self)->interrupted_by, value);
  return 0;
}

// The sum of a {index: joules} dict's values (0 for None); -1 with an error set.
int sum_values(PyObject* d, double& total) {
  if (d == nullptr) return -1;
  if (d == Py_None) return 0;
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "Measurement energies must be dicts or None");
    return -1;
  }
  Py_ssize_t pos = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  while (PyDict_Next(d, &pos, &key, &value)) {
    const double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred() != nullptr) return -1;
    total += v;
  }
  return 0;
}

PyObject* get_total_gpu_energy(PyObject* self, void*) {
  double total = 0;
  if (sum_values(gpu_energy(as_measurement(self)), total) != 0) return nullptr;
  return PyFloat_FromDouble(total);
}

PyObject* get_total_device_energy(PyObject* self, void*) {
  MeasurementObject* m = as_measurement(self);
  double total = 0;
  if (sum_values(gpu_energy(m), total) != 0 || sum_values(cpu_energy(m), total) != 0 ||
      sum_values(dram_energy(m), total) != 0) {
    return nullptr;
  }
  return PyFloat_FromDouble(total);
}

PyObject* get_is_empty(PyObject* self, void*) {
  MeasurementObject* m = as_measurement(self);
  bool empty = m->soc_energy == Py_None;
  for (PyObject* d : {gpu_energy(m), cpu_energy(m), dram_energy(m)}) {
    if (d == nullptr) return nullptr;
    if (d == Py_None) continue;
    const Py_ssize_t n = PyObject_Length(d);
    if (n < 0) return nullptr;
    empty = empty && n == 0;
  }
  return PyBool_FromLong(empty ? 1 : 0);
}

PyObject* get_gpus_below_update_period(PyObject* self, void*) {
  const auto& below = as_measurement(self)->measured.gpus_below_update_period;
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(below.size()));
  if (list == nullptr) return nullptr;
  for (std::size_t i = 0; i < below.size(); ++i) {
    PyObject* v = PyLong_FromLong(below[i]);
    if (v == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), v);
  }
  return list;
}

PyObject* get_gpu_energy_source(PyObject* self, void*) {
  PyObject* d = PyDict_New();
  if (d == nullptr) return nullptr;
  for (const auto& [index, source] : as_measurement(self)->measured.gpu_energy_source) {
    PyObject* k = PyLong_FromLong(index);
    PyObject* v = PyUnicode_FromString(zeus::monitor::energy_source_name(source));
    const int rc = (k != nullptr && v != nullptr) ? PyDict_SetItem(d, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    if (rc != 0) {
      Py_DECREF(d);
      return nullptr;
    }
  }
  return d;
}

// 1 equal, 0 not, -1 error.
int equal(PyObject* a, PyObject* b) {
  if (a == nullptr || b == nullptr) return -1;
  return PyObject_RichCompareBool(a, b, Py_EQ);
}

PyObject* measurement_richcompare(PyObject* self, PyObject* other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  int same = 0;
  if (PyObject_TypeCheck(other, g_type)) {
    MeasurementObject* a = as_measurement(self);
    MeasurementObject* b = as_measurement(other);
    same = a->time == b->time ? 1 : 0;
    if (same == 1) same = equal(gpu_energy(a), gpu_energy(b));
    if (same == 1) same = equal(cpu_energy(a), cpu_energy(b));
    if (same == 1) same = equal(dram_energy(a), dram_energy(b));
    if (same == 1) same = equal(a->soc_energy, b->soc_energy);
    if (same < 0) return nullptr;
  }
  return PyBool_FromLong((same == 1) == (op == Py_EQ) ? 1 : 0);
}

// repr(o) as UTF-8, or nullopt with an error set.
std::optional<std::string> repr_of(PyObject* o) {
  if (o == nullptr) return std::nullopt;
  PyObject* r = PyObject_Repr(o);
  if (r == nullptr) return std::nullopt;
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(r, &size);
  std::optional<std::string> out;
  if (text != nullptr) out.emplace(text, static_cast<std::size_t>(size));
  Py_DECREF(r);
  return out;
}

PyObject* measurement_repr(PyObject* self) {
  MeasurementObject* m = as_measurement(self);
  PyObject* time = PyFloat_FromDouble(m->time);
  const auto t = repr_of(time);
  Py_XDECREF(time);
  const auto gpu = repr_of(gpu_energy(m));
  const auto cpu = repr_of(cpu_energy(m));
  const auto dram = repr_of(dram_energy(m));
  std::optional<std::string> soc = std::string();
  std::optional<std::string> interrupted = std::string();
  if (m->soc_energy != Py_None) soc = repr_of(m->soc_energy);
  if (m->interrupted_by != Py_None) interrupted = repr_of(m->interrupted_by);
  if (!t || !gpu || !cpu || !dram || !soc || !interrupted) return nullptr;
  const std::string text =
      fmt::format("Measurement(time={}, gpu_energy={}, cpu_energy={}, dram_energy={}{}{})", *t,
                  *gpu, *cpu, *dram, soc->empty() ? "" : ", soc_energy=" + *soc,
                  interrupted->empty() ? "" : ", interrupted_by=" + *interrupted);
  return PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
}

PyObject* measurement_getstate(PyObject* self, PyObject*) {
  MeasurementObject* m = as_measurement(self);
  if (gpu_energy(m) == nullptr || cpu_energy(m) == nullptr || dram_energy(m) == nullptr) {
    return nullptr;
  }
  PyObject* time = PyFloat_FromDouble(m->time);
  if (time == nullptr) return nullptr;
  PyObject* state =
      m->interrupted_by == Py_None
          ? PyTuple_Pack(5, time, m->gpu_energy, m->cpu_energy, m->dram_energy, m->soc_energy)
          : PyTuple_Pack(6, time, m->gpu_energy, m->cpu_energy, m->dram_energy, m->soc_energy,
                         m->interrupted_by);
  Py_DECREF(time);
  return state;
}

PyObject* measurement_setstate(PyObject* self, PyObject* state) {
  // 4: pickled before soc_energy existed; 6: with interrupted_by.
  const Py_ssize_t n = PyTuple_Check(state) ? PyTuple_GET_SIZE(state) : -1;
  if (n < 4 || n > 6) {
    PyErr_SetString(PyExc_ValueError, "bad Measurement pickle");
    return nullptr;
  }
  const double time = PyFloat_AsDouble(PyTuple_GET_ITEM(state, 0));
  if (time == -1.0 && PyErr_Occurred() != nullptr) return nullptr;
  if (!PyDict_Check(PyTuple_GET_ITEM(state, 1))) {
    PyErr_SetString(PyExc_TypeError, "bad Measurement pickle: gpu_energy is not a dict");
    return nullptr;
  }
  MeasurementObject* m = as_measurement(self);
  m->time = time;
  replace(m->gpu_energy, PyTuple_GET_ITEM(state, 1));
  replace(m->cpu_energy, PyTuple_GET_ITEM(state, 2));
  replace(m->dram_energy, PyTuple_GET_ITEM(state, 3));
  replace(m->soc_energy, n >= 5 ? PyTuple_GET_ITEM(state, 4) : Py_None);
  replace(m->interrupted_by, n == 6 ? PyTuple_GET_ITEM(state, 5) : Py_None);
  Py_RETURN_NONE;
}

PyObject* get_time(PyObject* self, void*) { return PyFloat_FromDouble(as_measurement(self)->time); }
int set_time(PyObject* self, PyObject* value, void*) {
  if (refuse_delete(value, "time") != 0) return -1;
  const double time = PyFloat_AsDouble(value);
  if (time == -1.0 && PyErr_Occurred() != nullptr) return -1;
  as_measurement(self)->time = time;
  return 0;
}

PyGetSetDef g_getset[] = {
    {"time", get_time, set_time, "Seconds the window lasted.", nullptr},
    {"gpu_energy", get_energy<gpu_energy>, set_energy<&MeasurementObject::gpu_energy, true>,
     "Joules per GPU index (CUDA_VISIBLE_DEVICES applied).", const_cast<char*>("gpu_energy")},
    {"cpu_energy", get_energy<cpu_energy>, set_energy<&MeasurementObject::cpu_energy, false>,
     "Joules per CPU package index, or None without CPU measurement.",
     const_cast<char*>("cpu_energy")},
    {"dram_energy", get_energy<dram_energy>, set_energy<&MeasurementObject::dram_energy, false>,
     "Joules per CPU package's DRAM, or None without DRAM measurement.",
     const_cast<char*>("dram_energy")},
    {"soc_energy", get_energy<soc_energy>, set_energy<&MeasurementObject::soc_energy, false>,
     "A Jetson board's rails (zeuscpp.device.soc.jetson.JetsonMeasurement, in mJ as upstream), "
     "or None without one.",
     const_cast<char*>("soc_energy")},
    {"interrupted_by", get_interrupted_by, set_interrupted_by,
     "repr() of the exception that ended the window early (a `with monitor.window(...)` block "
     "or a function under zeuscpp.monitor.measure that raised), or None: such a window "
     "measured the work up to the exception only.",
     nullptr},
    {"total_energy", get_total_gpu_energy, nullptr,
     "Joules of all GPUs (GPUs only, as in the Python Zeus).", nullptr},
    {"total_gpu_energy", get_total_gpu_energy, nullptr, "Joules of all GPUs.", nullptr},
    {"total_device_energy", get_total_device_energy, nullptr,
     "Joules of all GPUs, CPU packages and DRAM.", nullptr},
    {"is_empty", get_is_empty, nullptr,
     "True when no device was measured (the monitor had none): its totals are not a measured "
     "0 J.",
     nullptr},
    {"gpus_below_update_period", get_gpus_below_update_period, nullptr,
     "GPUs whose energy counter did not move: the window was shorter than the counter's update "
     "period, so their energy is 0 (or approximated with approx_instant_energy).",
     nullptr},
    {"gpu_energy_source", get_gpu_energy_source, nullptr,
     "Where each GPU's energy came from: 'counter', 'power_timeline' or "
     "'instant_power_approx'.",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// Measurement.__init__ as a method with a text signature, so that
// inspect.signature and help() show its parameters (the tp_init slot's
// wrapper would show only *args, **kwargs); the slot itself stays.
PyObject* measurement_init_method(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (measurement_init(self, args, kwargs) != 0) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef g_init = {
    "__init__",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&measurement_init_method)),
    METH_VARARGS | METH_KEYWORDS,
    "__init__($self, /, time, gpu_energy, cpu_energy=None, dram_energy=None, soc_energy=None)\n"
    "--\n\nA Measurement of `time` seconds with these energies (joules by index)."};

PyMethodDef g_methods[] = {{"__getstate__", measurement_getstate, METH_NOARGS, nullptr},
                           {"__setstate__", measurement_setstate, METH_O, nullptr},
                           {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyObject* new_measurement_object(zeus::monitor::Measurement&& m) {
  PyObject* self = allocate(g_type, std::move(m));
  if (self == nullptr) return nullptr;
  MeasurementObject* o = as_measurement(self);
  if (const auto& soc_energy = o->measured.soc_energy) {
    try {
      const auto millijoules = [](const std::optional<zeus::Joules>& e) -> py::object {
        return e ? py::object(py::float_(e->value() * 1e3)) : py::object(py::none());
      };
      py::object soc =
          py::module_::import("zeuscpp.device.soc.jetson")
              .attr("JetsonMeasurement")(millijoules(soc_energy->cpu), millijoules(soc_energy->gpu),
                                         millijoules(soc_energy->total));
      replace(o->soc_energy, soc.ptr());
    } catch (...) {
      Py_DECREF(self);
      throw;
    }
  }
  return self;
}

py::object to_python(zeus::monitor::Measurement m) {
  PyObject* o = new_measurement_object(std::move(m));
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

void add_measurement_type(py::module_& module) {
  const std::string name = module.attr("__name__").cast<std::string>() + ".Measurement";
  // PyType_FromSpec keeps the pointer to the name: it must outlive the type.
  static const std::string type_name = name;
  static PyType_Slot slots[] = {
      {Py_tp_doc,
       const_cast<char*>("Measurement(time, gpu_energy, cpu_energy=None, dram_energy=None, "
                         "soc_energy=None)\n--\n\nThe time and energy of one window.")},
      {Py_tp_new, reinterpret_cast<void*>(&measurement_new)},
      {Py_tp_init, reinterpret_cast<void*>(&measurement_init)},
      {Py_tp_dealloc, reinterpret_cast<void*>(&measurement_dealloc)},
      {Py_tp_repr, reinterpret_cast<void*>(&measurement_repr)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&measurement_richcompare)},
      {Py_tp_hash, reinterpret_cast<void*>(&PyObject_HashNotImplemented)},
      {Py_tp_getset, g_getset},
      {Py_tp_methods, g_methods},
      {0, nullptr}};
  static PyType_Spec spec = {type_name.c_str(), static_cast<int>(sizeof(MeasurementObject)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) throw py::error_already_set();
  g_type = reinterpret_cast<PyTypeObject*>(type);  // the module below holds a reference too
  // Put in the type's dict directly: setattr would route tp_init through a
  // lookup of __init__ on every construction.
  PyObject* init = PyDescr_NewMethod(g_type, &g_init);
  if (init == nullptr || PyDict_SetItemString(g_type->tp_dict, "__init__", init) != 0) {
    Py_XDECREF(init);
    Py_DECREF(type);
    throw py::error_already_set();
  }
  Py_DECREF(init);
  PyType_Modified(g_type);
  Py_INCREF(type);
  if (PyModule_AddObject(module.ptr(), "Measurement", type) != 0) {
    Py_DECREF(type);
    throw py::error_already_set();
  }
}

}  // namespace zeuscpp
