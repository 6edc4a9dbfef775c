// open_amdsmi_gpus: finds and loads AMD SMI, orders the GPUs by HIP index,
// applies the visibility variables, opens each GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "device/amd/amdsmi_gpu.h"
#include "device/amd/amdsmi_library.h"
#include "device/amd/hip_visible_devices.h"
#include "device/amdsmi.h"
#include "zeus/util/log.h"

namespace zeus::amdsmi_internal {
namespace {

namespace abi = amdsmi_abi;
namespace fs = std::filesystem;
using amdsmi_internal::AmdSmiGpu;
using amdsmi_internal::AmdSmiLibrary;

constexpr const char* kSonames[] = {"libamd_smi.so.26", "libamd_smi.so.25", "libamd_smi.so.24"};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> non_empty(std::optional<std::string> v) {
  if (v && v->empty()) return std::nullopt;
  return v;
}

// "rocm-6.10.0" -> {6, 10, 0}; nullopt for anything else.
std::optional<std::vector<unsigned>> rocm_dir_version(const std::string& name) {
  if (name.rfind("rocm-", 0) != 0) return std::nullopt;
  std::vector<unsigned> parts;
  std::size_t start = 5;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string part = name.substr(start, dot == std::string::npos ? dot : dot - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    parts.push_back(static_cast<unsigned>(std::stoul(part)));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::optional<std::string> newest_versioned_rocm(const std::string& opt_dir) {
  std::error_code ec;
  std::optional<std::pair<std::vector<unsigned>, std::string>> best;
  for (const auto& entry : fs::directory_iterator(opt_dir, ec)) {
    std::error_code dir_ec;
    if (!entry.is_directory(dir_ec)) continue;
    const auto version = rocm_dir_version(entry.path().filename().string());
    if (!version) continue;
    if (!best || *version > best->first) best.emplace(*version, entry.path().string());
  }
  if (!best) return std::nullopt;
  return (fs::path(best->second) / "lib").string();
}

// Reads a count-then-fill list (AMD SMI fills nothing and reports the count
// when the buffer is null).
template <class Handle, class Call>
std::vector<Handle> read_handles(const AmdSmiLibrary& lib, const char* function, Call call) {
  std::uint32_t count = 0;
  lib.check(call(&count, static_cast<Handle*>(nullptr)), function, "listing AMD GPUs");
  std::vector<Handle> handles(count);
  if (count > 0) {
    lib.check(call(&count, handles.data()), function, "listing AMD GPUs");
    handles.resize(std::min<std::size_t>(count, handles.size()));
  }
  return handles;
}

struct Found {
  abi::amdsmi_processor_handle handle = nullptr;
  std::tuple<int, std::uint64_t, std::size_t> order;  // (key kind, key, discovery order)
  std::string uuid;                                   // amdsmi device UUID
  std::string hip_uuid;                               // "GPU-..." (ROCm 6.4+)
  std::string name;
};

std::string read_name(const AmdSmiLibrary& lib, abi::amdsmi_processor_handle h) {
  if (lib.api().get_gpu_asic_info == nullptr) return "AMD GPU";
  abi::AsicInfoBuffer info{};
  lib.check(lib.api().get_gpu_asic_info(h, &info), "amdsmi_get_gpu_asic_info",
            "reading an AMD GPU's name");
  info.market_name[sizeof(info.market_name) - 1] = '\0';
  std::string name = info.market_name;
  return name.empty() ? "AMD GPU" : name;
}

std::string read_uuid(const AmdSmiLibrary& lib, abi::amdsmi_processor_handle h) {
  if (lib.api().get_gpu_device_uuid == nullptr) return {};
  char buffer[abi::kUuidBufferSize] = {};
  unsigned length = sizeof(buffer);
  if (lib.api().get_gpu_device_uuid(h, &length, buffer) != abi::kSuccess) return {};
  buffer[sizeof(buffer) - 1] = '\0';
  return buffer;
}

// HIP orders GPUs by their KFD node; AMD SMI 6.4+ says the HIP index itself.
// Without either, PCI bus order (what zeusd and amd-smi use).
std::vector<Found> enumerate(const AmdSmiLibrary& lib) {
  const auto& api = lib.api();
  auto lock = lib.lock();
  std::vector<Found> found;
  const auto sockets = read_handles<abi::amdsmi_socket_handle>(
      lib, "amdsmi_get_socket_handles", [&](std::uint32_t* n, abi::amdsmi_socket_handle* out) {
        return api.get_socket_handles(n, out);
      });
  for (auto socket : sockets) {
    const auto processors = read_handles<abi::amdsmi_processor_handle>(
        lib, "amdsmi_get_processor_handles",
        [&](std::uint32_t* n, abi::amdsmi_processor_handle* out) {
          return api.get_processor_handles(socket, n, out);
        });
    for (auto h : processors) {
      if (api.get_processor_type != nullptr) {
        std::uint32_t type = 0;
        if (api.get_processor_type(h, &type) == abi::kSuccess &&
            type != abi::kProcessorTypeAmdGpu) {
          continue;
        }
      }
      Found f;
      f.handle = h;
      const std::size_t seq = found.size();
      f.order = {3, 0, seq};
      abi::EnumerationBuffer e{};
      abi::KfdInfo kfd{};
      std::uint64_t bdf = 0;
      if (api.get_gpu_enumeration_info != nullptr &&
          api.get_gpu_enumeration_info(h, &e) == abi::kSuccess) {
        f.order = {0, e.header.hip_id, seq};
        e.hip_uuid[sizeof(e.hip_uuid) - 1] = '\0';
        f.hip_uuid = e.hip_uuid;
      } else if (api.get_gpu_kfd_info != nullptr &&
                 api.get_gpu_kfd_info(h, &kfd) == abi::kSuccess && kfd.node_id != 0xFFFFFFFFU) {
        f.order = {1, kfd.node_id, seq};
      } else if (api.get_gpu_bdf_id != nullptr && api.get_gpu_bdf_id(h, &bdf) == abi::kSuccess) {
        f.order = {2, bdf, seq};
      }
      f.uuid = read_uuid(lib, h);
      f.name = read_name(lib, h);
      found.push_back(std::move(f));
    }
  }
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.order < b.order; });
  return found;
}

}  // namespace

std::vector<std::string> amdsmi_library_candidates(const std::optional<std::string>& amdsmi_lib_dir,
                                                   const std::optional<std::string>& rocm_path,
                                                   const std::string& opt_dir) {
  std::vector<std::string> roots;
  bool loader_paths = false;
  if (amdsmi_lib_dir && !amdsmi_lib_dir->empty()) {
    roots.push_back(*amdsmi_lib_dir);
  } else if (rocm_path && !rocm_path->empty()) {
    roots.push_back((fs::path(*rocm_path) / "lib").string());
  } else {
    roots.push_back((fs::path(opt_dir) / "rocm" / "lib").string());
    if (auto newest = newest_versioned_rocm(opt_dir); newest && *newest != roots.front()) {
      roots.push_back(*newest);
    }
    loader_paths = true;
  }
  std::vector<std::string> out;
  for (const auto& root : roots) {
    for (const char* soname : kSonames) out.push_back((fs::path(root) / soname).string());
  }
  if (loader_paths) {
    for (const char* soname : kSonames) out.emplace_back(soname);
  }
  return out;
}

AmdSmiGpuSet open_amdsmi_gpus(const AmdSmiOptions& options) {
  std::vector<std::string> candidates;
  std::string library = options.library_path;
  if (library.empty()) library = non_empty(env("ZEUS_AMDSMI_LIBRARY")).value_or("");
  if (!library.empty()) {
    candidates.push_back(library);
  } else {
    candidates = amdsmi_library_candidates(
        options.amdsmi_lib_dir ? options.amdsmi_lib_dir : non_empty(env("AMDSMI_LIB_DIR")),
        options.rocm_path ? options.rocm_path : non_empty(env("ROCM_PATH")), options.opt_dir);
  }
  int serialize = -1;
  if (options.serialize_calls) serialize = *options.serialize_calls ? 1 : 0;
  std::shared_ptr<AmdSmiLibrary> lib = AmdSmiLibrary::acquire(candidates, serialize);

  AmdSmiGpuSet set;
  set.library_path = lib->path();
  set.library_version = lib->version().text;
  set.abi = lib->version().abi;
  set.serialized = lib->serialized();

  const std::vector<Found> found = enumerate(*lib);
  std::vector<amdsmi_internal::HipDevice> devices;
  for (std::size_t i = 0; i < found.size(); ++i) {
    devices.push_back({static_cast<unsigned>(i), found[i].hip_uuid});
  }
  amdsmi_internal::VisibilitySettings vis;
  vis.rocr =
      options.rocr_visible_devices ? options.rocr_visible_devices : env("ROCR_VISIBLE_DEVICES");
  if (options.hip_visible_devices) {
    vis.hip = options.hip_visible_devices;
  } else if (auto hip = env("HIP_VISIBLE_DEVICES")) {
    vis.hip = hip;
  } else if (auto cuda = env("CUDA_VISIBLE_DEVICES")) {
    vis.hip = cuda;
    vis.hip_variable = "CUDA_VISIBLE_DEVICES";
  }
  for (const auto& [value, variable] : {std::pair{vis.rocr, std::string("ROCR_VISIBLE_DEVICES")},
                                        std::pair{vis.hip, vis.hip_variable}}) {
    if (value && value->find_first_not_of(" \t") == std::string::npos) {
      std::string note = fmt::format(
          "{} is set but empty, so no AMD GPU is visible (as in ROCm); unset it to use every GPU",
          variable);
      log::warn("{}", note);
      set.notes.push_back(std::move(note));
    }
  }
  const std::vector<std::size_t> visible = amdsmi_internal::apply_visibility(devices, vis);

  for (std::size_t k = 0; k < visible.size(); ++k) {
    const Found& f = found[visible[k]];
    amdsmi_internal::AmdSmiGpuInfo info;
    info.index = static_cast<unsigned>(k);
    info.hip_index = static_cast<unsigned>(visible[k]);
    info.name = f.name;
    info.uuid = !f.hip_uuid.empty() ? f.hip_uuid : f.uuid;
    auto gpu = std::make_unique<AmdSmiGpu>(lib, f.handle, info);
    // MI250/MI250X: two dies appear as two GPUs, but only the even one reports
    // power, for both together.
    if (info.name.find("MI250") != std::string::npos) {
      AmdSmiGpu::PowerReadings p{abi::kPowerNotAvailable, abi::kPowerNotAvailable};
      try {
        p = gpu->read_power_info();
      } catch (const Error&) {
      }
      const auto reads_zero = [](std::uint32_t w) {
        return w == 0 || w == abi::kPowerNotAvailable;
      };
      std::string note;
      if (info.hip_index % 2 == 1 && reads_zero(p.current_w) && reads_zero(p.average_w)) {
        info.second_die = true;
        gpu = std::make_unique<AmdSmiGpu>(lib, f.handle, info);
        note = fmt::format(
            "AMD GPU {} (HIP {}) is the second die of an MI250/MI250X: its power "
            "and energy are reported by HIP GPU {} for both dies together, so they "
            "are not measured here",
            k, info.hip_index, info.hip_index - 1);
      } else if (info.hip_index % 2 == 0) {
        note = fmt::format(
            "AMD GPU {} (HIP {}) is an MI250/MI250X die: its power and energy "
            "include the other die of the package (HIP GPU {})",
            k, info.hip_index, info.hip_index + 1);
      }
      if (!note.empty()) {
        log::warn("{}", note);
        set.notes.push_back(std::move(note));
      }
    }
    set.gpus.push_back(std::move(gpu));
    set.hip_indices.push_back(info.hip_index);
  }
  log::debug("AMD SMI {}: {} of {} AMD GPUs visible", set.library_version, visible.size(),
             found.size());
  return set;
}

}  // namespace zeus::amdsmi_internal
