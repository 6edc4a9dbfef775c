#include "zeusd/leases.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <random>
#include <set>

#include "util/text.h"
#include "zeus/device/gpu_settings_guard.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::zeusd {

// One lease. `mutex` guards everything below it; `info` and `deadline`
// (under the manager's mutex) are set at acquire/renew.
struct LeaseManager::Lease {
  LeaseInfo info;
  std::string quota_key;  // whose share it counts against
  Seconds deadline{0};
  std::mutex mutex;
  bool ended = false;
  std::map<int, std::unique_ptr<device::GpuSettingsGuard>> guards;  // per GPU touched
};

namespace {

// The wait suggested when the table is full of connection-bound leases,
// which end only when their clients go.
constexpr Seconds kRetryAfterFullLeases{30.0};

std::string quota_key(const std::string& owner, const std::optional<http::PeerCredentials>& peer) {
  if (!owner.empty()) return fmt::format("token subject '{}'", printable(owner));
  if (peer) return fmt::format("uid {}", peer->uid);
  return "the unauthenticated clients";
}

std::string new_lease_id() {
  static std::mutex m;
  static std::random_device rd;
  std::lock_guard lock(m);
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

const char* setting_text(int s) {
  switch (s) {
    case 0:
      return "power limit";
    case 1:
      return "persistence mode";
    case 2:
      return "locked graphics clocks";
    default:
      return "locked memory clocks";
  }
}

}  // namespace

LeaseManager::LeaseManager(std::vector<std::shared_ptr<OverriddenGpu>> gpus,
                           std::vector<DeviceWorker*> workers, Clock& clock)
    : gpus_(std::move(gpus)), workers_(std::move(workers)), clock_(clock) {
  reaper_ = std::thread([this] { reap(); });
}

LeaseManager::~LeaseManager() {
  release_all();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  reaper_.join();
}

LeaseInfo LeaseManager::acquire(const std::string& owner,
                                const std::shared_ptr<http::Connection>& connection,
                                std::optional<Seconds> ttl) {
  if (!ttl && !connection) {
    throw_error(ErrorCode::kInvalidArgument,
                "a lease without ttl_s is bound to its connection, and this request has none");
  }
  auto lease = std::make_shared<Lease>();
  lease->info.id = new_lease_id();
  lease->info.owner = owner;
  lease->info.ttl = ttl;
  if (connection) {
    lease->info.connection_id = connection->id();
    lease->info.peer = connection->peer();
  }
  lease->quota_key = quota_key(owner, lease->info.peer);
  {
    std::lock_guard lock(mutex_);
    // A heartbeat lease that was abandoned ends within its ttl: a fair hint.
    const Seconds retry = ttl ? *ttl : kRetryAfterFullLeases;
    if (leases_.size() >= max_leases) {
      throw RetryLater(fmt::format("zeusd holds {} leases, its limit (--max-leases); retry when "
                                   "some end",
                                   leases_.size()),
                       retry, /*whole_server=*/true);
    }
    const auto held =
        static_cast<std::size_t>(std::count_if(leases_.begin(), leases_.end(), [&](const auto& l) {
          return l.second->quota_key == lease->quota_key;
        }));
    if (held >= max_leases_per_owner) {
      throw RetryLater(fmt::format("{} already holds {} leases, the limit per owner "
                                   "(--max-leases-per-owner); release some first",
                                   lease->quota_key, held),
                       retry, /*whole_server=*/false);
    }
    if (ttl) lease->deadline = clock_.now() + *ttl;
    leases_[lease->info.id] = lease;
  }
  if (!ttl) {
    connection->hold_open(true);
    std::weak_ptr<Lease> weak = lease;
    connection->on_close([this, weak] {
      if (auto l = weak.lock()) end(l, "its connection closed");
    });
  }
  const auto& p = lease->info.peer;
  log::info("zeusd: lease {} started for {}{}{}", lease->info.id,
            owner.empty() ? "an unauthenticated client" : "'" + owner + "'",
            p ? fmt::format(" (pid {}, uid {})", p->pid, p->uid) : std::string(),
            ttl ? fmt::format(", heartbeat every {:g} s", ttl->count())
                : std::string(", bound to its connection"));
  return lease->info;
}

std::shared_ptr<LeaseManager::Lease> LeaseManager::find_locked(const std::string& id,
                                                               const std::string& owner) const {
  const auto it = leases_.find(id);
  if (it == leases_.end()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("lease '{}' does not exist or has ended (its settings were restored); "
                            "acquire a new one with POST /lease/acquire",
                            id.substr(0, 64)));
  }
  if (it->second->info.owner != owner) {
    throw_error(ErrorCode::kNoPermission, "this lease belongs to another user");
  }
  return it->second;
}

void LeaseManager::check(const std::string& id, const std::string& owner) const {
  std::lock_guard lock(mutex_);
  (void)find_locked(id, owner);
}

LeaseInfo LeaseManager::renew(const std::string& id, const std::string& owner) {
  std::lock_guard lock(mutex_);
  auto lease = find_locked(id, owner);
  if (lease->info.ttl) lease->deadline = clock_.now() + *lease->info.ttl;
  return lease->info;
}

void LeaseManager::release(const std::string& id, const std::string& owner) {
  std::shared_ptr<Lease> lease;
  {
    std::lock_guard lock(mutex_);
    lease = find_locked(id, owner);
  }
  end(lease, "its holder released it");
}

