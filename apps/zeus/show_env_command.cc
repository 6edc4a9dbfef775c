// `zeus show-env`: what this machine offers for measurement.
#include <fmt/format.h>

#include <iostream>

#include "command_registry.h"
#include "device/environment_report_json.h"
#include "util/text.h"
#include "zeus/device/energy_counter_check.h"

namespace zeus::cli::show_env_command {
namespace {

using nlohmann::json;

std::string or_dash(const json& v) {
  if (v.is_null()) return "-";
  // Names, paths and versions come from devices and the environment: escaped.
  if (v.is_string())
    return v.get<std::string>().empty() ? "-" : zeus::printable(v.get<std::string>(), 200);
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_float()) return fmt::format("{:.1f}", v.get<double>());
  return v.dump();
}

void print_text(const json& r) {
  const std::string rule(72, '-');
  fmt::print("{}\nZeus in C++ {} (compiler {})\n", rule, or_dash(r["zeus_version"]),
             or_dash(r["compiler"]));
  for (const auto& [k, v] : r["environment"].items()) fmt::print("  {:<22} {}\n", k, or_dash(v));
  fmt::print("{}\nGPUs: backend {}", rule, or_dash(r["gpu_backend"]));
  if (!r["driver_version"].get<std::string>().empty()) {
    fmt::print(" (driver {}, NVML {})", or_dash(r["driver_version"]), or_dash(r["nvml_version"]));
  }
  fmt::print("\n");
  if (r.contains("amdsmi_version") && !r["amdsmi_version"].get<std::string>().empty()) {
    fmt::print("  AMD SMI {}\n", or_dash(r["amdsmi_version"]));
  }
  if (r["gpu_backend"] == "sim") {
    fmt::print("  These GPUs are SIMULATED: readings come from a model, not hardware.\n");
  }
  for (const auto& g : r["gpus"]) {
    fmt::print("  GPU {} (physical {}): {} [{}]\n", g["index"].get<int>(),
               g["physical_index"].get<int>(), or_dash(g["name"]), or_dash(g["uuid"]));
    if (!g["pci_bus_id"].is_null()) fmt::print("    PCI {}\n", or_dash(g["pci_bus_id"]));
    fmt::print(
        "    architecture {}, energy counter {}, power limit {} W (range {}-{} W, default {} W)\n",
        or_dash(g["architecture"]), or_dash(g["energy_counter"]), or_dash(g["power_limit_w"]),
        or_dash(g["power_limit_min_w"]), or_dash(g["power_limit_max_w"]),
        or_dash(g["default_power_limit_w"]));
    fmt::print("    power now: instant {} W, average {} W, memory {} W\n",
               or_dash(g["power_w"]["instant"]), or_dash(g["power_w"]["average"]),
               or_dash(g["power_w"]["memory"]));
    if (g.contains("energy_counter_check")) {
      const auto& c = g["energy_counter_check"];
      fmt::print("    energy counter check: {} ({})\n", or_dash(c["verdict"]),
                 zeus::printable(c["detail"].get<std::string>(), 400));
    }
    if (g.contains("errors")) {
      for (const auto& [k, v] : g["errors"].items()) fmt::print("    {}: {}\n", k, or_dash(v));
    }
  }
  if (r["gpus"].empty()) fmt::print("  (none)\n");
  fmt::print("{}\nCPUs (RAPL powercap):\n", rule);
  for (const auto& z : r["rapl_zones"]) {
    fmt::print("  {:<14} {} {}\n", or_dash(z["name"]), or_dash(z["path"]),
               z["readable"].get<bool>() ? "readable"
                                         : "NOT readable: " + z["problem"].get<std::string>());
  }
  if (r["rapl_zones"].empty()) fmt::print("  (no zones)\n");
  if (!r["jetson"].is_null()) {
    fmt::print("{}\nJetson power rails ({} driver):\n", rule, or_dash(r["jetson"]["driver"]));
    for (const auto& rail : r["jetson"]["rails"]) {
      const bool direct = !rail["power_file"].is_null();
      fmt::print("  {:<6} {:<16} {}\n", or_dash(rail["rail"]), or_dash(rail["label"]),
                 direct ? or_dash(rail["power_file"])
                        : or_dash(rail["voltage_file"]) + " x " + or_dash(rail["current_file"]));
    }
  }
  if (!r["zeusd"].is_null()) {
    const auto& z = r["zeusd"];
    fmt::print("{}\nzeusd: {} ({} GPU(s), {} CPU package(s))\n", rule,
               z["endpoint"].get<std::string>(), z["gpus"].get<int>(), z["cpus"].get<int>());
    std::string groups;
    for (const auto& g : z["enabled_api_groups"])
      groups += (groups.empty() ? "" : ", ") + g.get<std::string>();
    fmt::print("  API groups: {}\n", groups.empty() ? "-" : groups);
    if (!z["auth_required"].get<bool>()) {
      fmt::print("  authentication: off\n");
    } else if (!z["token"].is_null()) {
      std::string scopes;
      for (const auto& g : z["token"]["scopes"])
        scopes += (scopes.empty() ? "" : ", ") + g.get<std::string>();
      fmt::print("  token: user {}, scopes {}\n", z["token"]["user"].get<std::string>(),
                 scopes.empty() ? "none" : scopes);
    } else {
      fmt::print("  token: {}\n", z["auth_error"].get<std::string>());
    }
  }
  if (!r["notes"].empty()) {
    fmt::print("{}\nNotes:\n", rule);
    for (const auto& n : r["notes"])
      fmt::print("  - {}\n", zeus::printable(n.get<std::string>(), 4000));
  }
  if (r.contains("details") && !r["details"].empty()) {
    fmt::print("{}\nDetails (what was tried):\n", rule);
    for (const auto& n : r["details"])
      fmt::print("  - {}\n", zeus::printable(n.get<std::string>(), 4000));
  }
  fmt::print("{}\n", rule);
}

void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "show-env", "Report versions, GPU and CPU backends, the GPU index mapping and RAPL zones");
  auto json_output = std::make_shared<bool>(false);
  auto skip_check = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json_output, "Print one JSON object instead of text");
  cmd->add_flag("--no-counter-check", *skip_check,
                "Skip the energy-counter check (counter vs 0.5 s of power, as upstream zeusd "
                "does for AMD GPUs)");
  cmd->footer(
      "Environment: ZEUS_GPU_BACKEND=auto|nvml|amdsmi|sim|none, ZEUS_SIM_GPUS=N, "
      "ZEUS_SIM_MODEL=FILE,\n"
      "ZEUS_NVML_LIBRARY=PATH, ZEUS_POWERCAP_ROOT=DIR, CUDA_VISIBLE_DEVICES;\n"
      "AMD: ZEUS_GPU_BACKEND=amdsmi, AMDSMI_LIB_DIR=DIR, ROCM_PATH=DIR, ZEUS_AMDSMI_LIBRARY=PATH,\n"
      "HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES.");
  cmd->callback([json_output, skip_check] {
    const auto devices = zeus::device::discover_devices();
    auto report = zeus::device::environment_report(devices);
    if (!*skip_check && !devices.gpus.empty()) {
      const auto checks = zeus::device::check_energy_counters(
          devices.gpus, zeus::SteadyClock::instance(), zeus::Seconds(0.5), devices.gpu_backend);
      for (std::size_t k = 0; k < checks.size(); ++k) {
        report["gpus"][k]["energy_counter_check"] = zeus::device::to_json(checks[k]);
      }
    }
    if (*json_output) {
      std::cout << report.dump(2) << "\n";
    } else {
      print_text(report);
    }
  });
}

const bool registered = zeus::cli::register_command(10, &setup);

}  // namespace
}  // namespace zeus::cli::show_env_command
