// What the zeusd handlers share: options, devices, workers, leases, streams,
// servers. Private to src/zeusd. The handlers (gpu_routes.cc, cpu_routes.cc,
// server_routes.cc, lease_routes.cc) only translate between HTTP and these.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http/router.h"
#include "http/server.h"
#include "zeus/monitor/attribution/node_attributor.h"
#include "zeus/util/periodic_thread.h"
#include "zeus/zeusd/daemon.h"
#include "zeus/zeusd/jwt.h"
#include "zeus/zeusd/metrics.h"
#include "zeusd/command_override.h"
#include "zeusd/device_worker.h"
#include "zeusd/leases.h"
#include "zeusd/overridden_gpu.h"
#include "zeusd/power_streamer.h"
#include "zeusd/scheduler.h"

namespace zeus::zeusd {

// Who made an authorized request: the token's subject ("" without auth).
struct Caller {
  std::string sub;
};

// Members are destroyed bottom-up: servers first (their connection-close
// callbacks reach the leases), then streams, leases, and the GPU workers last
// (the leases' final restores run on them).
struct Daemon::State {
  State(DaemonOptions o, DaemonDevices d, Clock& c)
      : options(std::move(o)), devices(std::move(d)), clock(c) {}

  bool enabled(ApiGroup g) const;

  DaemonOptions options;
  DaemonDevices devices;
  Clock& clock;
  std::string signing_key;  // "" : authentication off
  CommandOverrides overrides;
  std::vector<std::unique_ptr<DeviceWorker>> workers;  // per GPU
  std::vector<std::shared_ptr<OverriddenGpu>> gpus;
  std::vector<bool> gpu_energy_available;
  std::vector<bool> cpu_dram_available;
  Scheduler scheduler;
  std::unique_ptr<LeaseManager> leases;
  std::unique_ptr<PowerStreamer> gpu_stream;
  std::unique_ptr<PowerStreamer> cpu_stream;
  std::unique_ptr<MetricsRenderer> metrics;
  // The attribution ledger (null when off), its label text per ledger device,
  // and its timer (stopped before the ledger goes).
  std::unique_ptr<attribution::NodeAttributor> attributor;
  std::vector<std::string> attribution_labels;
  PeriodicThread attribution_thread;
  std::string pods_warning;  // the last kubelet failure warned about
  std::mutex job_owners_mutex;
  std::map<std::string, uid_t> job_owners;  // "<job>.<step>" -> the uid that registered it
  std::atomic<std::size_t> metrics_capacity{4096};
  std::unique_ptr<http::Server> api_server;
  std::unique_ptr<http::Server> metrics_server;
  int tcp_port = 0;
  int metrics_port = 0;
  std::string metrics_host;
  bool started = false;
  bool stopped = false;
};

using GuardedHandler =
    std::function<void(http::Request request, http::Responder responder, const Caller& caller)>;

// Who may call a route, declared where the route is registered: the API
// group that must be enabled and that a token must grant, any valid token
// (no group), or anyone (upstream's /discover and /time, even with
// authentication on).
struct RouteAccess {
  std::optional<ApiGroup> group;
  bool anyone_may_call = false;
  static RouteAccess group_of(ApiGroup g) { return {g, false}; }
  static RouteAccess any_token() { return {std::nullopt, false}; }
  static RouteAccess anyone() { return {std::nullopt, true}; }
};

// Registers `handler` behind upstream's checks, in upstream's order: a
// disabled API group answers 404 before anything else; then, with
// authentication on, a missing, invalid or expired bearer token 401 with
// WWW-Authenticate, and a token without the route's group 403. `access`
// must agree with upstream's path rule (required_scope): kInternal at
// registration otherwise, so a route cannot drift from the scope clients of
// the Python Zeus expect.
void add_route(Daemon::State& state, http::Router& router, http::Method method, std::string path,
               RouteAccess access, GuardedHandler handler);

// {"error": message} with `status`.
http::Response error_response(int status, std::string_view message);
// The status upstream answers for a per-device failure: 400 bad input or
// unsupported, 403 no permission, 409 a setting held by another lease, 410 a
// lease that ended, 500 otherwise.
int device_error_status(const std::exception& e);
// error_response with device_error_status, plus Retry-After for a RetryLater.
http::Response error_response_for(const std::exception& e);
// {"errors": {"<id>": message}} with the worst (highest) status. A control
// command also says which devices it did change: "applied": [ids].
http::Response aggregate_errors(
    const std::vector<std::pair<int, std::pair<int, std::string>>>& errors,
    const std::optional<std::vector<int>>& applied = std::nullopt);
// Milliseconds since the Unix epoch.
std::int64_t unix_time_ms();

void add_server_routes(Daemon::State& state, http::Router& router);
void add_gpu_routes(Daemon::State& state, http::Router& router);
void add_cpu_routes(Daemon::State& state, http::Router& router);
void add_lease_routes(Daemon::State& state, http::Router& router);

}  // namespace zeus::zeusd
