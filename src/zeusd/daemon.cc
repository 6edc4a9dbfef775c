#include "zeus/zeusd/daemon.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/server.h"
#include "util/parse.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"
#include "zeusd/attribution.h"
#include "zeusd/daemon_state.h"
#include "zeusd/trusted_file.h"

namespace zeus::zeusd {
namespace {

std::optional<PowerSample> gpu_sample(Daemon::State& s, int gpu) {
  try {
    const auto mw = static_cast<std::uint64_t>(
        std::llround(s.gpus[gpu]->power(device::PowerDomain::kDeviceInstant).value() * 1000.0));
    return PowerSample{
        fmt::format(R"({{"timestamp_ms":{},"gpu_id":{},"power_mw":{}}})", unix_time_ms(), gpu, mw),
        mw};
  } catch (const std::exception& e) {
    log::warn("zeusd: GPU {} power read failed while streaming: {}", gpu, e.what());
    return std::nullopt;
  }
}

// Power from two energy readings one poll apart; the first call after a
// restart only records the baseline.
class CpuPowerSampler {
 public:
  explicit CpuPowerSampler(Daemon::State& s) : s_(s), last_(s.devices.cpus.size()) {}
  std::optional<PowerSample> operator()(int cpu, bool restart) {
    Last& last = last_[static_cast<std::size_t>(cpu)];
    if (restart) last.valid = false;
    device::CpuEnergy e;
    try {
      e = s_.devices.cpus[cpu]->total_energy();
    } catch (const std::exception& ex) {
      log::warn("zeusd: CPU {} energy read failed while streaming: {}", cpu, ex.what());
      last.valid = false;
      return std::nullopt;
    }
    const auto now = std::chrono::steady_clock::now();
    const Last previous = last;
    last = Last{true, now, e};
    if (!previous.valid) return std::nullopt;
    const double dt = std::chrono::duration<double>(now - previous.at).count();
    if (dt <= 0) return std::nullopt;
    const auto mw = [&](double j0, double j1) {
      return static_cast<std::uint64_t>(std::llround(std::max(0.0, j1 - j0) / dt * 1000.0));
    };
    const std::uint64_t cpu_mw = mw(previous.energy.package.value(), e.package.value());
    std::optional<std::uint64_t> dram_mw;
    if (e.dram && previous.energy.dram)
      dram_mw = mw(previous.energy.dram->value(), e.dram->value());
    return PowerSample{
        fmt::format(R"({{"timestamp_ms":{},"cpu_id":{},"cpu_mw":{},"dram_mw":{}}})", unix_time_ms(),
                    cpu, cpu_mw, dram_mw ? std::to_string(*dram_mw) : "null"),
        cpu_mw * 1000003u + (dram_mw ? *dram_mw + 1 : 0)};
  }

