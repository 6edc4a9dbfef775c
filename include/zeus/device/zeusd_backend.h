// The library as a zeusd client (docs/zeusd.md): when ZEUSD_SOCK_PATH or
// ZEUSD_HOST_PORT is set (and ZEUSD_TOKEN when the daemon wants one), GPU
// settings go through the node's zeusd, so an unprivileged process (e.g.
// GlobalPowerLimitOptimizer) can set power limits and clocks. As upstream,
// GPU reads stay local where a local NVML works; without one (a container
// without the driver, simulated GPUs served by the daemon) they go through
// zeusd too. RAPL energy goes through zeusd when the local energy_uj files
// are root-only.
//
// Control calls hold a connection-bound lease when the daemon offers leases
// (our extension), so if this process dies, even by SIGKILL, zeusd restores
// what it changed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"

namespace zeus::device {

struct ZeusdConfig {
  std::string url;       // "unix:/run/zeusd/zeusd.sock" or "http://host:port"
  std::string endpoint;  // as the user gave it (socket path or host:port)
  std::string token;     // "" : none
  // Control calls without a lease: what they set stays after this process
  // (an operator's lasting change, as upstream's client). Default: leased.
  bool persistent_settings = false;
  // ZEUSD_SOCK_PATH first, then ZEUSD_HOST_PORT (host:port), with ZEUSD_TOKEN.
  // nullopt when neither is set.
  static std::optional<ZeusdConfig> from_env();
};

// What /discover and /auth/whoami said.
struct ZeusdStatus {
  std::string endpoint;
  struct GpuInfo {
    int id = 0;
    std::string name;
    std::string pci_address;
    bool cumulative_energy_available = false;
  };
  struct CpuInfo {
    int id = 0;
    bool dram_available = false;
  };
  std::vector<GpuInfo> gpus;
  std::vector<CpuInfo> cpus;
  std::vector<std::string> enabled_api_groups;
  bool auth_required = false;
  std::vector<std::string> extensions;  // ours: "leases"
  std::optional<std::string> user;      // token subject
  std::vector<std::string> scopes;      // token scopes
  std::optional<std::int64_t> token_expires;
  std::string auth_error;  // why the token was not accepted ("" when fine)

  // The group is enabled and (with auth) the token has its scope.
  bool can(const std::string& group) const;
};

// One connection to zeusd, shared by the devices built on it. Thread-safe:
// a mutex serializes requests on the one keep-alive connection (which also
// carries the lease).
class ZeusdConnection {
 public:
  // Connects and runs discovery (and whoami with a token). kIo when the
  // daemon cannot be reached, naming the endpoint and what to do.
  explicit ZeusdConnection(ZeusdConfig config);
  ~ZeusdConnection();
  ZeusdConnection(const ZeusdConnection&) = delete;
  ZeusdConnection& operator=(const ZeusdConnection&) = delete;

  const ZeusdStatus& status() const { return status_; }
  // POST /gpu/<op>?gpu_ids=<gpu>&<query>&block=true under this process's
  // lease. Errors come back as zeus::Error with the daemon's message: 403
  // kNoPermission, 400 kInvalidArgument, 401 kNoPermission (token), 404
  // kNotSupported (group disabled), 409 kAlreadyExists, else kUnknown.
  void gpu_command(const std::string& op, int gpu, const std::string& query = {});
  // GET `target`; the parsed JSON body of a 200, errors as above.
  std::string get(const std::string& target);
  // The id of the lease this process holds ("" until the first command).
  std::string lease_id() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  ZeusdStatus status_;
};

// A GPU whose settings go through zeusd. `local` (may be null) serves reads.
std::unique_ptr<Gpu> make_zeusd_gpu(std::shared_ptr<ZeusdConnection> connection, int daemon_id,
                                    std::shared_ptr<Gpu> local);
// A CPU package whose energy is read through zeusd.
std::unique_ptr<Cpu> make_zeusd_cpu(std::shared_ptr<ZeusdConnection> connection, int daemon_id);

}  // namespace zeus::device
