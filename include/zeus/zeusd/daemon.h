// zeusd: the node's one privileged process. It serves the upstream zeusd HTTP
// API (docs/zeusd.md) over a Unix socket or TCP so that unprivileged jobs can
// set GPU knobs, read RAPL and stream power; adds leases (settings restored
// when their client goes away) and a Prometheus metrics listener.
//
// The Daemon owns one DeviceWorker per GPU (control commands, in order), the
// power streamers, the lease table and the HTTP servers. Reads of GPUs and
// CPUs happen on the I/O threads (the device seams are thread-safe).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/router.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/util/clock.h"
#include "zeus/zeusd/api_group.h"

namespace zeus::zeusd {

enum class TransportMode { kUds, kTcp };

// Upstream's default socket. Its directory is under /run, which a reboot
// empties: `zeusd serve` creates it (create_socket_directory).
inline constexpr const char* kDefaultSocketPath = "/run/zeusd/zeusd.sock";

// `zeusd serve` settings, with the upstream defaults.
struct DaemonOptions {
  TransportMode mode = TransportMode::kUds;
  std::string socket_path = kDefaultSocketPath;
  unsigned socket_permissions = 0666;
  // Create the socket's directory (mode 755; the socket's own mode decides
  // who may connect) when it is missing and its parent exists. Off: a missing
  // directory is an error that says what to do. `zeusd serve` turns it on
  // for the default socket only, so a mistyped --socket-path creates nothing.
  bool create_socket_directory = false;
  std::optional<uid_t> socket_uid;
  std::optional<gid_t> socket_gid;
  std::string tcp_bind_address = "127.0.0.1:4938";  // "host:port"; port 0 picks one
  int num_workers = 0;                              // HTTP threads; 0: logical CPUs
  double gpu_power_poll_hz = 20;
  double cpu_power_poll_hz = 10;
  std::vector<ApiGroup> enabled = {ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead};
  std::string gpu_command_overrides;  // TOML file; "" none
  std::string signing_key_path;       // "" : no authentication
  // Ours: "host:port" of a TCP listener that serves only GET /metrics
  // (Prometheus cannot scrape a Unix socket); "" none.
  std::string metrics_address;
  // The DCGM families' host label name: dcgm-exporter's current `hostname`,
  // or `Hostname` for dashboards written before it was renamed.
  std::string dcgm_hostname_label = "hostname";
  std::size_t max_leases = 1024;  // all owners together (503 beyond)
  // Per owner: a token's subject, else the peer's uid on a Unix socket (429
  // beyond), so one user cannot lock every other one out.
  std::size_t max_leases_per_owner = 64;
  double max_lease_ttl_s = 3600;

  // Ours: who used the energy (docs/attribution.md). The ledger polls every
  // interval and the metrics listener and GET /attribution export it.
  bool attribution = true;
  double attribution_interval_s = 1.0;
  bool attribution_processes = false;     // per-process series (pid, comm): cardinality
  std::map<unsigned, double> gpu_idle_w;  // configured idle power by GPU id; others learned
  std::map<unsigned, double> cpu_idle_w;  // by CPU package id; others 0
  std::string attribution_state_path;     // learned idle powers kept here ("" : not kept)
  // The kubelet's PodResources socket, read when it exists ("" : never).
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  double pod_resources_refresh_s = 10;  // how often pods are listed (at most once a poll)
  std::string proc_root = "/proc";      // where processes and cgroups are read (tests)
  std::string cgroup_root = "/sys/fs/cgroup";
};

// The devices a daemon serves; index = the id in the API.
struct DaemonDevices {
  std::vector<std::shared_ptr<device::Gpu>> gpus;
  // Parallel to gpus. Entries left empty are filled from Gpu::pci_bus_id()
  // when the daemon is constructed; "" when the GPU cannot say.
  std::vector<std::string> gpu_pci_addresses;
  std::vector<std::shared_ptr<device::Cpu>> cpus;
};

// Throws kNoPermission when an enabled group needs root (upstream's startup
// check: gpu-control without command overrides, cpu-read) and `euid` is not 0.
void check_privileges(const DaemonOptions& options, uid_t euid);

// Splits "host:port" (also "[v6]:port"); kInvalidArgument naming `what`.
std::pair<std::string, int> split_host_port(const std::string& text, std::string_view what);

class Daemon {
 public:
  // Loads the signing key and the command overrides (throws what they throw)
  // and starts the per-GPU workers. Serves nothing until start().
  Daemon(DaemonOptions options, DaemonDevices devices, Clock& clock = SteadyClock::instance());
  ~Daemon();  // shutdown()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Binds the API socket (and the metrics listener) and serves. The Unix
  // socket gets its mode and owner; a stale socket file is replaced, a live
  // one is kAlreadyExists.
  void start();
  // Ends every lease (restoring its settings), stops streams and servers.
  void shutdown();
  void wait();

  // "unix:/run/zeusd/zeusd.sock" or "http://127.0.0.1:4938", for clients.
  std::string api_url() const;
  // "http://127.0.0.1:PORT" of the metrics listener ("" when off).
  std::string metrics_url() const;

  std::size_t active_leases() const;
  // Sampler runs of the streamers (tests: lazy polling).
  std::uint64_t gpu_stream_polls(int gpu) const;
  std::uint64_t cpu_stream_polls(int cpu) const;
  std::size_t stream_subscribers() const;

  struct State;  // the handlers' shared state (src/zeusd/daemon_state.h)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace zeus::zeusd
