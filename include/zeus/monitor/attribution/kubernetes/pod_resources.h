// The kubelet's PodResources API over gRPC: one v1.PodResourcesLister/List
// call on the kubelet's Unix socket. Built only with ZEUS_WITH_KUBERNETES
// (gRPC and protobuf from Debian); the messages are declared in our own .proto
// from the API's published field names and numbers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "zeus/monitor/attribution/kubernetes.h"

namespace zeus::attribution {

inline constexpr const char* kDefaultPodResourcesSocket =
    "/var/lib/kubelet/pod-resources/kubelet.sock";

// One List call to the kubelet at `socket_path`. Throws zeus::Error:
// kNotFound when the socket does not exist, kTimeout when nothing answers in
// time, kIo for any other gRPC failure (the status in the message).
std::vector<PodResources> list_pod_resources(
    const std::string& socket_path = kDefaultPodResourcesSocket,
    std::chrono::milliseconds timeout = std::chrono::seconds(2));

}  // namespace zeus::attribution
