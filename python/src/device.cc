// zeuscpp.device: the device layer with the Python Zeus's GPU/CPU manager
// methods (index first; mW, mJ, MHz, °C as upstream). Device calls release
// the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "binding.h"
#include "device/environment_report_json.h"
#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

std::mutex g_inventory_mutex;  // guards g_inventory
std::shared_ptr<const zeus::device::DeviceInventory> g_inventory;

long long to_mw(zeus::Watts w) { return std::llround(w.value() * 1000.0); }

// A GPU manager over the inventory (upstream's GPUs). Immutable; thread-safe
// because the Gpu objects are.
struct Gpus {
  std::shared_ptr<const zeus::device::DeviceInventory> inv;

  const std::shared_ptr<zeus::device::Gpu>& gpu(int index) const {
    if (index < 0 || static_cast<std::size_t>(index) >= inv->gpus.size()) {
      // The library's wording for an unknown index.
      (void)zeus::device::select_devices(*inv, std::vector<int>{index}, std::vector<int>{});
    }
    return inv->gpus[static_cast<std::size_t>(index)];
  }
};

struct Cpus {
  std::shared_ptr<const zeus::device::DeviceInventory> inv;

  const std::shared_ptr<zeus::device::Cpu>& cpu(int index) const {
    if (index < 0 || static_cast<std::size_t>(index) >= inv->cpus.size()) {
      (void)zeus::device::select_devices(*inv, std::vector<int>{}, std::vector<int>{index});
    }
    return inv->cpus[static_cast<std::size_t>(index)];
  }
};

// Energy of a CPU package and its DRAM in mJ (upstream's CpuDramMeasurement).
struct CpuDramMeasurement {
  double cpu_mj = 0;
  std::optional<double> dram_mj;
};

std::shared_ptr<zeus::device::SimGpu> simulated(const Gpus& gpus, int index) {
  auto sim = std::dynamic_pointer_cast<zeus::device::SimGpu>(gpus.gpu(index));
  if (!sim) {
    zeus::throw_error(zeus::ErrorCode::kFailedPrecondition,
                      "GPU " + std::to_string(index) + " is not simulated (backend '" +
                          gpus.inv->gpu_backend +
                          "'); set ZEUS_GPU_BACKEND=sim before the first device access");
  }
  return sim;
}

py::object environment_report_dict() {
  auto inv = device_inventory();
  const std::string text = zeus::device::environment_report(*inv).dump();
  return py::module_::import("json").attr("loads")(text);
}

// GPUs.__len__, the backend, indices and what identifies each GPU.
void bind_gpu_identity(py::class_<Gpus>& gpus) {
  using G = Gpus;
  using R = ReleaseGil;
  gpus.def("__len__", [](const G& g) { return g.inv->gpus.size(); })
      .def_property_readonly(
          "backend", [](const G& g) { return g.inv->gpu_backend; }, "'nvml', 'sim' or 'none'.")
      .def_property_readonly(
          "physical_indices", [](const G& g) { return g.inv->gpu_physical_indices; },
          "NVML (or simulator) index of each GPU.")
      .def(
          "get_name", [](const G& g, int i) { return g.gpu(i)->name(); }, py::arg("gpu_index"),
          py::call_guard<R>(), "The GPU's product name.")
      .def(
          "get_uuid", [](const G& g, int i) { return g.gpu(i)->uuid(); }, py::arg("gpu_index"),
          py::call_guard<R>(), "The GPU's UUID.")
      .def(
          "get_architecture",
          [](const G& g, int i) {
            return std::string(zeus::device::architecture_name(g.gpu(i)->architecture()));
          },
          py::arg("gpu_index"), py::call_guard<R>(), "Architecture name, e.g. 'hopper'.");
}

