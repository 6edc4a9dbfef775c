#include <algorithm>

#include "zeus/monitor/attribution/kubernetes.h"

namespace zeus::attribution {
namespace {

// The GPU resources of the NVIDIA device plugin ("nvidia.com/gpu", its
// time-sliced "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", ...) and of
// AMD's ("amd.com/gpu").
bool is_gpu_resource(std::string_view name) {
  return name.starts_with("nvidia.com/gpu") || name.starts_with("nvidia.com/mig-") ||
         name.starts_with("amd.com/gpu");
}

// Device IDs that name an NVIDIA GPU or MIG device whatever the resource is
// called: a cluster may rename the plugin's resources (renameByDefault, its
// own resource names), but the IDs stay the driver's UUIDs.
bool looks_like_gpu_id(std::string_view id) {
  return id.starts_with("GPU-") || id.starts_with("MIG-");
}

// "GPU-<uuid>::<k>" is the k-th time-sliced replica of GPU-<uuid>.
std::string_view physical_device(std::string_view id) { return id.substr(0, id.find("::")); }

bool same_holder(const PodRef& a, const PodRef& b) {
  return a.namespace_ == b.namespace_ && a.pod == b.pod && a.container == b.container;
}

}  // namespace

PodDeviceMap::PodDeviceMap(const std::vector<PodResources>& pods) {
  for (const auto& pod : pods) {
    pods_.push_back({pod.namespace_, pod.name, ""});
    for (const auto& container : pod.containers) {
      for (const auto& devices : container.devices) {
        const bool gpu_resource = is_gpu_resource(devices.resource_name);
        for (const auto& id : devices.device_ids) {
          if (gpu_resource || looks_like_gpu_id(id)) {
            entries_.push_back({id, {pod.namespace_, pod.name, container.name}});
          }
        }
      }
    }
  }
}

std::vector<PodRef> PodDeviceMap::holders_of_gpu(std::string_view gpu_uuid) const {
  std::vector<PodRef> holders;
  for (const auto& entry : entries_) {
    if (physical_device(entry.device_id) != gpu_uuid) {
      continue;
    }
    // A container given two replicas of one GPU is still one holder.
    const bool seen = std::any_of(holders.begin(), holders.end(),
                                  [&](const PodRef& h) { return same_holder(h, entry.holder); });
    if (!seen) {
      holders.push_back(entry.holder);
    }
  }
  return holders;
}

std::optional<PodRef> PodDeviceMap::holder_of_mig(std::string_view mig_uuid) const {
  // A time-sliced MIG device ("MIG-<uuid>::<k>") has several holders; the
  // first listed stands for them (the signature has room for one).
  for (const auto& entry : entries_) {
    if (physical_device(entry.device_id) == mig_uuid) {
      return entry.holder;
    }
  }
  return std::nullopt;
}

std::optional<PodRef> PodDeviceMap::pod_named(std::string_view pod_name) const {
  std::optional<PodRef> found;
  for (const auto& pod : pods_) {
    if (pod.pod != pod_name) {
      continue;
    }
    // Pod names are unique per namespace only: a HOSTNAME that two
    // namespaces share names neither.
    if (found) {
      return std::nullopt;
    }
    found = pod;
  }
  return found;
}

}  // namespace zeus::attribution
