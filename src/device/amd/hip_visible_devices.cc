#include "device/amd/hip_visible_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "zeus/util/error.h"

namespace zeus::amdsmi_internal {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequal_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

// Picks entries of `value` (a comma list) out of `candidates`: an integer is a
// position in `candidates`, "GPU-..." a UUID (prefix) among them.
std::vector<std::size_t> select(const std::vector<std::size_t>& candidates,
                                const std::vector<HipDevice>& devices, std::string_view value,
                                std::string_view variable) {
  std::vector<std::size_t> out;
  const std::string_view all = trim(value);
  if (all.empty()) return out;  // an empty value hides every GPU
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = all.find(',', start);
    const std::string_view entry = trim(
        all.substr(start, comma == std::string_view::npos ? all.size() - start : comma - start));
    std::size_t pick = 0;
    if (entry.empty()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}='{}' has an empty entry; list GPU indices or GPU-<uuid> values "
                              "separated by single commas",
                              variable, value));
    }
    if (iequal_prefix(entry, "GPU-")) {
      std::vector<std::size_t> matches;
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        const std::string& uuid = devices[candidates[c]].uuid;
        if (!uuid.empty() && iequal_prefix(uuid, entry)) matches.push_back(c);
      }
      if (matches.size() != 1) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("{} entry '{}' matches {} GPUs; `amd-smi list -e` shows each "
                                "GPU's HIP_UUID (give enough of it to name one GPU)",
                                variable, entry, matches.size()));
      }
      pick = matches.front();
    } else {
      unsigned index = 0;
      const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
      if (ec != std::errc() || end != entry.data() + entry.size()) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("{} entry '{}' is neither a GPU index (0, 1, ...) nor a GPU UUID "
                                "(GPU-...); `amd-smi list -e` lists both",
                                variable, entry));
      }
      if (index >= candidates.size()) {
        throw_error(ErrorCode::kInvalidArgument,
                    candidates.empty()
                        ? fmt::format("{} names GPU {}, but no AMD GPU is visible", variable, index)
                        : fmt::format("{} names GPU {}, but only {} AMD GPU(s) are visible "
                                      "(indices 0-{})",
                                      variable, index, candidates.size(), candidates.size() - 1));
      }
      pick = index;
    }
    if (std::find(out.begin(), out.end(), candidates[pick]) != out.end()) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{} lists GPU '{}' more than once", variable, entry));
    }
    out.push_back(candidates[pick]);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::size_t> apply_visibility(const std::vector<HipDevice>& devices,
                                          const VisibilitySettings& settings) {
  std::vector<std::size_t> visible(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) visible[i] = i;
  if (settings.rocr) visible = select(visible, devices, *settings.rocr, "ROCR_VISIBLE_DEVICES");
  if (settings.hip) visible = select(visible, devices, *settings.hip, settings.hip_variable);
  return visible;
}

}  // namespace zeus::amdsmi_internal