// GPUs' power limit and persistence mode, read and set.
void bind_gpu_power_limit_and_persistence(py::class_<Gpus>& gpus) {
  using G = Gpus;
  using R = ReleaseGil;
  gpus.def(
          "get_power_management_limit_constraints",
          [](const G& g, int i) {
            const auto c = g.gpu(i)->power_limit_constraints();
            return std::make_pair(c.min.value(), c.max.value());
          },
          py::arg("gpu_index"), py::call_guard<R>(), "(min, max) power limit in mW.")
      .def(
          "get_power_management_limit",
          [](const G& g, int i) { return g.gpu(i)->power_limit().value(); }, py::arg("gpu_index"),
          py::call_guard<R>(), "Current power limit in mW.")
      .def(
          "get_default_power_management_limit",
          [](const G& g, int i) { return g.gpu(i)->default_power_limit().value(); },
          py::arg("gpu_index"), py::call_guard<R>(), "Default power limit in mW.")
      .def(
          "set_power_management_limit",
          [](const G& g, int i, long long mw, bool) {
            g.gpu(i)->set_power_limit(zeus::Milliwatts(mw));
          },
          py::arg("gpu_index"), py::arg("power_limit_mw"), py::arg("block") = true,
          py::call_guard<R>(),
          "Sets the power limit (mW). Not restored at exit: only changes made by an optimizer "
          "are. `block` is accepted for compatibility (calls always block).")
      .def(
          "reset_power_management_limit",
          [](const G& g, int i, bool) { g.gpu(i)->reset_power_limit(); }, py::arg("gpu_index"),
          py::arg("block") = true, py::call_guard<R>(), "Back to the default power limit.")
      .def(
          "get_persistence_mode", [](const G& g, int i) { return g.gpu(i)->persistence_mode(); },
          py::arg("gpu_index"), py::call_guard<R>(), "Whether persistence mode is on.")
      .def(
          "set_persistence_mode",
          [](const G& g, int i, bool enabled, bool) { g.gpu(i)->set_persistence_mode(enabled); },
          py::arg("gpu_index"), py::arg("enabled"), py::arg("block") = true, py::call_guard<R>(),
          "Turns persistence mode on or off.");
}

// GPUs' supported clocks and clock locking.
void bind_gpu_clocks(py::class_<Gpus>& gpus) {
  using G = Gpus;
  using R = ReleaseGil;
  gpus.def(
          "get_supported_memory_clocks",
          [](const G& g, int i) {
            std::vector<long long> out;
            for (auto c : g.gpu(i)->supported_memory_clocks()) out.push_back(c.value());
            return out;
          },
          py::arg("gpu_index"), py::call_guard<R>(), "Supported memory clocks (MHz).")
      .def(
          "get_supported_graphics_clocks",
          [](const G& g, int i, std::optional<long long> memory_mhz) {
            auto& gpu = g.gpu(i);
            zeus::Megahertz mem =
                memory_mhz ? zeus::Megahertz(*memory_mhz) : gpu->supported_memory_clocks().at(0);
            std::vector<long long> out;
            for (auto c : gpu->supported_graphics_clocks(mem)) out.push_back(c.value());
            return out;
          },
          py::arg("gpu_index"), py::arg("memory_clock_mhz") = py::none(), py::call_guard<R>(),
          "Supported graphics clocks (MHz) at a memory clock (default: the highest).")
      .def(
          "set_gpu_locked_clocks",
          [](const G& g, int i, long long lo, long long hi, bool) {
            g.gpu(i)->set_gpu_locked_clocks(zeus::Megahertz(lo), zeus::Megahertz(hi));
          },
          py::arg("gpu_index"), py::arg("min_clock_mhz"), py::arg("max_clock_mhz"),
          py::arg("block") = true, py::call_guard<R>(), "Locks the graphics clock range.")
      .def(
          "reset_gpu_locked_clocks",
          [](const G& g, int i, bool) { g.gpu(i)->reset_gpu_locked_clocks(); },
          py::arg("gpu_index"), py::arg("block") = true, py::call_guard<R>(),
          "Unlocks the graphics clock.")
      .def(
          "set_memory_locked_clocks",
          [](const G& g, int i, long long lo, long long hi, bool) {
            g.gpu(i)->set_memory_locked_clocks(zeus::Megahertz(lo), zeus::Megahertz(hi));
          },
          py::arg("gpu_index"), py::arg("min_clock_mhz"), py::arg("max_clock_mhz"),
          py::arg("block") = true, py::call_guard<R>(), "Locks the memory clock range.")
      .def(
          "reset_memory_locked_clocks",
          [](const G& g, int i, bool) { g.gpu(i)->reset_memory_locked_clocks(); },
          py::arg("gpu_index"), py::arg("block") = true, py::call_guard<R>(),
          "Unlocks the memory clock.")
      .def(
          "reset_locked_clocks",
          [](const G& g, int i, bool) {
            g.gpu(i)->reset_gpu_locked_clocks();
            g.gpu(i)->reset_memory_locked_clocks();
          },
          py::arg("gpu_index"), py::arg("block") = true, py::call_guard<R>(),
          "Unlocks both clock domains.");
}

