#include "device/nvml/cuda_visible_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "util/text.h"
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

VisibleDevices apply_cuda_visible_devices(
    std::string_view value, unsigned device_count,
    const std::function<std::vector<unsigned>(std::string_view uuid_prefix)>& find_uuid) {
  VisibleDevices out;
  const std::string_view all = trim(value);
  if (all.empty()) {
    out.hidden =
        "CUDA_VISIBLE_DEVICES is set but empty, so no GPU is visible (as in CUDA); unset "
        "it to use every GPU";
    return out;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = all.find(',', start);
    const std::string_view entry = trim(
        all.substr(start, comma == std::string_view::npos ? all.size() - start : comma - start));
    std::string why;  // non-empty: this entry is invalid
    std::optional<unsigned> index;
    if (starts_with_nocase(entry, "MIG")) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("CUDA_VISIBLE_DEVICES entry '{}' is a MIG instance: NVML cannot "
                              "measure the energy or power of a MIG slice on its own; make whole "
                              "GPUs visible (indices or GPU-<uuid>) to measure them",
                              printable(entry)));
    } else if (starts_with_nocase(entry, "GPU-") && entry.size() > 4) {
      const std::vector<unsigned> matches = find_uuid(entry);
      if (matches.empty()) {
        why = "matches no GPU's UUID";
      } else if (matches.size() > 1) {
        why = fmt::format("matches {} GPUs' UUIDs", matches.size());
      } else {
        index = matches.front();
      }
    } else {
      unsigned i = 0;
      const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), i);
      if (entry.empty() || ec != std::errc() || end != entry.data() + entry.size()) {
        why = "is neither a GPU index nor a GPU UUID";
      } else if (i >= device_count) {
        why = fmt::format("names GPU {} of {}", i, device_count);
      } else {
        index = i;
      }
    }
    if (index && std::find(out.indices.begin(), out.indices.end(), *index) != out.indices.end()) {
      why = "names a GPU a second time";
    }
    if (!why.empty()) {
      out.hidden = fmt::format(
          "CUDA_VISIBLE_DEVICES entry '{}' {}: as in CUDA, it and every entry after it are "
          "hidden, so {} GPU(s) are visible; `nvidia-smi -L` lists the indices and UUIDs",
          printable(entry), why, out.indices.size());
      return out;
    }
    out.indices.push_back(*index);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace zeus::nvml_internal