 private:
  struct Last {
    bool valid = false;
    std::chrono::steady_clock::time_point at;
    device::CpuEnergy energy;
  };
  Daemon::State& s_;
  std::vector<Last> last_;
};

}  // namespace

bool Daemon::State::enabled(ApiGroup g) const {
  return std::find(options.enabled.begin(), options.enabled.end(), g) != options.enabled.end();
}

std::int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

http::Response error_response(int status, std::string_view message) {
  return http::Response::json(status, {{"error", message}});
}

int device_error_status(const std::exception& e) {
  const auto* err = dynamic_cast<const Error*>(&e);
  if (err == nullptr) return 500;
  switch (err->code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotSupported:
    case ErrorCode::kNotFound:
      return 400;
    case ErrorCode::kNoPermission:
      return 403;
    case ErrorCode::kAlreadyExists:
      return 409;
    case ErrorCode::kFailedPrecondition:
      return 410;
    case ErrorCode::kResourceExhausted: {
      const auto* later = dynamic_cast<const RetryLater*>(err);
      return later != nullptr ? later->http_status() : 429;
    }
    default:
      return 500;
  }
}

http::Response error_response_for(const std::exception& e) {
  http::Response out = error_response(device_error_status(e), e.what());
  if (const auto* later = dynamic_cast<const RetryLater*>(&e)) {
    http::add_retry_after(out, later->retry_after());
  }
  return out;
}

http::Response aggregate_errors(
    const std::vector<std::pair<int, std::pair<int, std::string>>>& errors,
    const std::optional<std::vector<int>>& applied) {
  nlohmann::json payload = nlohmann::json::object();
  int worst = 400;
  for (const auto& [id, e] : errors) {
    payload[std::to_string(id)] = e.second;
    worst = std::max(worst, e.first);
  }
  nlohmann::json body = {{"errors", payload}};
  if (applied) {
    std::vector<int> sorted = *applied;
    std::sort(sorted.begin(), sorted.end());
    body["applied"] = sorted;
  }
  return http::Response::json(worst, body);
}

void add_route(Daemon::State& state, http::Router& router, http::Method method, std::string path,
               RouteAccess access, GuardedHandler handler) {
  const bool open_by_path = path == "/discover" || path == "/time";
  if (access.group != required_scope(path) || access.anyone_may_call != open_by_path) {
    throw_error(
        ErrorCode::kInternal,
        fmt::format("zeusd route {}: declared access ({}{}) differs from upstream's ({}{})", path,
                    access.group ? api_group_name(*access.group) : "any token",
                    access.anyone_may_call ? ", open" : "",
                    required_scope(path) ? api_group_name(*required_scope(path)) : "any token",
                    open_by_path ? ", open" : ""));
  }
  const auto scope = access.group;
  router.route_async(
      method, path,
      [&state, scope, open = access.anyone_may_call, path, handler = std::move(handler)](
          http::Request request, http::Responder responder) {
        if (scope && !state.enabled(*scope)) {
          responder.send(
              error_response(404, fmt::format("API group '{}' is not enabled on this server.",
                                              api_group_name(*scope))));
          return;
        }
        Caller caller;
        if (state.signing_key.empty()) {
          if (path.starts_with("/auth/")) {
            responder.send(error_response(404, "Authentication is not enabled on this server."));
            return;
          }
        } else if (!open) {
          const auto unauthorized = [&](std::string_view message) {
            http::Response r = error_response(401, message);
            r.headers.set("WWW-Authenticate", R"(Bearer realm="zeusd")");
            responder.send(std::move(r));
          };
          const auto header = request.headers.get("Authorization");
          if (!header || !header->starts_with("Bearer ")) {
            unauthorized(
                "Authentication required. Provide an Authorization: Bearer <token> header.");
            return;
          }
          TokenClaims claims;
          try {
            const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
            claims = verify_token(state.signing_key, header->substr(7), now);
          } catch (const TokenError& e) {
            unauthorized(e.what());
            return;
          }
          if (scope && !claims.has_scope(*scope)) {
            std::string granted;
            for (ApiGroup g : claims.scopes) {
              granted += (granted.empty() ? "'" : ", '") + std::string(api_group_name(g)) + "'";
            }
            responder.send(error_response(
                403,
                fmt::format("Token for user '{}' lacks required scope '{}'. Token scopes: [{}]",
                            claims.sub, api_group_name(*scope), granted)));
            return;
          }
          caller.sub = claims.sub;
        }
        try {
          handler(std::move(request), responder, caller);
        } catch (const std::exception& e) {
          // Query errors and the like: upstream's {"error": ...} shape.
          responder.send(error_response_for(e));
        }
      });
}

void check_privileges(const DaemonOptions& options, uid_t euid) {
  if (euid == 0) return;
  const bool overrides = !options.gpu_command_overrides.empty();
  std::string needs;
  for (ApiGroup g : options.enabled) {
    if (api_group_needs_root(g, overrides)) {
      needs += (needs.empty() ? "" : ", ") + std::string(api_group_name(g));
    }
  }
  if (!needs.empty()) {
    throw_error(ErrorCode::kNoPermission,
                fmt::format("the API group(s) {} need root: run zeusd as root (see the systemd "
                            "unit in docs/zeusd.md), or enable only gpu-read with --enable, or "
                            "give GPU control to --gpu-command-overrides",
                            needs));
  }
}

std::pair<std::string, int> split_host_port(const std::string& text, std::string_view what) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: expected host:port (e.g. 127.0.0.1:4938), got '{}'", what, text));
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const int port = static_cast<int>(parse_int(text.substr(colon + 1), what, 0, 65535));
  return {host, port};
}