// GPUs' power, energy and temperature readings, and the simulator's handle.
void bind_gpu_readings(py::class_<Gpus>& gpus) {
  using G = Gpus;
  using R = ReleaseGil;
  gpus.def(
          "get_instant_power_usage",
          [](const G& g, int i) {
            return to_mw(g.gpu(i)->power(zeus::device::PowerDomain::kDeviceInstant));
          },
          py::arg("gpu_index"), py::call_guard<R>(), "Current board power (mW).")
      .def(
          "get_average_power_usage",
          [](const G& g, int i) {
            return to_mw(g.gpu(i)->power(zeus::device::PowerDomain::kDeviceAverage));
          },
          py::arg("gpu_index"), py::call_guard<R>(), "Board power averaged by the driver (mW).")
      .def(
          "get_average_memory_power_usage",
          [](const G& g, int i) {
            return to_mw(g.gpu(i)->power(zeus::device::PowerDomain::kMemoryAverage));
          },
          py::arg("gpu_index"), py::call_guard<R>(), "Average memory power (mW; HBM GPUs).")
      .def(
          "supports_get_total_energy_consumption",
          [](const G& g, int i) { return g.gpu(i)->supports_energy_counter(); },
          py::arg("gpu_index"), py::call_guard<R>(), "Whether the GPU has an energy counter.")
      .def(
          "get_total_energy_consumption",
          [](const G& g, int i) { return g.gpu(i)->total_energy().value() * 1000.0; },
          py::arg("gpu_index"), py::call_guard<R>(),
          "Energy counter (mJ since an arbitrary origin; only differences mean anything).")
      .def(
          "get_gpu_temperature", [](const G& g, int i) { return g.gpu(i)->temperature().value(); },
          py::arg("gpu_index"), py::call_guard<R>(), "GPU temperature (degrees Celsius).")
      .def("simulated", &simulated, py::arg("gpu_index"),
           "The simulated GPU at this index, for driving the simulator from a script "
           "(ZEUS_GPU_BACKEND=sim only).");
}

void bind_gpus_class(py::module_& m) {
  py::class_<Gpus> gpus(
      m, "GPUs",
      "The GPUs this process can see, indexed as CUDA indexes them "
      "(CUDA_VISIBLE_DEVICES applied). Methods take the GPU index first; units are "
      "mW, mJ, MHz and degrees Celsius, as in the Python Zeus.");
  bind_gpu_identity(gpus);
  bind_gpu_power_limit_and_persistence(gpus);
  bind_gpu_clocks(gpus);
  bind_gpu_readings(gpus);
}

void bind_simulated_gpu_class(py::module_& m) {
  using R = ReleaseGil;
  py::class_<zeus::device::SimGpu, std::shared_ptr<zeus::device::SimGpu>>(
      m, "SimulatedGPU",
      "Controls of a simulated GPU (zeuscpp extension): its work runs on a physical "
      "power/speed model, so a lower power limit makes work slower and cheaper.")
      .def(
          "execute", [](zeus::device::SimGpu& g, double work) { return g.execute(work).count(); },
          py::arg("work_units"), py::call_guard<R>(),
          "Runs work at full load (sleeps for work / throughput) and returns the seconds taken.")
      .def("set_load", &zeus::device::SimGpu::set_load, py::arg("load"), py::call_guard<R>(),
           "Sets the utilization in [0, 1].")
      .def_property_readonly("load", &zeus::device::SimGpu::load, "Current utilization.")
      .def_property_readonly("throughput", &zeus::device::SimGpu::throughput,
                             "Current work rate (units per second).")
      .def(
          "true_energy", [](zeus::device::SimGpu& g) { return g.true_energy().value(); },
          py::call_guard<R>(), "Energy (J) the model used since creation: the ground truth.");
}

