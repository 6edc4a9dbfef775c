#include "device/sim_gpu_model_json.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/json.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::device_internal {
namespace {

device::GpuArchitecture parse_architecture(const JsonObject& o) {
  const std::string text = o.string("architecture", 32);
  for (auto arch : {device::GpuArchitecture::kKepler, device::GpuArchitecture::kMaxwell,
                    device::GpuArchitecture::kPascal, device::GpuArchitecture::kVolta,
                    device::GpuArchitecture::kTuring, device::GpuArchitecture::kAmpere,
                    device::GpuArchitecture::kAda, device::GpuArchitecture::kHopper,
                    device::GpuArchitecture::kBlackwell, device::GpuArchitecture::kRubin}) {
    if (text == device::architecture_name(arch)) return arch;
  }
  throw FieldError(ErrorCode::kInvalidArgument, o.field_path("architecture"),
                   fmt::format("{}: {}: unknown architecture '{}' (expected e.g. pascal, volta, "
                               "ampere, hopper)",
                               o.source(), o.field_path("architecture"), json_excerpt(text)));
}

// Wide type-level bounds; validate() then applies the physical ones with a
// message about the model.
constexpr double kBig = 1e12;
constexpr std::int64_t kBigInt = 1'000'000'000;

}  // namespace

device::SimGpuModel parse_sim_gpu_model(std::string_view text, const std::string& source) {
  const nlohmann::json doc = parse_json(text, source);
  const JsonObject o(doc, source);
  o.reject_unknown_keys({"name",
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
                         "busy_temperature_c",
                         "memory_total_mib"});
  device::SimGpuModel m;
  auto watts = [&](const char* key, Watts& out) {
    if (auto v = o.optional_number(key, -kBig, kBig)) out = Watts(*v);
  };
  auto mhz = [&](const char* key, Megahertz& out) {
    if (auto v = o.optional_integer(key, -kBigInt, kBigInt)) out = Megahertz(*v);
  };
  auto seconds = [&](const char* key, Seconds& out) {
    if (auto v = o.optional_number(key, -kBig, kBig)) out = Seconds(*v);
  };
  auto celsius = [&](const char* key, Celsius& out) {
    if (auto v = o.optional_number(key, -kBig, kBig)) out = Celsius(*v);
  };
  auto number = [&](const char* key, double& out) {
    if (auto v = o.optional_number(key, -kBig, kBig)) out = *v;
  };
  if (auto v = o.optional_string("name", 256)) m.name = *v;
  if (o.has("architecture")) m.architecture = parse_architecture(o);
  if (auto v = o.optional_boolean("energy_counter")) m.energy_counter = *v;
  if (auto v = o.optional_boolean("memory_power")) m.memory_power = *v;
  watts("idle_power_w", m.idle_power);
  watts("busy_power_w", m.busy_power);
  number("memory_power_fraction", m.memory_power_fraction);
  watts("power_limit_min_w", m.power_limit_min);
  watts("power_limit_max_w", m.power_limit_max);
  watts("power_limit_default_w", m.power_limit_default);
  watts("power_limit_step_w", m.power_limit_step);
  mhz("max_graphics_clock_mhz", m.max_graphics_clock);
  mhz("min_graphics_clock_mhz", m.min_graphics_clock);
  mhz("graphics_clock_step_mhz", m.graphics_clock_step);
  if (o.has("memory_clocks_mhz")) {
    m.memory_clocks.clear();
    for (const auto c : o.integers("memory_clocks_mhz", -kBigInt, kBigInt)) {
      m.memory_clocks.emplace_back(c);
    }
  }
  number("peak_throughput", m.peak_throughput);
  number("compute_bound_fraction", m.compute_bound_fraction);
  number("load", m.load);
  seconds("counter_update_period_s", m.counter_update_period);
  seconds("average_window_s", m.average_window);
  celsius("idle_temperature_c", m.idle_temperature);
  celsius("busy_temperature_c", m.busy_temperature);
  if (auto v = o.optional_integer("memory_total_mib", -kBigInt, kBigInt)) {
    m.memory_total = device::Bytes(*v * 1048576);
  }
  try {
    m.validate();
  } catch (const Error& e) {
    throw FieldError(e.code(), "", fmt::format("{}: {}", source, e.what()));
  }
  return m;
}

device::SimGpuModel read_sim_gpu_model(const std::string& path) {
  return parse_sim_gpu_model(read_file(path), path);
}

}  // namespace zeus::device_internal
