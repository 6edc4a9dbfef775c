// Leases (our extension to the zeusd API): GPU settings changed under a
// lease are tied to the client that holds it. A lease is bound either to the
// client's connection (it ends when the connection closes: the client exited,
// crashed or was SIGKILLed) or to a heartbeat (it ends when not renewed within
// its TTL). When a lease ends, zeusd puts back everything changed under it
// (power limit, persistence mode, locked clocks) through each GPU's worker, so
// the restore runs after any command already queued for that GPU.
//
// Each setting of a GPU (power limit, persistence, graphics clocks, memory
// clocks) can be held by one lease at a time; another lease changing it gets
// kAlreadyExists (409). Requests without a lease (the upstream client) work as
// upstream: their changes stay.
//
// The record of what to restore is the device layer's GpuSettingsGuard (one
// per lease and GPU); it puts locked clocks back by resetting them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/connection.h"
#include "zeus/device/gpu_settings_guard.h"
#include "zeus/util/clock.h"
#include "zeusd/command_override.h"
#include "zeusd/device_worker.h"
#include "zeusd/overridden_gpu.h"

namespace zeus::zeusd {

struct LeaseInfo {
  std::string id;
  std::string owner;                // token subject; "" without auth
  std::optional<Seconds> ttl;       // nullopt: bound to its connection
  std::uint64_t connection_id = 0;  // the connection that acquired it
  std::optional<http::PeerCredentials> peer;
};

// Thread-safe. mutex_ guards the lease table and the setting claims; each
// lease's restore record is touched only on GPU worker threads.
class LeaseManager {
 public:
  // `gpus[i]` and `workers[i]` belong to zeusd GPU i; both outlive this.
  LeaseManager(std::vector<std::shared_ptr<OverriddenGpu>> gpus, std::vector<DeviceWorker*> workers,
               Clock& clock);
  ~LeaseManager();  // release_all()
  LeaseManager(const LeaseManager&) = delete;
  LeaseManager& operator=(const LeaseManager&) = delete;

  // Starts a lease. Without `ttl` it ends when `connection` closes (which
  // must then be given; it is also kept open past the idle timeout). At most
  // `max_leases` at once (RetryLater, whole server, beyond) and
  // `max_leases_per_owner` per owner (RetryLater for the caller beyond): the
  // owner is the token's subject, else the peer's uid, else one shared
  // "unauthenticated" owner.
  LeaseInfo acquire(const std::string& owner, const std::shared_ptr<http::Connection>& connection,
                    std::optional<Seconds> ttl);
  // Pushes a heartbeat lease's deadline to now + ttl. kNotFound for an ended
  // or unknown lease; kNoPermission for another owner's.
  LeaseInfo renew(const std::string& id, const std::string& owner);
  // Ends the lease now and restores its settings.
  void release(const std::string& id, const std::string& owner);
  // Ends every lease (daemon shutdown) and waits until their restores ran.
  void release_all();

  // Runs one control operation on GPU `gpu` under lease `id`, on the calling
  // thread, which must be that GPU's worker. Throws kNotFound when the lease
  // has ended, kAlreadyExists when another lease holds the setting, and what
  // the device throws.
  void run_under_lease(const std::string& id, const std::string& owner, int gpu, GpuOp op,
                       const GpuCommandArgs& args);
  // Checks that `id` is a live lease of `owner` (for a quick 4xx before queuing).
  void check(const std::string& id, const std::string& owner) const;

  std::size_t active() const;
  std::vector<LeaseInfo> list() const;
  std::size_t max_leases = 1024;
  std::size_t max_leases_per_owner = 64;

 private:
  struct Lease;
  enum class Setting { kPowerLimit, kPersistence, kGpuClocks, kMemClocks };
  std::shared_ptr<Lease> find_locked(const std::string& id, const std::string& owner) const;
  void end(const std::shared_ptr<Lease>& lease, const char* why);  // requires !mutex_
  void reap();

  const std::vector<std::shared_ptr<OverriddenGpu>> gpus_;
  const std::vector<DeviceWorker*> workers_;
  Clock& clock_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Lease>> leases_;
  std::map<std::pair<int, Setting>, std::string> claims_;  // (gpu, setting) -> lease id
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace zeus::zeusd