Daemon::Daemon(DaemonOptions options, DaemonDevices devices, Clock& clock)
    : state_(std::make_unique<State>(std::move(options), std::move(devices), clock)) {
  State& s = *state_;
  if (!(s.options.gpu_power_poll_hz > 0 && s.options.gpu_power_poll_hz <= 1000) ||
      !(s.options.cpu_power_poll_hz > 0 && s.options.cpu_power_poll_hz <= 1000)) {
    throw_error(ErrorCode::kInvalidArgument, "power poll rates must be in (0, 1000] Hz");
  }
  // Written as a negated range so that NaN fails it too.
  if (!(s.options.attribution_interval_s >= 0.05 && s.options.attribution_interval_s <= 3600)) {
    throw_error(ErrorCode::kInvalidArgument,
                "--attribution-interval must be a number of seconds in [0.05, 3600]");
  }
  if (!(s.options.pod_resources_refresh_s > 0 && s.options.pod_resources_refresh_s <= 86400)) {
    throw_error(ErrorCode::kInvalidArgument, "the pod refresh period must be in (0, 86400] s");
  }
  if (s.options.enabled.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "enable at least one API group");
  }
  if (!s.options.signing_key_path.empty()) {
    s.signing_key = read_signing_key(s.options.signing_key_path);  // its own mode first
    require_only_trusted_writers(s.options.signing_key_path, "signing key file");
    log::info("zeusd: JWT authentication enabled (key loaded from {})", s.options.signing_key_path);
  }
  if (!s.options.gpu_command_overrides.empty()) {
    s.overrides = CommandOverrides::load(s.options.gpu_command_overrides);
    std::string names;
    for (const auto& n : s.overrides.operation_names()) names += (names.empty() ? "" : ", ") + n;
    log::info("zeusd: GPU command overrides for {}", names.empty() ? "no operation" : names);
  }
  // PCI addresses for /discover, read once: they do not change while the
  // daemon runs. A GPU whose backend cannot say keeps "".
  s.devices.gpu_pci_addresses.resize(s.devices.gpus.size());
  for (std::size_t i = 0; i < s.devices.gpus.size(); ++i) {
    if (!s.devices.gpu_pci_addresses[i].empty()) continue;
    try {
      s.devices.gpu_pci_addresses[i] = s.devices.gpus[i]->pci_bus_id();
    } catch (const Error& e) {
      log::debug("zeusd: GPU {} has no PCI address: {}", i, e.what());
    }
  }
  std::vector<DeviceWorker*> workers;
  for (std::size_t i = 0; i < s.devices.gpus.size(); ++i) {
    s.workers.push_back(std::make_unique<DeviceWorker>(fmt::format("GPU {}", i)));
    workers.push_back(s.workers.back().get());
    s.gpus.push_back(
        std::make_shared<OverriddenGpu>(s.devices.gpus[i], s.overrides, static_cast<int>(i)));
    bool energy = false;
    try {
      energy = s.devices.gpus[i]->supports_energy_counter();
    } catch (const std::exception&) {
    }
    s.gpu_energy_available.push_back(energy);
  }
  for (const auto& cpu : s.devices.cpus) {
    bool dram = false;
    try {
      dram = cpu->has_dram();
    } catch (const std::exception&) {
    }
    s.cpu_dram_available.push_back(dram);
  }
  s.leases = std::make_unique<LeaseManager>(s.gpus, workers, clock);
  s.leases->max_leases = s.options.max_leases;
  s.leases->max_leases_per_owner = s.options.max_leases_per_owner;
  s.gpu_stream = std::make_unique<PowerStreamer>(
      "GPU", static_cast<int>(s.gpus.size()), Seconds(1.0 / s.options.gpu_power_poll_hz),
      [&s](int gpu, bool) { return gpu_sample(s, gpu); });
  auto cpu_sampler = std::make_shared<CpuPowerSampler>(s);
  s.cpu_stream = std::make_unique<PowerStreamer>(
      "CPU", static_cast<int>(s.devices.cpus.size()), Seconds(1.0 / s.options.cpu_power_poll_hz),
      [cpu_sampler](int cpu, bool restart) { return (*cpu_sampler)(cpu, restart); });
  std::vector<std::shared_ptr<device::Gpu>> metric_gpus(s.devices.gpus.begin(),
                                                        s.devices.gpus.end());
  s.metrics = std::make_unique<MetricsRenderer>(metric_gpus, s.devices.cpus, host_name(),
                                                s.options.dcgm_hostname_label);
  make_attribution(s);
  s.metrics->extra = [&s](std::string& out) {
    out.append(
        "# HELP zeusd_leases Leases (settings tied to a client) currently held.\n"
        "# TYPE zeusd_leases gauge\nzeusd_leases ");
    fmt::format_to(std::back_inserter(out), "{}\n", s.leases->active());
    if (s.attributor) {
      render_attribution(*s.attributor, s.attribution_labels, s.options.attribution_processes, out);
    }
  };
}

