// What `zeus show-env` reports, as JSON (the report has no other form): versions, backends, the GPU
// index mapping with each GPU's capabilities, and RAPL zones. Collected here so every front end
// (CLI, Python) reports the same facts.
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/device/devices.h"

namespace zeus::device {

// Reads every device once (read-only; changes no setting). Per-GPU failures
// are recorded as text in the report instead of thrown.
nlohmann::json environment_report(const DeviceInventory& devices);

}  // namespace zeus::device