void LeaseManager::end(const std::shared_ptr<Lease>& lease, const char* why) {
  {
    std::lock_guard lock(mutex_);
    const auto it = leases_.find(lease->info.id);
    if (it == leases_.end() || it->second != lease) return;  // already ended
    leases_.erase(it);
    std::erase_if(claims_, [&](const auto& c) { return c.second == lease->info.id; });
  }
  std::set<int> touched;
  {
    std::lock_guard lock(lease->mutex);
    lease->ended = true;
    for (const auto& [gpu, guard] : lease->guards) touched.insert(gpu);
  }
  log::info("zeusd: lease {} ended because {}; restoring {} GPU(s)", lease->info.id, why,
            touched.size());
  for (int gpu : touched) {
    auto restore = [lease, gpu] {
      std::lock_guard lock(lease->mutex);
      // The guard puts back the limit and persistence mode and resets clocks
      // locked through it; failures are logged there.
      if (auto it = lease->guards.find(gpu); it != lease->guards.end()) it->second->restore();
      lease->guards.erase(gpu);
    };
    if (!workers_[gpu]->post(restore)) restore();  // the worker is stopping: restore here
  }
}

void LeaseManager::release_all() {
  std::vector<std::shared_ptr<Lease>> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, l] : leases_) all.push_back(l);
  }
  for (const auto& l : all) end(l, "zeusd is shutting down");
  // Wait for the restores queued above.
  std::vector<std::future<void>> done;
  for (DeviceWorker* w : workers_) {
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    if (!w->post([p] { p->set_value(); })) p->set_value();
  }
  for (auto& f : done) f.wait();
}

void LeaseManager::run_under_lease(const std::string& id, const std::string& owner, int gpu,
                                   GpuOp op, const GpuCommandArgs& args) {
  std::vector<Setting> settings;
  switch (op) {
    case GpuOp::kSetPowerLimit:
      settings = {Setting::kPowerLimit};
      break;
    case GpuOp::kSetPersistenceMode:
      settings = {Setting::kPersistence};
      break;
    case GpuOp::kSetGpuLockedClocks:
    case GpuOp::kResetGpuLockedClocks:
      settings = {Setting::kGpuClocks};
      break;
    case GpuOp::kSetMemLockedClocks:
    case GpuOp::kResetMemLockedClocks:
      settings = {Setting::kMemClocks};
      break;
    case GpuOp::kResetLockedClocks:
      settings = {Setting::kGpuClocks, Setting::kMemClocks};
      break;
  }
  std::shared_ptr<Lease> lease;
  {
    std::lock_guard lock(mutex_);
    lease = find_locked(id, owner);
    for (Setting s : settings) {
      const auto it = claims_.find({gpu, s});
      if (it != claims_.end() && it->second != id) {
        throw_error(ErrorCode::kAlreadyExists,
                    fmt::format("the {} of GPU {} is held by another lease; it becomes free when "
                                "that lease ends",
                                setting_text(static_cast<int>(s)), gpu));
      }
    }
    for (Setting s : settings) claims_[{gpu, s}] = id;
  }
  std::lock_guard lock(lease->mutex);
  if (lease->ended) {
    throw_error(ErrorCode::kNotFound, "the lease ended before this command ran");
  }
  OverriddenGpu& device = *gpus_[gpu];
  auto found = lease->guards.find(gpu);
  if (found == lease->guards.end()) {
    // Made before it is stored: a guard that cannot read the GPU throws and
    // leaves no empty entry for the lease's end to restore through.
    auto made = std::make_unique<device::GpuSettingsGuard>(
        std::vector<std::shared_ptr<device::Gpu>>{gpus_[gpu]});
    found = lease->guards.emplace(gpu, std::move(made)).first;
  }
  device::GpuSettingsGuard* guard = found->second.get();
  switch (op) {
    case GpuOp::kSetPowerLimit:
      guard->set_power_limit(Milliwatts(args.power_limit_mw));
      break;
    case GpuOp::kSetPersistenceMode:
      guard->set_persistence_mode(args.enabled);
      break;
    case GpuOp::kSetGpuLockedClocks:
      guard->set_gpu_locked_clocks(Megahertz(args.min_clock_mhz), Megahertz(args.max_clock_mhz));
      break;
    case GpuOp::kResetGpuLockedClocks:
      device.reset_gpu_locked_clocks();
      break;
    case GpuOp::kSetMemLockedClocks:
      guard->set_memory_locked_clocks(Megahertz(args.min_clock_mhz), Megahertz(args.max_clock_mhz));
      break;
    case GpuOp::kResetMemLockedClocks:
      device.reset_memory_locked_clocks();
      break;
    case GpuOp::kResetLockedClocks:
      device.reset_locked_clocks();
      break;
  }
}

std::size_t LeaseManager::active() const {
  std::lock_guard lock(mutex_);
  return leases_.size();
}

std::vector<LeaseInfo> LeaseManager::list() const {
  std::lock_guard lock(mutex_);
  std::vector<LeaseInfo> out;
  for (const auto& [id, l] : leases_) out.push_back(l->info);
  return out;
}

void LeaseManager::reap() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // A tenth of a second between checks: a lease is restored well within a
    // second of its deadline.
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (stopping_) break;
    std::vector<std::shared_ptr<Lease>> due;
    const Seconds now = clock_.now();
    for (const auto& [id, l] : leases_) {
      if (l->info.ttl && now > l->deadline) due.push_back(l);
    }
    if (due.empty()) continue;
    lock.unlock();
    for (const auto& l : due) end(l, "its heartbeat stopped (TTL passed without a renew)");
    lock.lock();
  }
}

}  // namespace zeus::zeusd