Daemon::~Daemon() { shutdown(); }

namespace {

// Makes sure the socket's directory exists (see DaemonOptions).
void prepare_socket_directory(const DaemonOptions& options) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(options.socket_path).parent_path();
  std::error_code ec;
  if (dir.empty() || fs::is_directory(dir, ec)) return;
  const bool parent_exists =
      fs::is_directory(dir.parent_path().empty() ? "." : dir.parent_path(), ec);
  if (!options.create_socket_directory || !parent_exists) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("the socket's directory {} does not exist; create it (`mkdir -p -m "
                            "755 {}`) or choose another --socket-path",
                            dir.string(), dir.string()));
  }
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw_error(ErrorCode::kIo, fmt::format("cannot create the socket's directory {}: {}",
                                            dir.string(), errno_text(errno)));
  }
  if (::chmod(dir.c_str(), 0755) != 0) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot set the mode of {}: {}", dir.string(), errno_text(errno)));
  }
  log::info("zeusd: created {} (mode 755) for the socket", dir.string());
}

// Says loudly (once, at start-up) when gpu-control is open to everybody.
void warn_if_anyone_may_control(const DaemonOptions& options, bool unauthenticated,
                                bool open_to_others, std::string_view who) {
  const bool control = std::find(options.enabled.begin(), options.enabled.end(),
                                 ApiGroup::kGpuControl) != options.enabled.end();
  if (!control || !unauthenticated || !open_to_others) return;
  log::warn(
      "zeusd: WARNING: gpu-control is enabled without authentication and {}: any of them may "
      "change GPU power limits and clocks. Give a --signing-key-path (and tokens to the users "
      "who may), restrict the socket (--socket-permissions 660 with --socket-gid), or disable "
      "gpu-control (--enable gpu-read,cpu-read)",
      who);
}

}  // namespace

