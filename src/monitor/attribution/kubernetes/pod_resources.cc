#include "zeus/monitor/attribution/kubernetes/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <system_error>

#include "monitor/attribution/kubernetes/kubelet_pod_resources.grpc.pb.h"
#include "zeus/util/error.h"

namespace zeus::attribution {
namespace {

// The kubelet's own limit for this API's messages: a node with many pods
// answers more than gRPC's default 4 MiB.
constexpr int kMaxAnswerBytes = 16 * 1024 * 1024;

std::vector<PodResources> from_wire(const v1::ListPodResourcesResponse& answer) {
  std::vector<PodResources> pods;
  pods.reserve(static_cast<std::size_t>(answer.pod_resources_size()));
  for (const auto& wire_pod : answer.pod_resources()) {
    PodResources pod{wire_pod.name(), wire_pod.namespace_(), {}};
    for (const auto& wire_container : wire_pod.containers()) {
      ContainerResources container{wire_container.name(), {}, {}};
      for (const auto& wire_devices : wire_container.devices()) {
        container.devices.push_back(
            {wire_devices.resource_name(),
             {wire_devices.device_ids().begin(), wire_devices.device_ids().end()}});
      }
      container.cpu_ids.assign(wire_container.cpu_ids().begin(), wire_container.cpu_ids().end());
      pod.containers.push_back(std::move(container));
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

}  // namespace

std::vector<PodResources> list_pod_resources(const std::string& socket_path,
                                             std::chrono::milliseconds timeout) {
  // gRPC would only say "connection refused"; a missing socket is almost
  // always a DaemonSet without the hostPath mount. (A folder we may not read
  // is left to gRPC, whose answer names the permission problem.)
  std::error_code ec;
  if (std::filesystem::status(socket_path, ec).type() == std::filesystem::file_type::not_found) {
    throw_error(ErrorCode::kNotFound, "no kubelet PodResources socket at " + socket_path +
                                          "; mount /var/lib/kubelet/pod-resources into the pod");
  }
  // "unix://" takes an absolute path only.
  const std::string target = "unix://" + std::filesystem::absolute(socket_path).string();

  // A fresh channel per call: the kubelet restarts with the node's upgrades,
  // and a call that runs once per refresh gains nothing from a cached one.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxAnswerBytes);
  auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::PodResourcesLister::NewStub(channel);

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::ListPodResourcesResponse answer;
  const grpc::Status status = stub->List(&context, v1::ListPodResourcesRequest{}, &answer);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    throw_error(ErrorCode::kTimeout, "the kubelet at " + socket_path +
                                         " did not answer PodResources List within " +
                                         std::to_string(timeout.count()) + " ms");
  }
  if (!status.ok()) {
    throw_error(ErrorCode::kIo, "kubelet PodResources List at " + socket_path +
                                    " failed: " + status.error_message() + " (gRPC status " +
                                    std::to_string(static_cast<int>(status.error_code())) + ")");
  }
  return from_wire(answer);
}

}  // namespace zeus::attribution
