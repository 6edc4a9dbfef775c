// Checks shared by the commands that run a job on GPUs and may change their
// power limits (`zeus power-limit`, `zeus chase run`).
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "util/text.h"
#include "zeus/device/devices.h"
#include "zeus/util/error.h"

namespace zeus::cli {

// kNotFound, with discovery's notes, when there is no GPU to run on.
inline void require_gpus(const device::DeviceInventory& devices, const std::string& gpu_backend) {
  if (!devices.gpus.empty()) return;
  std::string notes;
  for (const auto& n : devices.notes) notes += "; " + printable(n, 4000);
  throw_error(ErrorCode::kNotFound,
              fmt::format("no GPUs found with --gpu-backend {}{}; use --gpu-backend sim for "
                          "simulated GPUs",
                          gpu_backend, notes));
}

// Whether the job may only pretend to change settings: real GPUs are left
// alone unless --allow-setting-changes says otherwise (and the user is told).
inline bool settings_dry_run(const device::DeviceInventory& devices, bool dry_run,
                             bool allow_setting_changes) {
  if (dry_run || devices.gpu_backend == "sim" || allow_setting_changes) return dry_run;
  fmt::print(stderr,
             "zeus: note: real GPUs ({}): dry run, no setting will change; pass "
             "--allow-setting-changes to let the optimizer set power limits\n",
             devices.gpu_backend);
  return true;
}

}  // namespace zeus::cli
