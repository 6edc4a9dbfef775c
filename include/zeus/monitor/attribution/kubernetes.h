// Which pod and container hold which devices: what the kubelet's
// PodResources API (v1.PodResourcesLister/List) answers, as plain structs, and
// the mapping of GPU device IDs to the pods that hold them. Pure: the gRPC
// client that fills these structs is its own optional part
// (zeus/monitor/attribution/kubernetes/pod_resources.h, ZEUS_WITH_KUBERNETES),
// so builds without gRPC still map.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::attribution {

struct ContainerDevices {
  std::string resource_name;            // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...
  std::vector<std::string> device_ids;  // "GPU-<uuid>", "MIG-<uuid>", "GPU-<uuid>::<k>"
};

struct ContainerResources {
  std::string name;
  std::vector<ContainerDevices> devices;
  std::vector<long long> cpu_ids;
};

struct PodResources {
  std::string name;
  std::string namespace_;
  std::vector<ContainerResources> containers;
};

// Who holds a device: dcgm-exporter's label values.
struct PodRef {
  std::string namespace_;
  std::string pod;
  std::string container;
};

// GPU device IDs -> holders. Time-sliced replicas ("<uuid>::<k>") of one GPU
// map to several holders; MIG device IDs to the one that holds the instance.
class PodDeviceMap {
 public:
  PodDeviceMap() = default;
  explicit PodDeviceMap(const std::vector<PodResources>& pods);

  // The holders of a GPU by its UUID ("GPU-..."), replicas included, in the
  // order the kubelet listed them; empty when no pod holds it.
  std::vector<PodRef> holders_of_gpu(std::string_view gpu_uuid) const;
  // The holder of a MIG device ("MIG-..."), if any.
  std::optional<PodRef> holder_of_mig(std::string_view mig_uuid) const;
  // The pod named `pod_name` (a container's HOSTNAME, which Kubernetes sets to
  // the pod's name): its namespace and containers, when exactly one pod of
  // that name exists on the node.
  std::optional<PodRef> pod_named(std::string_view pod_name) const;

  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    std::string device_id;  // as listed
    PodRef holder;
  };
  std::vector<Entry> entries_;
  std::vector<PodRef> pods_;  // one per pod (container left empty)
};

}  // namespace zeus::attribution
