// Device discovery: which GPUs and CPUs this process can measure, through
// which backend, and why some are missing.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/device/jetson.h"
#include "zeus/device/rapl.h"
#include "zeus/util/clock.h"

namespace zeus::device {

struct DiscoveryOptions {
  // "auto", "nvml", "amdsmi", "sim", "zeusd" (every GPU read and set through
  // zeusd) or "none". nullopt: $ZEUS_GPU_BACKEND, else "auto": NVIDIA GPUs
  // through NVML if there are any, else AMD GPUs through AMD SMI, else (with
  // zeusd configured) the daemon's GPUs, else none (with both NVIDIA and AMD
  // present, NVML wins and a note says how to pick AMD). The simulated GPU is
  // never chosen behind the user's back: ask for it with "sim".
  std::optional<std::string> gpu_backend;
  // Simulated GPUs: how many ($ZEUS_SIM_GPUS, default 1) and the model file
  // ($ZEUS_SIM_MODEL, default built-in model).
  std::optional<int> sim_gpus;
  std::optional<std::string> sim_model_path;
  // Clock for simulated GPUs; nullptr: the process's steady clock.
  Clock* clock = nullptr;
  // Passed to the backends (empty: their environment defaults).
  std::string nvml_library;
  std::string amdsmi_library;  // a libamd_smi.so file; empty: the usual search
  std::string powercap_root;
  bool cpus = true;  // look for RAPL packages
  // Look for a Jetson board's power rails under this sysfs root. Empty:
  // $ZEUS_JETSON_SYSFS_ROOT, else /sys (zeus/device/jetson.h).
  bool soc = true;
  std::string jetson_sysfs_root;
  // Honour ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT (zeus/device/zeusd_backend.h):
  // GPU settings and root-only RAPL reads through the node's zeusd. zeusd
  // itself turns this off.
  bool use_zeusd = true;
  // Through zeusd, change settings without a lease, so the daemon keeps them
  // after this process ends (`zeus gpu set`); jobs leave this off.
  bool zeusd_persistent_settings = false;
};

struct ZeusdStatus;  // zeus/device/zeusd_backend.h

struct DeviceInventory {
  std::vector<std::shared_ptr<Gpu>> gpus;      // index k = CUDA device k of this process
  std::vector<std::shared_ptr<Cpu>> cpus;      // index k = RAPL package k
  std::string gpu_backend;                     // "nvml", "amdsmi", "sim" or "none"
  std::vector<unsigned> gpu_physical_indices;  // NVML index (HIP index, sim index) of each GPU
  std::string driver_version;
  std::string nvml_version;
  std::string amdsmi_version;  // AMD SMI library version and where it was loaded from
  std::vector<RaplZoneInfo> rapl_zones;
  // The Jetson board's rails (null when this is not a Jetson).
  std::shared_ptr<const JetsonBoard> jetson;
  // Plain-language notes for the user, a line each: a missing driver,
  // unreadable RAPL...
  std::vector<std::string> notes;
  // What stands behind the notes, in full: each library's own error and every
  // path tried. `zeus show-env` prints them, other commands with --verbose.
  std::vector<std::string> details;
  // The zeusd this process goes through (null when none is configured).
  std::shared_ptr<const ZeusdStatus> zeusd;
};

// A subset of an inventory's devices, in the order asked for.
struct DeviceSelection {
  std::vector<int> gpu_indices;
  std::vector<std::shared_ptr<Gpu>> gpus;  // parallel to gpu_indices
  std::vector<int> cpu_indices;
  std::vector<std::shared_ptr<Cpu>> cpus;  // parallel to cpu_indices
};

// Picks GPUs and CPU packages by index (nullopt: all of them).
// kInvalidArgument for an index that does not exist or is given twice.
DeviceSelection select_devices(const DeviceInventory& devices,
                               const std::optional<std::vector<int>>& gpu_indices,
                               const std::optional<std::vector<int>>& cpu_indices);

// Why a selection has no device to measure (no GPU and no CPU package), in
// words a user can act on: the discovery notes (no driver, no permission, a
// daemon that refused), or that nothing was found. nullopt when the selection
// has a device. Front ends fail (the CLI) or warn (Python) with it, so a
// measurement of nothing is never passed off as a measured zero.
std::optional<std::string> nothing_to_measure(const DeviceInventory& devices,
                                              const DeviceSelection& selection);

// Finds devices. A missing NVIDIA driver or powercap tree is a note, not an
// error: the other devices still work. Throws for invalid settings (unknown
// backend name, bad CUDA_VISIBLE_DEVICES, bad sim model) and when the user
// explicitly asked for "nvml" and it failed.
DeviceInventory discover_devices(const DiscoveryOptions& options = {});

}  // namespace zeus::device
