// zeuscpp.utils.zeusd's core: one connection to a zeusd (the library's
// ZeusdConnection): what discovery and whoami said, GET of a read endpoint,
// and a per-GPU control command under this process's lease (or, persistent,
// without one: the setting stays after the process). The Python
// module builds upstream's ZeusdClient API on these.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "binding.h"
#include "zeus/device/zeusd_backend.h"

namespace zeuscpp {
namespace {

py::dict status_dict(const zeus::device::ZeusdStatus& s) {
  py::dict d;
  py::list gpus;
  for (const auto& g : s.gpus) {
    py::dict x;
    x["id"] = g.id;
    x["name"] = g.name;
    x["pci_address"] = g.pci_address;
    x["cumulative_energy_available"] = g.cumulative_energy_available;
    gpus.append(x);
  }
  py::list cpus;
  for (const auto& c : s.cpus) {
    py::dict x;
    x["id"] = c.id;
    x["dram_available"] = c.dram_available;
    cpus.append(x);
  }
  d["endpoint"] = s.endpoint;
  d["gpus"] = gpus;
  d["cpus"] = cpus;
  d["enabled_api_groups"] = s.enabled_api_groups;
  d["auth_required"] = s.auth_required;
  d["extensions"] = s.extensions;
  d["user"] = s.user ? py::object(py::str(*s.user)) : py::none();
  d["scopes"] = s.scopes;
  d["token_expires"] = s.token_expires ? py::object(py::int_(*s.token_expires)) : py::none();
  d["auth_error"] =
      s.auth_error.empty() ? py::object(py::none()) : py::object(py::str(s.auth_error));
  return d;
}

void bind_zeusd(py::module_& core) {
  py::module_ m = core.def_submodule("zeusd", "Connection to a zeusd daemon.");
  using R = ReleaseGil;
  py::class_<zeus::device::ZeusdConnection, std::shared_ptr<zeus::device::ZeusdConnection>>(
      m, "Connection")
      .def(py::init([](std::string url, std::string endpoint, std::string token, bool persistent) {
             ReleaseGil release;
             return std::make_shared<zeus::device::ZeusdConnection>(zeus::device::ZeusdConfig{
                 std::move(url), std::move(endpoint), std::move(token), persistent});
           }),
           py::arg("url"), py::arg("endpoint"), py::arg("token") = "",
           py::arg("persistent") = false)
      .def("status", [](const zeus::device::ZeusdConnection& c) { return status_dict(c.status()); })
      .def("get", &zeus::device::ZeusdConnection::get, py::arg("target"), py::call_guard<R>())
      .def("gpu_command", &zeus::device::ZeusdConnection::gpu_command, py::arg("op"),
           py::arg("gpu"), py::arg("query") = "", py::call_guard<R>())
      .def("lease_id", &zeus::device::ZeusdConnection::lease_id);
}

ZEUSCPP_BINDING(kOrderClients, bind_zeusd);

}  // namespace
}  // namespace zeuscpp
