#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "zeus/device/sim_gpu.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus {
namespace {

using nlohmann::json;

GpuArchitecture parse_architecture(const std::string& text, const std::string& source) {
  for (auto arch : {GpuArchitecture::kKepler, GpuArchitecture::kMaxwell, GpuArchitecture::kPascal,
                    GpuArchitecture::kVolta, GpuArchitecture::kTuring, GpuArchitecture::kAmpere,
                    GpuArchitecture::kAda, GpuArchitecture::kHopper, GpuArchitecture::kBlackwell,
                    GpuArchitecture::kRubin}) {
    if (text == architecture_name(arch)) return arch;
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("{}: unknown architecture '{}' (expected e.g. pascal, volta, ampere, "
                          "hopper)",
                          source, text));
}

template <class T>
void read_field(const json& j, const char* key, T& out, const std::string& source) {
  const auto it = j.find(key);
  if (it == j.end()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: field '{}' has the wrong type ({})", source, key, it->dump()));
  }
}

}  // namespace

SimGpuModel SimGpuModel::from_json_text(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw_error(ErrorCode::kParse, fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!j.is_object()) {
    throw_error(ErrorCode::kParse, fmt::format("{}: expected a JSON object", source));
  }
  static const char* kKnown[] = {"name",
                                 "architecture",
                                 "energy_counter",
                                 "memory_power",
                                 "idle_power_w",
                                 "busy_power_w",
                                 "memory_power_fraction",
                                 "power_limit_min_w",
                                 "power_limit_max_w",
                                 "power_limit_default_w",
                                 "power_limit_step_w",
                                 "max_graphics_clock_mhz",
                                 "min_graphics_clock_mhz",
                                 "graphics_clock_step_mhz",
                                 "memory_clocks_mhz",
                                 "peak_throughput",
                                 "compute_bound_fraction",
                                 "load",
                                 "counter_update_period_s",
                                 "average_window_s",
                                 "idle_temperature_c",
                                 "busy_temperature_c"};
  for (const auto& [key, value] : j.items()) {
    if (std::none_of(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return key == k; })) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: unknown field '{}' in the simulated GPU model", source, key));
    }
  }
  SimGpuModel m;
  std::string arch;
  read_field(j, "name", m.name, source);
  read_field(j, "architecture", arch, source);
  if (!arch.empty()) m.architecture = parse_architecture(arch, source);
  read_field(j, "energy_counter", m.energy_counter, source);
  read_field(j, "memory_power", m.memory_power, source);
  read_field(j, "idle_power_w", m.idle_power_w, source);
  read_field(j, "busy_power_w", m.busy_power_w, source);
  read_field(j, "memory_power_fraction", m.memory_power_fraction, source);
  read_field(j, "power_limit_min_w", m.power_limit_min_w, source);
  read_field(j, "power_limit_max_w", m.power_limit_max_w, source);
  read_field(j, "power_limit_default_w", m.power_limit_default_w, source);
  read_field(j, "power_limit_step_w", m.power_limit_step_w, source);
  read_field(j, "max_graphics_clock_mhz", m.max_graphics_clock_mhz, source);
  read_field(j, "min_graphics_clock_mhz", m.min_graphics_clock_mhz, source);
  read_field(j, "graphics_clock_step_mhz", m.graphics_clock_step_mhz, source);
  read_field(j, "memory_clocks_mhz", m.memory_clocks_mhz, source);
  read_field(j, "peak_throughput", m.peak_throughput, source);
  read_field(j, "compute_bound_fraction", m.compute_bound_fraction, source);
  read_field(j, "load", m.load, source);
  read_field(j, "counter_update_period_s", m.counter_update_period_s, source);
  read_field(j, "average_window_s", m.average_window_s, source);
  read_field(j, "idle_temperature_c", m.idle_temperature_c, source);
  read_field(j, "busy_temperature_c", m.busy_temperature_c, source);
  try {
    m.validate();
  } catch (const Error& e) {
    throw_error(e.code(), fmt::format("{}: {}", source, e.what()));
  }
  return m;
}

SimGpuModel SimGpuModel::from_json_file(const std::string& path) {
  return from_json_text(read_file(path), path);
}

void SimGpuModel::validate() const {
  auto fail = [](const std::string& msg) { throw_error(ErrorCode::kInvalidArgument, msg); };
  if (!(idle_power_w >= 0 && busy_power_w > idle_power_w)) {
    fail(fmt::format("need 0 <= idle_power_w < busy_power_w (got {} and {})", idle_power_w,
                     busy_power_w));
  }
  if (!(power_limit_min_w > 0 && power_limit_min_w <= power_limit_max_w)) {
    fail(fmt::format("need 0 < power_limit_min_w <= power_limit_max_w (got {} and {})",
                     power_limit_min_w, power_limit_max_w));
  }
  if (power_limit_default_w < power_limit_min_w || power_limit_default_w > power_limit_max_w) {
    fail(fmt::format("power_limit_default_w {} is outside [{}, {}]", power_limit_default_w,
                     power_limit_min_w, power_limit_max_w));
  }
  if (!(power_limit_step_w > 0)) fail("power_limit_step_w must be positive");
  if (!(min_graphics_clock_mhz > 0 && min_graphics_clock_mhz <= max_graphics_clock_mhz)) {
    fail("need 0 < min_graphics_clock_mhz <= max_graphics_clock_mhz");
  }
  if (graphics_clock_step_mhz <= 0) fail("graphics_clock_step_mhz must be positive");
  if (memory_clocks_mhz.empty()) fail("memory_clocks_mhz must list at least one clock");
  if (!(peak_throughput > 0)) fail("peak_throughput must be positive");
  if (!(compute_bound_fraction >= 0 && compute_bound_fraction <= 1)) {
    fail("compute_bound_fraction must be in [0, 1]");
  }
  if (!(load >= 0 && load <= 1)) fail("load must be in [0, 1]");
  if (!(memory_power_fraction >= 0 && memory_power_fraction <= 1)) {
    fail("memory_power_fraction must be in [0, 1]");
  }
  if (!(counter_update_period_s >= 0)) fail("counter_update_period_s must be >= 0");
  if (!(average_window_s > 0)) fail("average_window_s must be positive");
}

double SimGpuModel::clock_fraction_at(Milliwatts limit) const {
  const double x_min = static_cast<double>(min_graphics_clock_mhz) / max_graphics_clock_mhz;
  const double headroom = (to_watts(limit).value() - idle_power_w) / (busy_power_w - idle_power_w);
  if (headroom >= 1.0) return 1.0;
  if (headroom <= 0.0) return x_min;
  return std::clamp(std::cbrt(headroom), x_min, 1.0);
}

Watts SimGpuModel::power_at(Milliwatts limit) const {
  const double x = clock_fraction_at(limit);
  return Watts(idle_power_w + (busy_power_w - idle_power_w) * x * x * x);
}

double SimGpuModel::throughput_at(Milliwatts limit) const {
  const double x = clock_fraction_at(limit);
  return peak_throughput / ((1.0 - compute_bound_fraction) + compute_bound_fraction / x);
}

}  // namespace zeus