void Daemon::start() {
  State& s = *state_;
  if (s.started) return;
  http::Router api;
  add_server_routes(s, api);
  add_gpu_routes(s, api);
  add_cpu_routes(s, api);
  add_lease_routes(s, api);
  add_attribution_routes(s, api);
  http::ServerOptions so;
  so.threads = s.options.num_workers > 0
                   ? s.options.num_workers
                   : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Query strings only: bodies are never needed.
  so.max_body_bytes = 64 << 10;
  s.api_server = std::make_unique<http::Server>(std::move(api), so);
  if (s.options.mode == TransportMode::kUds) {
    prepare_socket_directory(s.options);
    s.api_server->listen_unix(s.options.socket_path, s.options.socket_permissions);
    if (s.options.socket_uid || s.options.socket_gid) {
      const uid_t uid = s.options.socket_uid.value_or(static_cast<uid_t>(-1));
      const gid_t gid = s.options.socket_gid.value_or(static_cast<gid_t>(-1));
      if (::chown(s.options.socket_path.c_str(), uid, gid) != 0) {
        throw_error(ErrorCode::kIo, fmt::format("cannot change the owner of {}: {}",
                                                s.options.socket_path, errno_text(errno)));
      }
    }
    log::info("zeusd: listening on {} (mode {:o})", s.options.socket_path,
              s.options.socket_permissions);
    warn_if_anyone_may_control(s.options, s.signing_key.empty(),
                               (s.options.socket_permissions & 0002) != 0,
                               "every local user can write to the socket");
  } else {
    const auto [host, port] = split_host_port(s.options.tcp_bind_address, "--tcp-bind-address");
    s.tcp_port = s.api_server->listen_tcp(host, port);
    log::info("zeusd: listening on {}:{}", host, s.tcp_port);
    warn_if_anyone_may_control(s.options, s.signing_key.empty(), true,
                               "anyone who can reach the TCP port can connect");
  }
  if (!s.options.metrics_address.empty()) {
    http::Router m;
    m.route(http::Method::kGet, "/metrics", [&s](const http::Request&) {
      std::string body;
      body.reserve(s.metrics_capacity.load(std::memory_order_relaxed));
      // One poll's numbers for the whole scrape: the energy counters and
      // their split families must add up.
      std::unique_lock<std::mutex> frame;
      if (s.attributor) frame = s.attributor->hold_frame();
      s.metrics->render(body);
      s.metrics_capacity.store(body.size() + body.size() / 4 + 256, std::memory_order_relaxed);
      return http::Response::text(200, std::move(body), "text/plain; version=0.0.4; charset=utf-8");
    });
    http::ServerOptions mo;
    mo.threads = 1;
    mo.max_body_bytes = 4 << 10;
    s.metrics_server = std::make_unique<http::Server>(std::move(m), mo);
    const auto [host, port] = split_host_port(s.options.metrics_address, "--metrics-address");
    s.metrics_host = host;
    s.metrics_port = s.metrics_server->listen_tcp(host, port);
    s.metrics_server->start();
    log::info("zeusd: Prometheus metrics on http://{}:{}/metrics", host, s.metrics_port);
  }
  s.api_server->start();
  start_attribution(s);
  s.started = true;
}

void Daemon::shutdown() {
  State& s = *state_;
  if (s.stopped) return;
  s.stopped = true;
  stop_attribution(s);
  s.leases->release_all();
  s.gpu_stream->stop();
  s.cpu_stream->stop();
  if (s.api_server) s.api_server->shutdown();
  if (s.metrics_server) s.metrics_server->shutdown();
  s.scheduler.stop();
  s.leases->release_all();  // leases a last request may have made meanwhile
  for (auto& w : s.workers) w->stop();
}

void Daemon::wait() {
  if (state_->api_server) state_->api_server->wait();
}

std::string Daemon::api_url() const {
  const State& s = *state_;
  if (s.options.mode == TransportMode::kUds) return "unix:" + s.options.socket_path;
  const auto [host, port] = split_host_port(s.options.tcp_bind_address, "--tcp-bind-address");
  return fmt::format("http://{}:{}", host.find(':') != std::string::npos ? "[" + host + "]" : host,
                     s.tcp_port);
}

std::string Daemon::metrics_url() const {
  const State& s = *state_;
  if (!s.metrics_server) return "";
  return fmt::format("http://{}:{}", s.metrics_host, s.metrics_port);
}

std::size_t Daemon::active_leases() const { return state_->leases->active(); }
std::uint64_t Daemon::gpu_stream_polls(int gpu) const { return state_->gpu_stream->polls(gpu); }
std::uint64_t Daemon::cpu_stream_polls(int cpu) const { return state_->cpu_stream->polls(cpu); }
std::size_t Daemon::stream_subscribers() const {
  return state_->gpu_stream->subscribers() + state_->cpu_stream->subscribers();
}

}  // namespace zeus::zeusd
