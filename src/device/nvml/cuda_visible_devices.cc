#include "device/nvml/cuda_visible_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "zeus/util/error.h"

namespace zeus::nvml_internal {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(s[i]) != lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

bool uuid_has_prefix(std::string_view uuid, std::string_view prefix) {
  return starts_with_nocase(uuid, prefix);
}

std::vector<VisibleDevice> parse_cuda_visible_devices(std::string_view value) {
  std::vector<VisibleDevice> out;
  const std::string_view all = trim(value);
  if (all.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = all.find(',', start);
    const std::string_view entry = trim(
        all.substr(start, comma == std::string_view::npos ? all.size() - start : comma - start));
    if (entry.empty()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("CUDA_VISIBLE_DEVICES='{}' has an empty entry; list GPU indices or "
                              "GPU-<uuid> values separated by single commas",
                              value));
    }
    VisibleDevice dev;
    if (starts_with_nocase(entry, "MIG")) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("CUDA_VISIBLE_DEVICES entry '{}' is a MIG instance: NVML cannot "
                              "measure the energy or power of a MIG slice on its own; make whole "
                              "GPUs visible (indices or GPU-<uuid>) to measure them",
                              entry));
    } else if (starts_with_nocase(entry, "GPU-")) {
      if (entry.size() == 4) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("CUDA_VISIBLE_DEVICES entry '{}' has no UUID after 'GPU-'; "
                                "`nvidia-smi -L` lists the GPUs' UUIDs",
                                entry));
      }
      dev.kind = VisibleDevice::Kind::kUuid;
      dev.uuid = std::string(entry);
    } else {
      unsigned index = 0;
      const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
      if (ec != std::errc() || end != entry.data() + entry.size()) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("CUDA_VISIBLE_DEVICES entry '{}' is neither a GPU index (0, 1, "
                                "...) nor a GPU UUID (GPU-...); `nvidia-smi -L` lists both",
                                entry));
      }
      dev.kind = VisibleDevice::Kind::kIndex;
      dev.index = index;
    }
    out.push_back(std::move(dev));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<unsigned> resolve_visible_devices(
    const std::vector<VisibleDevice>& entries, unsigned device_count,
    const std::function<std::vector<unsigned>(std::string_view uuid_prefix)>& find_uuid) {
  std::vector<unsigned> out;
  for (const auto& entry : entries) {
    unsigned index = 0;
    std::string shown;
    if (entry.kind == VisibleDevice::Kind::kIndex) {
      shown = std::to_string(entry.index);
      if (entry.index >= device_count) {
        throw_error(ErrorCode::kInvalidArgument,
                    device_count == 0
                        ? fmt::format("CUDA_VISIBLE_DEVICES names GPU {}, but NVML sees no GPUs",
                                      entry.index)
                        : fmt::format("CUDA_VISIBLE_DEVICES names GPU {}, but NVML sees only {} "
                                      "GPU(s) (indices 0-{}); `nvidia-smi -L` lists them",
                                      entry.index, device_count, device_count - 1));
      }
      index = entry.index;
    } else {
      shown = entry.uuid;
      const std::vector<unsigned> matches = find_uuid(entry.uuid);
      if (matches.empty()) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("CUDA_VISIBLE_DEVICES entry '{}' matches no GPU's UUID; "
                                "`nvidia-smi -L` lists the UUIDs",
                                entry.uuid));
      }
      if (matches.size() > 1) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("CUDA_VISIBLE_DEVICES entry '{}' matches {} GPUs; give more of "
                                "the UUID so that it names one GPU",
                                entry.uuid, matches.size()));
      }
      index = matches.front();
    }
    if (std::find(out.begin(), out.end(), index) != out.end()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("CUDA_VISIBLE_DEVICES lists GPU {} (entry '{}') more than once",
                              index, shown));
    }
    out.push_back(index);
  }
  return out;
}

}  // namespace zeus::nvml_internal
