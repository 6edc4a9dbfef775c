#include "device/environment_report_json.h"

#include "zeus/device/zeusd_backend.h"

#include <fmt/format.h>

#include <cstdlib>

#include "zeus/util/error.h"
#include "zeus/util/version.h"

namespace zeus::device {
namespace {

using nlohmann::json;

// Calls f and stores its result, or the error text, under `key`.
template <class F>
void try_set(json& j, const char* key, F f) {
  try {
    j[key] = f();
  } catch (const Error& e) {
    j[key] = nullptr;
    j["errors"][key] = e.what();
  }
}

json gpu_report(Gpu& gpu, int index, unsigned physical) {
  json j;
  j["index"] = index;
  j["physical_index"] = physical;
  try_set(j, "name", [&] { return gpu.name(); });
  try_set(j, "uuid", [&] { return gpu.uuid(); });
  try_set(j, "architecture", [&] { return std::string(architecture_name(gpu.architecture())); });
  try {
    j["pci_bus_id"] = gpu.pci_bus_id();
  } catch (const Error& e) {
    j["pci_bus_id"] = nullptr;  // a simulated GPU has none: not worth an error line
    if (e.code() != ErrorCode::kNotSupported) j["errors"]["pci_bus_id"] = e.what();
  }
  try_set(j, "energy_counter", [&] { return gpu.supports_energy_counter(); });
  try_set(j, "power_limit_min_w",
          [&] { return to_watts(gpu.power_limit_constraints().min).value(); });
  try_set(j, "power_limit_max_w",
          [&] { return to_watts(gpu.power_limit_constraints().max).value(); });
  try_set(j, "power_limit_w", [&] { return to_watts(gpu.power_limit()).value(); });
  try_set(j, "default_power_limit_w", [&] { return to_watts(gpu.default_power_limit()).value(); });
  json domains = json::object();
  for (PowerDomain d :
       {PowerDomain::kDeviceInstant, PowerDomain::kDeviceAverage, PowerDomain::kMemoryAverage}) {
    try {
      domains[power_domain_name(d)] = gpu.power(d).value();
    } catch (const Error& e) {
      domains[power_domain_name(d)] = nullptr;
      if (e.code() != ErrorCode::kNotSupported) j["errors"][power_domain_name(d)] = e.what();
    }
  }
  j["power_w"] = domains;
  return j;
}

json env_var(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? json(nullptr) : json(v);
}

}  // namespace

json environment_report(const DeviceInventory& devices) {
  json r;
  r["zeus_version"] = version();
  r["compiler"] = __VERSION__;
  r["environment"] = {{"CUDA_VISIBLE_DEVICES", env_var("CUDA_VISIBLE_DEVICES")},
                      {"HIP_VISIBLE_DEVICES", env_var("HIP_VISIBLE_DEVICES")},
                      {"ROCR_VISIBLE_DEVICES", env_var("ROCR_VISIBLE_DEVICES")},
                      {"AMDSMI_LIB_DIR", env_var("AMDSMI_LIB_DIR")},
                      {"ROCM_PATH", env_var("ROCM_PATH")},
                      {"ZEUS_AMDSMI_LIBRARY", env_var("ZEUS_AMDSMI_LIBRARY")},
                      {"ZEUS_GPU_BACKEND", env_var("ZEUS_GPU_BACKEND")},
                      {"ZEUS_NVML_LIBRARY", env_var("ZEUS_NVML_LIBRARY")},
                      {"ZEUS_SIM_GPUS", env_var("ZEUS_SIM_GPUS")},
                      {"ZEUS_SIM_MODEL", env_var("ZEUS_SIM_MODEL")},
                      {"ZEUS_POWERCAP_ROOT", env_var("ZEUS_POWERCAP_ROOT")},
                      {"ZEUS_JETSON_SYSFS_ROOT", env_var("ZEUS_JETSON_SYSFS_ROOT")},
                      {"ZEUSD_SOCK_PATH", env_var("ZEUSD_SOCK_PATH")},
                      {"ZEUSD_HOST_PORT", env_var("ZEUSD_HOST_PORT")},
                      {"ZEUSD_TOKEN", std::getenv("ZEUSD_TOKEN") ? json("(set)") : json(nullptr)}};
  r["gpu_backend"] = devices.gpu_backend;
  r["driver_version"] = devices.driver_version;
  r["nvml_version"] = devices.nvml_version;
  r["amdsmi_version"] = devices.amdsmi_version;
  json gpus = json::array();
  for (std::size_t k = 0; k < devices.gpus.size(); ++k) {
    const unsigned physical = k < devices.gpu_physical_indices.size()
                                  ? devices.gpu_physical_indices[k]
                                  : static_cast<unsigned>(k);
    gpus.push_back(gpu_report(*devices.gpus[k], static_cast<int>(k), physical));
  }
  r["gpus"] = gpus;
  json zones = json::array();
  for (const auto& z : devices.rapl_zones) {
    zones.push_back(
        {{"name", z.name}, {"path", z.path}, {"readable", z.readable}, {"problem", z.problem}});
  }
  r["rapl_zones"] = zones;
  json cpus = json::array();
  for (std::size_t k = 0; k < devices.cpus.size(); ++k) {
    cpus.push_back(
        {{"index", k}, {"name", devices.cpus[k]->name()}, {"dram", devices.cpus[k]->has_dram()}});
  }
  r["cpus"] = cpus;
  r["jetson"] = nullptr;
  if (devices.jetson) {
    json rails = json::array();
    for (const auto& rail : devices.jetson->rails()) {
      rails.push_back(
          {{"rail", soc_rail_name(rail.rail)},
           {"label", rail.label},
           {"power_file", rail.power.empty() ? json(nullptr) : json(rail.power)},
           {"voltage_file", rail.voltage.empty() ? json(nullptr) : json(rail.voltage)},
           {"current_file", rail.current.empty() ? json(nullptr) : json(rail.current)}});
    }
    r["jetson"] = {{"driver", devices.jetson->driver()}, {"rails", rails}};
  }
  r["zeusd"] = nullptr;
  if (const auto& z = devices.zeusd) {
    json token = nullptr;
    if (z->user)
      token = {{"user", *z->user},
               {"scopes", z->scopes},
               {"expires", z->token_expires ? json(*z->token_expires) : json(nullptr)}};
    r["zeusd"] = {{"endpoint", z->endpoint},
                  {"gpus", z->gpus.size()},
                  {"cpus", z->cpus.size()},
                  {"enabled_api_groups", z->enabled_api_groups},
                  {"auth_required", z->auth_required},
                  {"token", token},
                  {"auth_error", z->auth_error},
                  {"extensions", z->extensions}};
  }
  r["notes"] = devices.notes;
  r["details"] = devices.details;
  return r;
}

}  // namespace zeus::device
