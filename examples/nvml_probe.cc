// nvml_probe: checks the NVML backend on a real GPU machine. Read-only: it
// never changes any GPU setting.
//
// For every visible GPU it prints name, UUID, architecture, power limits, power
// per domain, temperature and the energy counter; then it measures the energy
// counter's change over a window (default 1 s), how often the counter moves,
// and the mean latency of total_energy() and power(instant) calls.
//
//   example_nvml_probe [--json] [--window 1.0] [--calls 1000] [--library PATH]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <iostream>
#include <thread>

#include "zeus/device/nvml.h"
#include "zeus/util/error.h"

namespace {

using json = nlohmann::json;
using SteadyTime = std::chrono::steady_clock;

// Runs f; on a zeus::Error stores "<code>: <message>" under errors[key] and
// returns null, so one unsupported reading does not hide the others.
json attempt(json& errors, const std::string& key, const std::function<json()>& f) {
  try {
    return f();
  } catch (const zeus::Error& e) {
    errors[key] = fmt::format("{}: {}", zeus::error_code_name(e.code()), e.what());
    return nullptr;
  }
}

double mean_latency_us(int calls, const std::function<void()>& f) {
  const auto start = SteadyTime::now();
  for (int i = 0; i < calls; ++i) f();
  const std::chrono::duration<double, std::micro> total = SteadyTime::now() - start;
  return total.count() / calls;
}

json probe_gpu(zeus::device::Gpu& gpu, unsigned index, unsigned nvml_index, double window_s,
               int calls) {
  json g;
  json errors = json::object();
  g["index"] = index;
  g["nvml_index"] = nvml_index;
  g["name"] = gpu.name();
  g["uuid"] = gpu.uuid();
  g["architecture"] = attempt(errors, "architecture", [&] {
    return json(zeus::device::architecture_name(gpu.architecture()));
  });
  const bool energy = gpu.supports_energy_counter();
  g["supports_energy_counter"] = energy;
  g["power_limit_w"] = attempt(errors, "power_limit", [&] {
    const auto range = gpu.power_limit_constraints();
    return json{{"min", zeus::to_watts(range.min).value()},
                {"max", zeus::to_watts(range.max).value()},
                {"current", zeus::to_watts(gpu.power_limit()).value()},
                {"default", zeus::to_watts(gpu.default_power_limit()).value()}};
  });
  g["persistence_mode"] =
      attempt(errors, "persistence_mode", [&] { return json(gpu.persistence_mode()); });
  json power = json::object();
  for (auto domain :
       {zeus::device::PowerDomain::kDeviceInstant, zeus::device::PowerDomain::kDeviceAverage,
        zeus::device::PowerDomain::kMemoryAverage}) {
    const std::string name = zeus::device::power_domain_name(domain);
    power[name] = attempt(errors, "power_" + name, [&] { return json(gpu.power(domain).value()); });
  }
  g["power_w"] = power;
  g["temperature_c"] =
      attempt(errors, "temperature", [&] { return json(gpu.temperature().value()); });

  if (energy) {
    g["energy_counter_j"] =
        attempt(errors, "energy", [&] { return json(gpu.total_energy().value()); });
    g["energy_window"] = attempt(errors, "energy_window", [&] {
      const double before = gpu.total_energy().value();
      const auto t0 = SteadyTime::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
      const double after = gpu.total_energy().value();
      const double elapsed = std::chrono::duration<double>(SteadyTime::now() - t0).count();
      return json{{"seconds", elapsed},
                  {"joules", after - before},
                  {"mean_watts", (after - before) / elapsed}};
    });
    // How often the counter moves: poll it for the window and keep the
    // shortest gap between two changes.
    g["energy_counter_update"] = attempt(errors, "energy_counter_update", [&] {
      const auto end = SteadyTime::now() + std::chrono::duration<double>(window_s);
      double last = gpu.total_energy().value();
      auto last_change = SteadyTime::time_point{};
      double min_gap_ms = -1.0;
      int changes = 0;
      while (SteadyTime::now() < end) {
        const double v = gpu.total_energy().value();
        if (v != last) {
          const auto now = SteadyTime::now();
          if (last_change != SteadyTime::time_point{}) {
            const double gap = std::chrono::duration<double, std::milli>(now - last_change).count();
            if (min_gap_ms < 0 || gap < min_gap_ms) min_gap_ms = gap;
          }
          last_change = now;
          last = v;
          ++changes;
        }
      }
      return json{{"changes", changes},
                  {"min_gap_ms", min_gap_ms < 0 ? json(nullptr) : json(min_gap_ms)}};
    });
    g["total_energy_latency_us"] = attempt(errors, "total_energy_latency", [&] {
      return json(mean_latency_us(calls, [&] { (void)gpu.total_energy(); }));
    });
  }
  g["power_instant_latency_us"] = attempt(errors, "power_instant_latency", [&] {
    return json(mean_latency_us(
        calls, [&] { (void)gpu.power(zeus::device::PowerDomain::kDeviceInstant); }));
  });
  g["errors"] = errors;
  return g;
}

void print_text(const json& out) {
  fmt::print("NVML {} / driver {} : {} GPU(s)\n", out["nvml_version"].get<std::string>(),
             out["driver_version"].get<std::string>(), out["gpus"].size());
  for (const auto& note : out["notes"]) fmt::print("note: {}\n", note.get<std::string>());
  for (const auto& g : out["gpus"]) {
    fmt::print("\nGPU {} (NVML {}): {}  {}\n", g["index"].get<unsigned>(),
               g["nvml_index"].get<unsigned>(), g["name"].get<std::string>(),
               g["uuid"].get<std::string>());
    for (const auto& [key, value] : g.items()) {
      if (key == "index" || key == "nvml_index" || key == "name" || key == "uuid" ||
          key == "errors") {
        continue;
      }
      fmt::print("  {:26} {}\n", key, value.dump());
    }
    for (const auto& [key, value] : g["errors"].items()) {
      fmt::print("  ! {}: {}\n", key, value.get<std::string>());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Probe the NVML backend on this machine (read-only: never changes a GPU setting). Prints "
      "each visible GPU's readings, the energy counter's change over a window, how often it "
      "updates, and the mean latency of energy and power calls."};
  bool as_json = false;
  double window_s = 1.0;
  int calls = 1000;
  std::string library;
  app.add_flag("--json", as_json, "print one JSON object instead of text");
  app.add_option("--window", window_s, "seconds for the energy window and the update-rate poll")
      ->check(CLI::Range(0.01, 600.0));
  app.add_option("--calls", calls, "calls per latency measurement")->check(CLI::Range(1, 10000000));
  app.add_option("--library", library,
                 "NVML library to load (default: $ZEUS_NVML_LIBRARY, else libnvidia-ml.so.1)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : zeus::kExitUsage;
  }

  try {
    zeus::device::NvmlOptions options;
    options.library_path = library;
    zeus::device::NvmlGpuSet set = zeus::device::open_nvml_gpus(options);
    json out;
    out["driver_version"] = set.driver_version;
    out["nvml_version"] = set.nvml_version;
    out["notes"] = set.notes;
    out["window_s"] = window_s;
    out["latency_calls"] = calls;
    out["gpus"] = json::array();
    for (std::size_t k = 0; k < set.gpus.size(); ++k) {
      out["gpus"].push_back(
          probe_gpu(*set.gpus[k], static_cast<unsigned>(k), set.nvml_indices[k], window_s, calls));
    }
    if (as_json) {
      std::cout << out.dump(2) << "\n";
    } else {
      print_text(out);
    }
  } catch (const zeus::Error& e) {
    std::cerr << "nvml_probe: error: " << e.what() << "\n";
    return zeus::exit_code_for(e.code());
  }
  std::cout.flush();
  return std::cout.good() ? 0 : zeus::kExitFailure;
}
