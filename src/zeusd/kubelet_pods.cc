// Pod labels from the kubelet's PodResources API (the kubernetes part, built
// with gRPC). Without that part the daemon compiles the no-op in
// attribution.cc instead (ZEUS_WITHOUT_KUBERNETES).
#include <filesystem>

#include "zeus/monitor/attribution/kubernetes/pod_resources.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"
#include "zeusd/attribution.h"
#include "zeusd/daemon_state.h"

namespace zeus::zeusd {

void refresh_pods(Daemon::State& s) {
  const std::string& socket = s.options.pod_resources_socket;
  if (!s.attributor || socket.empty()) return;
  std::error_code ec;
  if (!std::filesystem::exists(socket, ec)) {
    // The default path missing is a node without Kubernetes: silence. A path
    // the operator gave that is missing is worth one warning.
    const std::string warning = "no such socket";
    if (socket != DaemonOptions{}.pod_resources_socket && s.pods_warning != warning) {
      log::warn(
          "zeusd: no kubelet PodResources socket at {}: workloads get no pod labels until "
          "it appears (mount /var/lib/kubelet/pod-resources into the pod)",
          socket);
      s.pods_warning = warning;
    }
    return;
  }
  try {
    s.attributor->set_pods(attribution::PodDeviceMap(attribution::list_pod_resources(socket)));
    s.pods_warning.clear();
  } catch (const Error& e) {
    // A kubelet restarting is routine: warn once per kind of failure and
    // keep the labels already learned.
    const std::string warning = e.what();
    if (warning != s.pods_warning) {
      log::warn("zeusd: pod labels not refreshed from {}: {}", socket, warning);
      s.pods_warning = warning;
    }
  }
}

}  // namespace zeus::zeusd
