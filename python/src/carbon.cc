// zeuscpp.monitor.carbon / zeuscpp.monitor.price: rate providers and the
// hourly-split monitor of the library's carbon part. The Python classes in
// zeuscpp/monitor/carbon.py and price.py build upstream's dataclasses from the
// plain dicts returned here.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binding.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/carbon/electricity_maps.h"
#include "zeus/monitor/carbon/hourly_rate_monitor.h"
#include "zeus/monitor/carbon/openei.h"
#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

using ProviderPtr = std::shared_ptr<zeus::carbon::HourlyRateProvider>;

py::object energy_dict(const std::map<int, zeus::Joules>& m, bool none_when_empty) {
  if (none_when_empty && m.empty()) return py::none();
  py::dict d;
  for (const auto& [k, v] : m) d[py::int_(k)] = v.value();
  return d;
}

py::object value_dict(const std::optional<std::map<int, double>>& m, bool none_when_empty) {
  if (!m || (none_when_empty && m->empty())) return py::none();
  py::dict d;
  for (const auto& [k, v] : *m) d[py::int_(k)] = v;
  return d;
}

// A library HourlyRateMonitor with one provider; the GIL is released around
// every call that reads devices or talks to the provider.
struct RateMonitorBinding {
  std::shared_ptr<const zeus::device::DeviceInventory> inventory;
  std::unique_ptr<zeus::carbon::HourlyRateMonitor> monitor;

  py::dict end(const std::string& key, bool sync) {
    zeus::carbon::HourlyMeasurement m;
    {
      ReleaseGil release;
      m = monitor->end_window(key, sync);
    }
    const zeus::carbon::RateResult& r = m.rates.front();
    py::dict out;
    out["time"] = m.energy.time.count();
    out["gpu_energy"] = energy_dict(m.energy.gpu_energy, false);
    out["cpu_energy"] = energy_dict(m.energy.cpu_energy, true);
    out["dram_energy"] = energy_dict(m.energy.dram_energy, true);
    out["gpu"] = value_dict(r.gpu, false);
    out["cpu"] = value_dict(r.cpu, true);
    out["dram"] = value_dict(r.dram, true);
    out["error"] = r.error.empty() ? py::object(py::none()) : py::object(py::str(r.error));
    py::list hours;
    for (std::size_t h = 0; h < m.hours.size(); ++h) {
      hours.append(py::make_tuple(
          m.hours[h].hour, m.hours[h].total_energy().value(),
          r.hour_rates[h] ? py::object(py::float_(*r.hour_rates[h])) : py::object(py::none())));
    }
    out["hours"] = hours;
    return out;
  }
};

std::unique_ptr<RateMonitorBinding> make_rate_monitor(ProviderPtr provider,
                                                      std::optional<std::vector<int>> gpu_indices,
                                                      std::optional<std::vector<int>> cpu_indices,
                                                      const py::object& sync) {
  auto b = std::make_unique<RateMonitorBinding>();
  b->inventory = device_inventory();
  zeus::carbon::HourlyRateMonitorOptions options;
  options.energy.gpu_indices = std::move(gpu_indices);
  options.energy.cpu_indices = std::move(cpu_indices);
  if (!sync.is_none()) {
    auto fn = std::shared_ptr<py::object>(new py::object(sync), [](py::object* o) {
      py::gil_scoped_acquire gil;
      delete o;
    });
    options.energy.sync_execution = [fn] {
      py::gil_scoped_acquire gil;
      (*fn)();
    };
  }
  ReleaseGil release;
  b->monitor = std::make_unique<zeus::carbon::HourlyRateMonitor>(
      *b->inventory, std::vector<ProviderPtr>{std::move(provider)}, std::move(options));
  return b;
}

void bind_carbon(py::module_& core) {
  py::module_ m = core.def_submodule("carbon", "Carbon and price bindings.");
  py::class_<zeus::carbon::HourlyRateProvider, ProviderPtr>(m, "RateProvider",
                                                            "Hourly carbon intensity or price.")
      .def("rate", &zeus::carbon::HourlyRateProvider::rate, py::arg("hour"),
           py::call_guard<ReleaseGil>(), "The rate of the UTC hour starting at `hour` (Unix s).")
      .def_property_readonly("description", &zeus::carbon::HourlyRateProvider::description)
      .def_property_readonly("unit", &zeus::carbon::HourlyRateProvider::unit);

  m.def("constant", [](double value, const std::string& unit) -> ProviderPtr {
    return std::make_shared<zeus::carbon::ConstantRate>(value, unit);
  });
  m.def("csv", [](const py::object& path, const std::string& unit) -> ProviderPtr {
    return std::make_shared<zeus::carbon::CsvHourlyRates>(fspath(path), unit);
  });
  m.def(
      "electricity_maps",
      [](double lat, double lon, bool estimate, const std::string& factor,
         std::optional<std::string> base_url) -> ProviderPtr {
        zeus::carbon::ElectricityMapsOptions o;
        o.latitude = lat;
        o.longitude = lon;
        o.estimate = estimate;
        o.emission_factor_type = factor;
        if (base_url) o.base_url = *base_url;
        return std::make_shared<zeus::carbon::ElectricityMapsClient>(o);
      },
      py::arg("lat"), py::arg("lon"), py::arg("estimate"), py::arg("emission_factor_type"),
      py::arg("base_url") = py::none());
  m.def(
      "openei",
      [](double lat, double lon, const std::string& label, const std::string& sector, int radius,
         std::optional<std::string> base_url, std::optional<double> utc_offset) -> ProviderPtr {
        zeus::carbon::OpenEiOptions o;
        o.latitude = lat;
        o.longitude = lon;
        o.label = label;
        o.sector = sector;
        o.radius_miles = radius;
        if (base_url) o.base_url = *base_url;
        o.utc_offset_hours = utc_offset;
        return std::make_shared<zeus::carbon::OpenEiClient>(o);
      },
      py::arg("lat"), py::arg("lon"), py::arg("label"), py::arg("sector"), py::arg("radius"),
      py::arg("base_url") = py::none(), py::arg("utc_offset_hours") = py::none());

  py::class_<RateMonitorBinding>(m, "HourlyRateMonitor", py::dynamic_attr())
      .def(py::init(&make_rate_monitor), py::arg("provider"), py::arg("gpu_indices"),
           py::arg("cpu_indices"), py::arg("sync"))
      .def(
          "begin_window",
          [](RateMonitorBinding& b, const std::string& key, bool sync) {
            b.monitor->begin_window(key, sync);
          },
          py::arg("key"), py::arg("sync_execution") = true, py::call_guard<ReleaseGil>())
      .def("_end_window", &RateMonitorBinding::end, py::arg("key"), py::arg("sync_execution"))
      .def(
          "stop", [](RateMonitorBinding& b) { b.monitor->stop(); }, py::call_guard<ReleaseGil>());
}

}  // namespace

ZEUSCPP_BINDING(kOrderMonitor, bind_carbon);

}  // namespace zeuscpp
