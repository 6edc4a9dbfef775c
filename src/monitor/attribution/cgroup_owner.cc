// Container, pod and Slurm job from the shapes that runtimes, the kubelet and
// slurmstepd give cgroup names. Strict on purpose: a name that does not fit a
// known shape exactly gives an empty field, so an id is never wrong.
#include <array>
#include <optional>

#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution {
namespace {

bool is_lower_hex(std::string_view text) {
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_container_id(std::string_view text) { return text.size() == 64 && is_lower_hex(text); }

// A pod UID: an RFC 4122 UUID in lower case with `separator` between its
// groups (8-4-4-4-12), or, for static pods, the kubelet's 32-digit hash.
std::optional<std::string> pod_uid(std::string_view text, char separator) {
  if (text.size() == 32 && is_lower_hex(text)) return std::string(text);
  if (text.size() != 36) return std::nullopt;
  std::string uid(text);
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position != (uid[i] == separator)) return std::nullopt;
    if (dash_position) {
      uid[i] = '-';
    } else if (!is_lower_hex(uid.substr(i, 1))) {
      return std::nullopt;
    }
  }
  return uid;
}

// The systemd driver: "kubepods-pod<uid>.slice" (guaranteed QoS) or
// "kubepods-<qos>-pod<uid>.slice", the UID's dashes written as '_'.
std::optional<std::string> systemd_pod(std::string_view name) {
  constexpr std::string_view kPrefix = "kubepods-", kSuffix = ".slice";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  name = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  for (const std::string_view qos : {"burstable-", "besteffort-"}) {
    if (name.starts_with(qos)) name.remove_prefix(qos.size());
  }
  if (!name.starts_with("pod")) return std::nullopt;
  return pod_uid(name.substr(3), '_');
}

struct RuntimePrefix {
  std::string_view prefix;
  std::string_view runtime;
};
// conmon, CRI-O's and podman's monitor of one container, runs in a cgroup of
// its own named after that container: its CPU time is that container's cost.
constexpr std::array<RuntimePrefix, 6> kRuntimePrefixes{{
    {"cri-containerd-", "containerd"},
    {"crio-conmon-", "cri-o"},
    {"crio-", "cri-o"},
    {"docker-", "docker"},
    {"libpod-conmon-", "podman"},
    {"libpod-", "podman"},
}};

// "<runtime prefix><id>" with systemd's ".scope" (or, for cgroupfs, without).
bool prefixed_container(std::string_view name, CgroupOwner& owner) {
  if (name.ends_with(".scope")) name.remove_suffix(6);
  for (const auto& [prefix, runtime] : kRuntimePrefixes) {
    if (name.starts_with(prefix) && is_container_id(name.substr(prefix.size()))) {
      owner.runtime = runtime;
      owner.container_id = name.substr(prefix.size());
      return true;
    }
  }
  return false;
}

// "job_<N>" as slurmstepd names it: a decimal id without leading zeros.
std::optional<std::string> slurm_job(std::string_view name) {
  if (!name.starts_with("job_")) return std::nullopt;
  name.remove_prefix(4);
  if (name.empty() || name.size() > 10 || name.front() == '0') return std::nullopt;
  for (const char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return std::string(name);
}

// What the components seen so far say about the next one.
struct Walk {
  bool kubepods = false;      // under the kubelet's tree
  bool slurm = false;         // under slurmstepd's tree
  bool after_pod = false;     // parent was a cgroupfs pod: "pod<uid>"
  bool after_docker = false;  // parent was docker's cgroupfs root "docker"
};

void visit(std::string_view name, Walk& walk, CgroupOwner& owner) {
  const Walk parent = walk;
  walk.after_pod = false;
  walk.after_docker = name == "docker";
  if (name.starts_with("kubepods")) walk.kubepods = true;
  if (name.starts_with("slurm")) walk.slurm = true;
  if (auto uid = systemd_pod(name)) {
    owner.pod_uid = std::move(*uid);
    return;
  }
  if (parent.kubepods && name.starts_with("pod")) {
    if (auto uid = pod_uid(name.substr(3), '-')) {
      owner.pod_uid = std::move(*uid);
      walk.after_pod = true;
    }
    return;
  }
  if (prefixed_container(name, owner)) return;
  if (is_container_id(name) && (parent.after_pod || parent.after_docker)) {
    // cgroupfs: a bare id. Under a pod, the runtime is not in the name.
    owner.runtime = parent.after_docker ? "docker" : "";
    owner.container_id = name;
    return;
  }
  if (auto job = parent.slurm ? slurm_job(name) : std::nullopt) owner.slurm_job = std::move(*job);
}

}  // namespace

CgroupOwner parse_cgroup_owner(std::string_view cgroup_path) {
  CgroupOwner owner;
  Walk walk;
  while (!cgroup_path.empty()) {
    const std::size_t slash = cgroup_path.find('/');
    const std::string_view name = cgroup_path.substr(0, slash);
    if (!name.empty()) visit(name, walk, owner);
    cgroup_path.remove_prefix(slash == std::string_view::npos ? cgroup_path.size() : slash + 1);
  }
  return owner;
}

}  // namespace zeus::attribution
