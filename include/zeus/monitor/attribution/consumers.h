// Who the consumers are: processes, their cgroups, and the containers, pods
// and Slurm jobs those cgroups belong to, read from /proc and the cgroup
// filesystems (v2, v1, or the v1/v2 hybrid many distributions still run).
// Read-only; every root is configurable so tests run on fake trees.
//
// A process can vanish between any two reads: every per-process read answers
// std::nullopt then, never throws for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::attribution {

// One process, as /proc shows it.
struct ProcessInfo {
  std::uint32_t pid = 0;
  // Start time in clock ticks after boot (/proc/<pid>/stat field 22): with the
  // pid, it tells a reused pid from the process that had it before.
  std::uint64_t start_ticks = 0;
  std::string comm;    // /proc/<pid>/comm, without the newline
  std::string cgroup;  // the cgroup the CPU counters are read from (see CgroupLayout)
  // utime + stime of the process (its threads included), in microseconds.
  std::uint64_t cpu_time_us = 0;
  std::uint32_t ppid = 0;  // the parent (/proc/<pid>/stat field 4): jobs follow descendants
};

// Which hierarchy holds the CPU counters.
enum class CgroupMode {
  kUnified,  // cgroup v2 only: <root>/<path>/cpu.stat usage_usec
  kLegacy,   // v1 cpuacct: <root>/cpuacct/<path>/cpuacct.usage (ns); also "cpu,cpuacct"
  kHybrid,   // v1 cpuacct mounted and a v2 tree at <root>/unified: counters from v1
  kNone,     // no cgroup filesystem: per-process times from /proc only
};
const char* cgroup_mode_name(CgroupMode mode);

// Reads processes and cgroup CPU counters.
class ConsumerReader {
 public:
  // `proc_root`: "/proc" on a real system; `cgroup_root`: "/sys/fs/cgroup".
  // The mode is detected from what exists under cgroup_root.
  explicit ConsumerReader(std::string proc_root = "/proc",
                          std::string cgroup_root = "/sys/fs/cgroup");

  CgroupMode mode() const { return mode_; }

  // Every pid under proc_root (numeric directory names), unsorted.
  std::vector<std::uint32_t> pids() const;
  // One process; nullopt when it vanished or cannot be read.
  std::optional<ProcessInfo> process(std::uint32_t pid) const;
  // A cgroup's cumulative CPU time in microseconds (v2 usage_usec, v1
  // cpuacct.usage / 1000); nullopt when the cgroup is gone or unreadable.
  std::optional<std::uint64_t> cgroup_cpu_time_us(std::string_view cgroup) const;
  // Whether the cgroup has child cgroups (its counter then includes theirs).
  // False when it is gone or unreadable.
  bool cgroup_has_children(std::string_view cgroup) const;

 private:
  std::string proc_root_;
  std::string cgroup_root_;
  CgroupMode mode_ = CgroupMode::kNone;
  std::string cpu_hierarchy_;  // the directory the counters are under
};

// What a cgroup path says about who owns it.
struct CgroupOwner {
  std::string runtime;       // "containerd", "cri-o", "docker", "podman", "" when none
  std::string container_id;  // 64 hex digits where found, else ""
  std::string pod_uid;       // Kubernetes pod UID with dashes ("" outside Kubernetes)
  std::string slurm_job;     // Slurm job id ("" outside Slurm)
};

// Recognizes the container, pod and Slurm job in a cgroup path, for the
// systemd and cgroupfs drivers, e.g.
//   /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/cri-containerd-<id>.scope
//   /kubepods/besteffort/pod<uid>/<id>
//   /system.slice/docker-<id>.scope, /docker/<id>
//   /machine.slice/libpod-<id>.scope, /user.slice/.../libpod-<id>.scope
//   /kubepods.slice/.../crio-<id>.scope
//   /slurm/uid_1000/job_42/step_0, /system.slice/slurmstepd.scope/job_42/step_0
// Unknown shapes give an empty owner.
CgroupOwner parse_cgroup_owner(std::string_view cgroup_path);

}  // namespace zeus::attribution
