#include "zeus/device/devices.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "device/amdsmi.h"
#include "device/nvml/cuda_visible_devices.h"
#include "device/sim_gpu_model_json.h"
#include "device/zeusd/attach_zeusd.h"
#include "util/parse.h"
#include "zeus/device/nvml.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/util/error.h"

namespace zeus::device {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

// A backend's error says what is wrong, then (after "; ") what to do and
// every path it tried: the note keeps what is wrong, the details the rest.
std::string diagnosis(std::string_view message) {
  return std::string(message.substr(0, message.find("; ")));
}

void add_sim_gpus(const DiscoveryOptions& options, DeviceInventory& inv) {
  int count = 1;
  if (options.sim_gpus) {
    count = *options.sim_gpus;
  } else if (const char* env = std::getenv("ZEUS_SIM_GPUS"); env != nullptr && *env != '\0') {
    count = static_cast<int>(parse_int(env, "ZEUS_SIM_GPUS", 0, 1024));
  }
  if (count < 0 || count > 1024) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("ZEUS_SIM_GPUS must be between 0 and 1024, got {}", count));
  }
  const std::string model_path = options.sim_model_path.value_or(env_or("ZEUS_SIM_MODEL", ""));
  const SimGpuModel model =
      model_path.empty() ? SimGpuModel{} : device_internal::read_sim_gpu_model(model_path);
  Clock& clock = options.clock != nullptr ? *options.clock : SteadyClock::instance();
  auto gpus = make_sim_gpus(count, model, clock);
  // CUDA_VISIBLE_DEVICES selects simulated GPUs as it selects real ones.
  std::vector<unsigned> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env != nullptr) {
    auto applied = nvml_internal::apply_cuda_visible_devices(
        env, static_cast<unsigned>(count), [&](std::string_view prefix) {
          std::vector<unsigned> out;
          for (std::size_t i = 0; i < gpus.size(); ++i) {
            if (nvml_internal::uuid_has_prefix(gpus[i]->uuid(), prefix)) {
              out.push_back(static_cast<unsigned>(i));
            }
          }
          return out;
        });
    if (!applied.hidden.empty()) inv.notes.push_back(std::move(applied.hidden));
    visible = std::move(applied.indices);
  } else {
    for (int i = 0; i < count; ++i) visible.push_back(static_cast<unsigned>(i));
  }
  for (const unsigned i : visible) {
    inv.gpus.push_back(std::move(gpus[i]));
    inv.gpu_physical_indices.push_back(i);
  }
  inv.gpu_backend = "sim";
}

void add_nvml_gpus(const DiscoveryOptions& options, DeviceInventory& inv) {
  NvmlOptions nvml;
  nvml.library_path = options.nvml_library;
  NvmlGpuSet set = open_nvml_gpus(nvml);
  for (auto& gpu : set.gpus) inv.gpus.push_back(std::move(gpu));
  inv.gpu_physical_indices = set.nvml_indices;
  inv.driver_version = set.driver_version;
  inv.nvml_version = set.nvml_version;
  inv.notes.insert(inv.notes.end(), set.notes.begin(), set.notes.end());
  inv.gpu_backend = "nvml";
}

void add_amdsmi_gpus(const DiscoveryOptions& options, DeviceInventory& inv) {
  amdsmi_internal::AmdSmiOptions amd;
  amd.library_path = options.amdsmi_library;
  amdsmi_internal::AmdSmiGpuSet set = amdsmi_internal::open_amdsmi_gpus(amd);
  for (auto& gpu : set.gpus) inv.gpus.push_back(std::move(gpu));
  inv.gpu_physical_indices = set.hip_indices;
  inv.amdsmi_version = fmt::format("{} (ABI {}, {}{})", set.library_version, set.abi,
                                   set.library_path, set.serialized ? ", calls serialized" : "");
  inv.notes.insert(inv.notes.end(), set.notes.begin(), set.notes.end());
  inv.gpu_backend = "amdsmi";
}

