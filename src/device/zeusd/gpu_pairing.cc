#include "device/zeusd/gpu_pairing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

namespace zeus::device_internal {
namespace {

bool parse_hex(std::string_view text, std::uint32_t& out) {
  if (text.empty() || text.size() > 8) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string lower_trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::optional<int> daemon_id_at(const std::vector<device::ZeusdStatus::GpuInfo>& daemon,
                                unsigned index) {
  for (const auto& g : daemon) {
    if (g.id == static_cast<int>(index)) return g.id;
  }
  return std::nullopt;
}

}  // namespace

std::string normalized_pci_address(std::string_view address) {
  std::string text = lower_trimmed(address);
  // [domain:]bus:device.function, each part hexadecimal.
  std::string_view rest = text;
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;
  const auto first = rest.find(':');
  const auto last = rest.rfind(':');
  const auto dot = rest.rfind('.');
  if (first == std::string_view::npos || dot == std::string_view::npos || dot < last) return text;
  if (first != last && !parse_hex(rest.substr(0, first), domain)) return text;
  const std::string_view bus_text =
      first == last ? rest.substr(0, first) : rest.substr(first + 1, last - first - 1);
  if (!parse_hex(bus_text, bus) || !parse_hex(rest.substr(last + 1, dot - last - 1), device) ||
      !parse_hex(rest.substr(dot + 1), function) || bus > 0xff || device > 0x1f || function > 7) {
    return text;
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

GpuPairing pair_with_daemon_gpus(const std::vector<LocalGpuAddress>& local,
                                 const std::vector<device::ZeusdStatus::GpuInfo>& daemon) {
  GpuPairing out;
  const bool daemon_has_addresses = std::any_of(
      daemon.begin(), daemon.end(), [](const auto& g) { return !g.pci_address.empty(); });
  if (!daemon_has_addresses && !local.empty()) {
    out.notes.emplace_back(
        "zeusd gives no PCI addresses (an older zeusd?): GPUs are paired with the daemon's by "
        "index, which is right only if it numbers the node's GPUs as this process does");
  }
  std::vector<std::string> served;
  for (const auto& g : daemon) {
    served.push_back(g.pci_address.empty() ? fmt::format("GPU {}", g.id)
                                           : normalized_pci_address(g.pci_address));
  }
  for (std::size_t k = 0; k < local.size(); ++k) {
    const auto& gpu = local[k];
    std::optional<int> id;
    std::string address;
    if (!daemon_has_addresses || gpu.pci_address.empty()) {
      id = daemon_id_at(daemon, gpu.physical_index);
      address = fmt::format("index {}", gpu.physical_index);
      if (daemon_has_addresses) {
        out.notes.push_back(
            fmt::format("GPU {} has no PCI address, so it is paired with zeusd's GPU {} by index",
                        k, gpu.physical_index));
      }
    } else {
      address = normalized_pci_address(gpu.pci_address);
      for (const auto& g : daemon) {
        if (!g.pci_address.empty() && normalized_pci_address(g.pci_address) == address) id = g.id;
      }
    }
    if (!id) {
      out.notes.push_back(fmt::format(
          "GPU {} ({}) is not among the GPUs zeusd serves ({}): its settings cannot go through "
          "the daemon",
          k, address, served.empty() ? "none" : fmt::format("{}", fmt::join(served, ", "))));
    }
    out.daemon_ids.push_back(id);
  }
  return out;
}

}  // namespace zeus::device_internal
