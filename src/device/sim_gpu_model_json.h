// The simulated GPU's JSON model file, kept apart from sim_gpu.h. Field names
// carry their unit: {"name", "architecture", "energy_counter", "memory_power",
// "idle_power_w", "busy_power_w", "memory_power_fraction", "power_limit_min_w",
// "power_limit_max_w", "power_limit_default_w", "power_limit_step_w",
// "max_graphics_clock_mhz", "min_graphics_clock_mhz",
// "graphics_clock_step_mhz", "memory_clocks_mhz", "peak_throughput",
// "compute_bound_fraction", "load", "counter_update_period_s",
// "average_window_s", "idle_temperature_c", "busy_temperature_c",
// "memory_total_mib"}; any
// subset, the rest keep their defaults.
#pragma once

#include <string>
#include <string_view>

#include "zeus/device/sim_gpu.h"

namespace zeus::device_internal {

// Parses a model. FieldError naming `source` and the field for malformed
// JSON, unknown fields, wrong types and values outside their sensible range
// (see SimGpuModel::validate()).
device::SimGpuModel parse_sim_gpu_model(std::string_view text, const std::string& source);
// Reads (bounded, regular files only) and parses a model file.
device::SimGpuModel read_sim_gpu_model(const std::string& path);

}  // namespace zeus::device_internal