// NVIDIA first, as upstream; AMD when there is no NVIDIA GPU. A missing
// vendor library is a note only when neither vendor is there.
void add_auto_gpus(const DiscoveryOptions& options, DeviceInventory& inv) {
  DeviceInventory nvml;
  DeviceInventory amd;
  std::vector<std::string> missing;
  bool nvml_loaded = false;
  try {
    add_nvml_gpus(options, nvml);
    nvml_loaded = true;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kDriverNotLoaded) throw;
    missing.push_back(e.what());
  }
  try {
    add_amdsmi_gpus(options, amd);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kDriverNotLoaded) {
      missing.push_back(e.what());
    } else if (!nvml.gpus.empty()) {
      // E.g. CUDA_VISIBLE_DEVICES holds NVIDIA UUIDs, which AMD cannot parse.
      nvml.notes.push_back(fmt::format("AMD GPUs were not looked at: {}", e.what()));
    } else {
      throw;
    }
  }
  DeviceInventory& chosen = !nvml.gpus.empty() || (nvml_loaded && amd.gpus.empty()) ? nvml : amd;
  if (!nvml.gpus.empty() && !amd.gpus.empty()) {
    chosen.notes.push_back(fmt::format(
        "found {} NVIDIA and {} AMD GPU(s); measuring the NVIDIA GPUs through NVML. Set "
        "ZEUS_GPU_BACKEND=amdsmi to measure the AMD GPUs instead",
        nvml.gpus.size(), amd.gpus.size()));
  }
  if (chosen.gpu_backend == "none" || chosen.gpu_backend.empty()) {
    // One line for the user; each library's own error (paths tried, dlopen's
    // words) goes to the details.
    std::vector<std::string> diagnoses;
    for (const auto& m : missing) diagnoses.push_back(diagnosis(m));
    inv.notes.push_back(
        fmt::format("{}{}", fmt::join(diagnoses, "; "), device_internal::kContinuingWithoutGpus));
    inv.details.insert(inv.details.end(), missing.begin(), missing.end());
    return;
  }
  inv.gpus = std::move(chosen.gpus);
  inv.gpu_physical_indices = std::move(chosen.gpu_physical_indices);
  inv.gpu_backend = chosen.gpu_backend;
  inv.driver_version = chosen.driver_version;
  inv.nvml_version = chosen.nvml_version;
  inv.amdsmi_version = chosen.amdsmi_version;
  inv.notes.insert(inv.notes.end(), chosen.notes.begin(), chosen.notes.end());
}

std::vector<int> resolve_indices(const std::optional<std::vector<int>>& requested,
                                 std::size_t available, const char* what) {
  std::vector<int> out;
  if (!requested) {
    for (std::size_t i = 0; i < available; ++i) out.push_back(static_cast<int>(i));
    return out;
  }
  for (int i : *requested) {
    if (i < 0 || static_cast<std::size_t>(i) >= available) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{} index {} does not exist: {} {}(s) available{}", what, i, available, what,
                      available == 0 ? "" : fmt::format(" (indices 0-{})", available - 1)));
    }
    if (std::find(out.begin(), out.end(), i) != out.end()) {
      throw_error(ErrorCode::kInvalidArgument, fmt::format("{} index {} given twice", what, i));
    }
    out.push_back(i);
  }
  return out;
}

// What discovery said about the devices it did not find (one sentence per
// note), for the errors of a selection that names none.
std::string why_no_device(const DeviceInventory& devices) {
  if (devices.notes.empty()) return fmt::format("GPU backend '{}'", devices.gpu_backend);
  std::vector<std::string_view> reasons;
  for (std::string_view note : devices.notes) {
    if (note.ends_with(device_internal::kContinuingWithoutGpus))
      note.remove_suffix(device_internal::kContinuingWithoutGpus.size());
    reasons.push_back(note);
  }
  return fmt::format("{}", fmt::join(reasons, "; "));
}

}  // namespace

