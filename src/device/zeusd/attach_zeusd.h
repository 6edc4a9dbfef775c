// The discovery hook of the zeusd client backend (private to src/device).
#pragma once

#include <string>
#include <string_view>

#include "zeus/device/devices.h"

namespace zeus::device_internal {

// Ends the notes of automatic discovery that found no GPU driver. When zeusd
// then serves the GPUs, those notes are no longer true and are replaced.
inline constexpr std::string_view kContinuingWithoutGpus = "; continuing without GPUs";

// With ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT set: routes GPU settings of local
// NVML GPUs through zeusd, serves GPUs from zeusd when there is no local
// driver (or `backend` is "zeusd"), and reads RAPL through zeusd when the
// local counters are root-only. Records the daemon's status in `inv`.
// Without the variables: nothing, except that backend "zeusd" is an error.
// `persistent_settings`: control calls take no lease (ZeusdConfig).
void attach_zeusd(const std::string& backend, bool cpus, bool persistent_settings,
                  device::DeviceInventory& inv);

}  // namespace zeus::device_internal
