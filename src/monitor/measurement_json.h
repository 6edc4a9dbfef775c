#pragma once

#include <nlohmann/json.hpp>

#include "zeus/monitor/energy_monitor.h"

namespace zeus::monitor {

// Serialization of measurements, kept apart from energy_monitor.h.
// {"time_s", "gpu_energy_j": {"0": J}, "gpu_energy_source", "cpu_energy_j",
//  "dram_energy_j", "total_gpu_energy_j", "total_energy_j",
//  "gpus_below_update_period", "failed_gpus": {"0": "why"}, "failed_cpus"}
nlohmann::json to_json(const Measurement& m);

}  // namespace zeus::monitor