void bind_cpu_dram_measurement_class(py::module_& m) {
  py::class_<CpuDramMeasurement>(m, "CpuDramMeasurement",
                                 "Cumulative energy of a CPU package and its DRAM (mJ).")
      .def(py::init([](double cpu, std::optional<double> dram) {
             return CpuDramMeasurement{cpu, dram};
           }),
           py::arg("cpu_mj"), py::arg("dram_mj") = py::none())
      .def_readwrite("cpu_mj", &CpuDramMeasurement::cpu_mj, "Package energy (mJ).")
      .def_readwrite("dram_mj", &CpuDramMeasurement::dram_mj, "DRAM energy (mJ) or None.")
      .def("__sub__",
           [](const CpuDramMeasurement& a, const CpuDramMeasurement& b) {
             CpuDramMeasurement d{a.cpu_mj - b.cpu_mj, std::nullopt};
             if (a.dram_mj && b.dram_mj) d.dram_mj = *a.dram_mj - *b.dram_mj;
             return d;
           })
      .def("__repr__", [](const CpuDramMeasurement& x) {
        return "CpuDramMeasurement(cpu_mj=" + std::to_string(x.cpu_mj) +
               ", dram_mj=" + (x.dram_mj ? std::to_string(*x.dram_mj) : "None") + ")";
      });
}

void bind_cpus_class(py::module_& m) {
  using R = ReleaseGil;
  py::class_<Cpus>(m, "CPUs", "The CPU packages (RAPL) this process can read.")
      .def("__len__", [](const Cpus& c) { return c.inv->cpus.size(); })
      .def(
          "get_total_energy_consumption",
          [](const Cpus& c, int i) {
            const zeus::device::CpuEnergy e = c.cpu(i)->total_energy();
            CpuDramMeasurement out{e.package.value() * 1000.0, std::nullopt};
            if (e.dram) out.dram_mj = e.dram->value() * 1000.0;
            return out;
          },
          py::arg("cpu_index"), py::call_guard<R>(), "Cumulative package and DRAM energy (mJ).")
      .def(
          "supports_get_dram_energy_consumption",
          [](const Cpus& c, int i) { return c.cpu(i)->has_dram(); }, py::arg("cpu_index"),
          py::call_guard<R>(), "Whether the package has a DRAM zone.");
}

// get_gpus, get_cpus and the module's other functions.
void bind_device_functions(py::module_& m) {
  m.def(
      "get_gpus",
      [](bool ensure_homogeneous) {
        Gpus g{device_inventory()};
        if (ensure_homogeneous && !g.inv->gpus.empty()) {
          ReleaseGil release;
          const std::string first = g.inv->gpus[0]->name();
          for (std::size_t k = 1; k < g.inv->gpus.size(); ++k) {
            const std::string other = g.inv->gpus[k]->name();
            if (other != first) {
              zeus::throw_error(zeus::ErrorCode::kHeterogeneous,
                                "GPUs differ: GPU 0 is '" + first + "' but GPU " +
                                    std::to_string(k) + " is '" + other +
                                    "'; restrict CUDA_VISIBLE_DEVICES to one kind of GPU");
            }
          }
        }
        return g;
      },
      py::arg("ensure_homogeneous") = false, "The process's GPU manager.");
  m.def(
      "get_cpus", [] { return Cpus{device_inventory()}; }, "The process's CPU manager.");
  m.def(
      "notes", [] { return device_inventory()->notes; },
      "Plain-language notes from discovery (a missing driver, unreadable RAPL, ...).");
  m.def("environment_report", &environment_report_dict,
        "What `zeus show-env --json` reports, as a dict.");
  m.def(
      "_reset_devices",
      [] {
        std::lock_guard lock(g_inventory_mutex);
        g_inventory.reset();
      },
      "Forgets the discovered devices; the next access discovers again (tests).");
}

void bind_device(py::module_& core) {
  py::module_ m = core.def_submodule("device", "Device layer bindings.");
  bind_gpus_class(m);
  bind_simulated_gpu_class(m);
  bind_cpu_dram_measurement_class(m);
  bind_cpus_class(m);
  bind_device_functions(m);
}

}  // namespace

std::shared_ptr<const zeus::device::DeviceInventory> device_inventory() {
  ReleaseGil release;
  std::lock_guard lock(g_inventory_mutex);
  if (!g_inventory) {
    g_inventory =
        std::make_shared<const zeus::device::DeviceInventory>(zeus::device::discover_devices());
  }
  return g_inventory;
}

ZEUSCPP_BINDING(kOrderDevice, bind_device);

}  // namespace zeuscpp