DeviceSelection select_devices(const DeviceInventory& devices,
                               const std::optional<std::vector<int>>& gpu_indices,
                               const std::optional<std::vector<int>>& cpu_indices) {
  DeviceSelection s;
  if (gpu_indices && !gpu_indices->empty() && devices.gpus.empty()) {
    // Say why there is none (no driver, no permission, a daemon that refused).
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("GPU index {} does not exist: no GPU is available ({})",
                            gpu_indices->front(), why_no_device(devices)));
  }
  s.gpu_indices = resolve_indices(gpu_indices, devices.gpus.size(), "GPU");
  s.cpu_indices = resolve_indices(cpu_indices, devices.cpus.size(), "CPU package");
  for (int i : s.gpu_indices) s.gpus.push_back(devices.gpus[static_cast<std::size_t>(i)]);
  for (int i : s.cpu_indices) s.cpus.push_back(devices.cpus[static_cast<std::size_t>(i)]);
  return s;
}

std::optional<std::string> nothing_to_measure(const DeviceInventory& devices,
                                              const DeviceSelection& selection) {
  if (!selection.gpus.empty() || !selection.cpus.empty() || devices.jetson) return std::nullopt;
  std::string why;
  if (!devices.gpus.empty() || !devices.cpus.empty()) {
    why = "the selection names no device";
  } else {
    why = fmt::format("no GPU (GPU backend '{}') and no readable CPU package", devices.gpu_backend);
    if (!devices.notes.empty()) why += ": " + why_no_device(devices);
    return fmt::format(
        "nothing to measure: {} (`zeus show-env` says what was tried; ZEUS_GPU_BACKEND=sim gives "
        "simulated GPUs)",
        why);
  }
  return fmt::format("nothing to measure: {} (see `zeus show-env`)", why);
}

DeviceInventory discover_devices(const DiscoveryOptions& options) {
  DeviceInventory inv;
  inv.gpu_backend = "none";
  const std::string backend = options.gpu_backend.value_or(env_or("ZEUS_GPU_BACKEND", "auto"));
  if (backend == "sim") {
    add_sim_gpus(options, inv);
  } else if (backend == "nvml") {
    add_nvml_gpus(options, inv);
  } else if (backend == "amdsmi") {
    add_amdsmi_gpus(options, inv);
  } else if (backend == "auto") {
    add_auto_gpus(options, inv);
  } else if (backend != "none" && backend != "zeusd") {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("ZEUS_GPU_BACKEND='{}' is not a backend; use auto, nvml, amdsmi, sim, "
                            "zeusd or none",
                            backend));
  }

  if (options.cpus) {
    RaplOptions rapl;
    rapl.root = options.powercap_root;
    RaplCpuSet set = open_rapl_cpus(rapl);
    for (auto& cpu : set.cpus) inv.cpus.push_back(std::move(cpu));
    inv.rapl_zones = std::move(set.zones);
    for (const auto& zone : inv.rapl_zones) {
      if (!zone.readable) inv.notes.push_back(fmt::format("RAPL {}: {}", zone.name, zone.problem));
    }
    if (inv.rapl_zones.empty()) {
      inv.notes.push_back("no RAPL powercap zones found: CPU energy is not measured");
    }
  }
  if (options.soc) {
    const std::string root = options.jetson_sysfs_root.empty()
                                 ? env_or("ZEUS_JETSON_SYSFS_ROOT", "/sys")
                                 : options.jetson_sysfs_root;
    if (auto board = JetsonBoard::discover(root)) {
      inv.jetson = std::make_shared<const JetsonBoard>(std::move(*board));
    }
  }
  if (options.use_zeusd) {
    device_internal::attach_zeusd(backend, options.cpus, options.zeusd_persistent_settings, inv);
  } else if (backend == "zeusd") {
    throw_error(ErrorCode::kInvalidArgument, "the zeusd GPU backend is not available here");
  }
  return inv;
}

}  // namespace zeus::device
