// zeuscpp.metric: the library's Pushgateway metric classes (zeus/metric/
// pushgateway.h) with the Python Zeus's constructor arguments, over the
// process's shared devices. Calls that measure or push release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "binding.h"
#include "zeus/device/devices.h"
#include "zeus/metric/pushgateway.h"

namespace zeuscpp {
namespace {

void bind_metric(py::module_& core) {
  py::module_ m = core.def_submodule("metric", "Pushgateway metrics (zeus.metric).");
  using R = ReleaseGil;
  py::class_<zeus::metric::EnergyHistogram>(m, "EnergyHistogram")
      .def(py::init([](std::vector<int> cpu_indices, std::vector<int> gpu_indices,
                       std::string pushgateway_url, std::string job, std::vector<double> gpu,
                       std::vector<double> cpu, std::vector<double> dram) {
             auto inv = device_inventory();
             ReleaseGil release;
             return std::make_unique<zeus::metric::EnergyHistogram>(
                 *inv, std::move(cpu_indices), std::move(gpu_indices), std::move(pushgateway_url),
                 std::move(job), std::move(gpu), std::move(cpu), std::move(dram));
           }),
           py::arg("cpu_indices"), py::arg("gpu_indices"), py::arg("pushgateway_url"),
           py::arg("job"),
           py::arg("gpu_bucket_range") = std::vector<double>{50.0, 100.0, 200.0, 500.0, 1000.0},
           py::arg("cpu_bucket_range") = std::vector<double>{10.0, 50.0, 100.0, 500.0, 1000.0},
           py::arg("dram_bucket_range") = std::vector<double>{5.0, 10.0, 20.0, 50.0, 150.0})
      .def("begin_window", &zeus::metric::EnergyHistogram::begin_window, py::arg("name"),
           py::arg("sync_execution") = true, py::call_guard<R>())
      .def(
          "end_window",
          [](zeus::metric::EnergyHistogram& h, const std::string& name, bool sync) {
            ReleaseGil release;
            h.end_window(name, sync);
          },
          py::arg("name"), py::arg("sync_execution") = true)
      .def("exposition",
           [](const zeus::metric::EnergyHistogram& h) { return h.registry().render(); });
  py::class_<zeus::metric::EnergyCumulativeCounter>(m, "EnergyCumulativeCounter")
      .def(py::init([](std::vector<int> cpu_indices, std::vector<int> gpu_indices,
                       double update_period, std::string pushgateway_url, std::string job) {
             auto inv = device_inventory();
             ReleaseGil release;
             return std::make_unique<zeus::metric::EnergyCumulativeCounter>(
                 *inv, std::move(cpu_indices), std::move(gpu_indices), zeus::Seconds(update_period),
                 std::move(pushgateway_url), std::move(job));
           }),
           py::arg("cpu_indices"), py::arg("gpu_indices"), py::arg("update_period"),
           py::arg("pushgateway_url"), py::arg("job"))
      .def(
          "begin_window",
          [](zeus::metric::EnergyCumulativeCounter& c, const std::string& name, bool) {
            c.begin_window(name);
          },
          py::arg("name"), py::arg("sync_execution") = false, py::call_guard<R>())
      .def(
          "end_window",
          [](zeus::metric::EnergyCumulativeCounter& c, const std::string& name, bool) {
            c.end_window(name);
          },
          py::arg("name"), py::arg("sync_execution") = false, py::call_guard<R>())
      .def("exposition",
           [](const zeus::metric::EnergyCumulativeCounter& c) { return c.registry().render(); });
  py::class_<zeus::metric::PowerGauge>(m, "PowerGauge")
      .def(py::init([](std::vector<int> gpu_indices, double update_period,
                       std::string pushgateway_url, std::string job) {
             auto inv = device_inventory();
             ReleaseGil release;
             return std::make_unique<zeus::metric::PowerGauge>(
                 *inv, std::move(gpu_indices), zeus::Seconds(update_period),
                 std::move(pushgateway_url), std::move(job));
           }),
           py::arg("gpu_indices"), py::arg("update_period"), py::arg("pushgateway_url"),
           py::arg("job"))
      .def("begin_window", &zeus::metric::PowerGauge::begin_window, py::arg("name"),
           py::call_guard<R>())
      .def("end_window", &zeus::metric::PowerGauge::end_window, py::arg("name"),
           py::call_guard<R>())
      .def("exposition", [](const zeus::metric::PowerGauge& g) { return g.registry().render(); });
}

ZEUSCPP_BINDING(kOrderClients, bind_metric);

}  // namespace
}  // namespace zeuscpp
