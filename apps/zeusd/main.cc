// zeusd: the privileged node daemon (docs/zeusd.md). `zeusd serve` finds the
// node's devices and serves the zeusd API until SIGINT/SIGTERM; `zeusd token
// issue` prints a signed bearer token. Flags and defaults follow the upstream
// daemon; the library (zeus/zeusd) does the work.
#include <CLI/CLI.hpp>

#include "late_gpus.h"

#include <unistd.h>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <optional>
#include <string>
#include <string_view>

#include "util/parse.h"
#include "zeus/device/devices.h"
#include "zeus/monitor/attribution/node_attributor.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"
#include "zeus/util/signals.h"
#include "zeus/zeusd/daemon.h"
#include "zeus/zeusd/jwt.h"

namespace {

struct ServeFlags {
  std::string mode = "uds";
  std::string socket_path = zeus::zeusd::kDefaultSocketPath;
  std::string socket_permissions = "666";
  std::optional<unsigned> socket_uid;
  std::optional<unsigned> socket_gid;
  std::string tcp_bind_address = "127.0.0.1:4938";
  int num_workers = 0;
  double gpu_power_poll_hz = 20;
  double cpu_power_poll_hz = 10;
  std::string gpu_backend = "auto";
  std::string enable;
  std::string gpu_command_overrides;
  std::string signing_key_path;
  std::string metrics_address;
  std::string dcgm_hostname_label = zeus::zeusd::DaemonOptions{}.dcgm_hostname_label;
  std::size_t max_leases = zeus::zeusd::DaemonOptions{}.max_leases;
  std::size_t max_leases_per_owner = zeus::zeusd::DaemonOptions{}.max_leases_per_owner;
  bool no_attribution = false;
  double attribution_interval = 1.0;
  bool attribution_processes = false;
  std::string gpu_idle_power;
  std::string cpu_idle_power;
  std::string attribution_state;
  std::string pod_resources_socket = zeus::zeusd::DaemonOptions{}.pod_resources_socket;
  double rediscover_interval = 30.0;
};

// CLI11's Range lets NaN through (every comparison with NaN is false).
CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) {
          return "'" + text + "' is not a finite number";
        }
        return {};
      },
      "NUMBER");
}

// The device layer's advice names the library's environment variable; zeusd
// chooses its backend with a flag and ignores the variable.
std::string in_zeusd_words(std::string text) {
  constexpr std::string_view variable = "ZEUS_GPU_BACKEND=";
  constexpr std::string_view flag = "--gpu-backend ";
  for (auto at = text.find(variable); at != std::string::npos; at = text.find(variable, at)) {
    text.replace(at, variable.size(), flag);
    at += flag.size();
  }
  return text;
}

// The daemon's transport, socket, worker, sampling, authentication and
// lease options from the flags.
zeus::zeusd::DaemonOptions daemon_options(const ServeFlags& f) {
  using namespace zeus;
  zeusd::DaemonOptions o;
  if (f.mode == "uds") {
    o.mode = zeusd::TransportMode::kUds;
  } else if (f.mode == "tcp") {
    o.mode = zeusd::TransportMode::kTcp;
  } else {
    throw_error(ErrorCode::kInvalidArgument,
                "--mode: '" + f.mode + "' is not a transport; use uds or tcp");
  }
  o.socket_path = f.socket_path;
  o.create_socket_directory = f.socket_path == zeusd::kDefaultSocketPath;
  o.socket_permissions = static_cast<unsigned>(
      parse_int(f.socket_permissions, "--socket-permissions (octal digits)", 0, 7777));
  {
    // Octal, as upstream: "666" means rw-rw-rw-.
    unsigned mode = 0;
    for (char c : f.socket_permissions) {
      if (c < '0' || c > '7') {
        throw_error(ErrorCode::kInvalidArgument,
                    "--socket-permissions: '" + f.socket_permissions + "' is not octal (e.g. 660)");
      }
      mode = mode * 8 + static_cast<unsigned>(c - '0');
    }
    o.socket_permissions = mode;
  }
  if (f.socket_uid) o.socket_uid = *f.socket_uid;
  if (f.socket_gid) o.socket_gid = *f.socket_gid;
  o.tcp_bind_address = f.tcp_bind_address;
  o.num_workers = f.num_workers;
  o.gpu_power_poll_hz = f.gpu_power_poll_hz;
  o.cpu_power_poll_hz = f.cpu_power_poll_hz;
  o.gpu_command_overrides = f.gpu_command_overrides;
  o.signing_key_path = f.signing_key_path;
  o.metrics_address = f.metrics_address;
  o.dcgm_hostname_label = f.dcgm_hostname_label;
  o.max_leases = f.max_leases;
  o.max_leases_per_owner = f.max_leases_per_owner;
  return o;
}

// Discovery, with its error and notes in zeusd's words.
zeus::device::DeviceInventory discover_node_devices(const zeus::device::DiscoveryOptions& d) {
  using namespace zeus;
  device::DeviceInventory inv;
  try {
    inv = device::discover_devices(d);
  } catch (const Error& e) {
    throw Error(e.code(), in_zeusd_words(e.what()));
  }
  for (const auto& note : inv.notes) log::info("zeusd: {}", in_zeusd_words(note));
  for (const auto& detail : inv.details) log::info("zeusd: detail: {}", in_zeusd_words(detail));
  return inv;
}

void set_attribution_options(const ServeFlags& f, zeus::zeusd::DaemonOptions& o) {
  using namespace zeus;
  o.attribution = !f.no_attribution;
  o.attribution_interval_s = f.attribution_interval;
  o.attribution_processes = f.attribution_processes;
  for (const auto& [id, w] : attribution::parse_idle_powers(f.gpu_idle_power, "--gpu-idle-power")) {
    o.gpu_idle_w[id] = w.value();
  }
  for (const auto& [id, w] : attribution::parse_idle_powers(f.cpu_idle_power, "--cpu-idle-power")) {
    o.cpu_idle_w[id] = w.value();
  }
  o.attribution_state_path = f.attribution_state;
  o.pod_resources_socket = f.pod_resources_socket;
}

// Runs the daemon until SIGINT/SIGTERM (exit status 0) or, started without
// GPUs, until GPUs appear (kExitGpusAppeared).
int run_daemon(const ServeFlags& f, const zeus::zeusd::DaemonOptions& o,
               const zeus::device::DeviceInventory& inv, const zeus::device::DiscoveryOptions& d) {
  using namespace zeus;
  // SIGINT/SIGTERM through the project's one signal mechanism: the daemon
  // keeps running until one arrives, then shuts down here (restoring leases).
  std::promise<int> stop;
  std::atomic<bool> stopping{false};
  SignalSubscription signals(SignalSubscription::Kind::kHandle, [&](int sig) {
    if (!stopping.exchange(true)) stop.set_value(sig);
  });
  zeusd::DaemonDevices devices{inv.gpus, {}, inv.cpus};
  zeusd::Daemon daemon(o, devices);
  daemon.start();
  if (!daemon.metrics_url().empty()) {
    std::fprintf(stderr, "zeusd: metrics on %s/metrics\n", daemon.metrics_url().c_str());
  }
  // Started without GPUs: keep looking for a driver that loads late.
  constexpr int kGpusAppeared = -1;
  std::optional<zeusd_app::LateGpuWatch> watch;
  if (inv.gpus.empty() && f.gpu_backend != "none" && f.gpu_backend != "sim" &&
      f.rediscover_interval > 0) {
    log::warn(
        "zeusd: no GPU found; looking again every {} s (--rediscover-interval) and, when GPUs "
        "appear, exiting with status {} so that the service manager (the systemd unit's "
        "Restart=on-failure) starts zeusd again to serve them",
        f.rediscover_interval, zeusd_app::kExitGpusAppeared);
    watch.emplace(d, Seconds(f.rediscover_interval), [&](std::size_t n) {
      log::warn(
          "zeusd: {} GPU(s) appeared after zeusd started (a driver loaded late); stopping "
          "with status {} to be started again with them",
          n, zeusd_app::kExitGpusAppeared);
      if (!stopping.exchange(true)) stop.set_value(kGpusAppeared);
    });
  }
  const int sig = stop.get_future().get();
  if (sig == kGpusAppeared) {
    daemon.shutdown();
    return zeusd_app::kExitGpusAppeared;
  }
  log::info("zeusd: signal {} received; restoring leased settings and stopping", sig);
  daemon.shutdown();
  return 0;
}

int serve(const ServeFlags& f) {
  using namespace zeus;
  zeusd::DaemonOptions o = daemon_options(f);

  // zeusd serves every GPU of the node, whatever its own environment hides,
  // and is never a client of another zeusd.
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  device::DiscoveryOptions d;
  d.use_zeusd = false;
  d.gpu_backend = f.gpu_backend;
  const bool explicit_groups = !f.enable.empty();
  std::vector<zeusd::ApiGroup> groups;
  if (explicit_groups) groups = zeusd::parse_api_groups(f.enable, "--enable");
  const auto wants = [&](zeusd::ApiGroup g) {
    return !explicit_groups || std::find(groups.begin(), groups.end(), g) != groups.end();
  };
  d.cpus = wants(zeusd::ApiGroup::kCpuRead);
  const device::DeviceInventory inv = discover_node_devices(d);
  if (!explicit_groups) {
    // Upstream's defaults on Linux: everything with a GPU backend, else cpu-read.
    groups = inv.gpus.empty() ? std::vector<zeusd::ApiGroup>{zeusd::ApiGroup::kCpuRead}
                              : std::vector<zeusd::ApiGroup>{zeusd::ApiGroup::kGpuControl,
                                                             zeusd::ApiGroup::kGpuRead,
                                                             zeusd::ApiGroup::kCpuRead};
  }
  o.enabled = groups;
  set_attribution_options(f, o);
  zeusd::check_privileges(o, ::geteuid());
  log::info("zeusd: {} GPU(s) ({}), {} CPU package(s)", inv.gpus.size(), inv.gpu_backend,
            inv.cpus.size());
  return run_daemon(f, o, inv, d);
}

struct IssueFlags {
  std::string key_path;
  std::string user;
  std::string scope;
  std::string expires;
};

int issue(const IssueFlags& t) {
  using namespace zeus;
  zeusd::TokenClaims claims;
  claims.sub = t.user;
  claims.scopes = zeusd::parse_api_groups(t.scope, "--scope");
  claims.exp =
      zeusd::expiry_from_duration(t.expires, static_cast<std::int64_t>(std::time(nullptr)));
  const std::string key = zeusd::read_signing_key(t.key_path);
  std::printf("%s\n", zeusd::issue_token(key, claims).c_str());
  return 0;
}

void add_serve_flags(CLI::App* serve_cmd, ServeFlags& f) {
  serve_cmd->add_option("--mode", f.mode, "Transport: uds or tcp")->capture_default_str();
  serve_cmd->add_option("--socket-path", f.socket_path, "Unix socket path (uds mode)")
      ->capture_default_str();
  serve_cmd
      ->add_option("--socket-permissions", f.socket_permissions, "Octal mode of the socket file")
      ->capture_default_str();
  serve_cmd->add_option("--socket-uid", f.socket_uid, "Owner uid of the socket file");
  serve_cmd->add_option("--socket-gid", f.socket_gid, "Owner gid of the socket file");
  serve_cmd
      ->add_option("--tcp-bind-address", f.tcp_bind_address,
                   "host:port to listen on (tcp mode); loopback unless told otherwise")
      ->capture_default_str();
  serve_cmd->add_option("--num-workers", f.num_workers, "HTTP threads (default: logical CPUs)")
      ->check(CLI::Range(1, 1024));
  serve_cmd
      ->add_option("--gpu-power-poll-hz", f.gpu_power_poll_hz,
                   "GPU power sampling rate of the power streams")
      ->capture_default_str();
  serve_cmd
      ->add_option("--cpu-power-poll-hz", f.cpu_power_poll_hz,
                   "CPU power sampling rate (streams and /cpu/get_power)")
      ->capture_default_str();
  serve_cmd
      ->add_option("--gpu-backend", f.gpu_backend,
                   "auto (NVIDIA, else AMD), nvml, amdsmi, sim (the simulated GPU, for demos) or "
                   "none")
      ->capture_default_str();
  serve_cmd->add_option("--enable", f.enable,
                        "API groups to serve, comma-separated: gpu-control, gpu-read, cpu-read "
                        "(default: all three with GPUs, cpu-read without)");
  serve_cmd->add_option("--gpu-command-overrides", f.gpu_command_overrides,
                        "TOML file of commands replacing GPU control operations");
  serve_cmd->add_option("--signing-key-path", f.signing_key_path,
                        "HMAC-SHA256 key file; turns on JWT authentication");
  serve_cmd->add_option("--metrics-address", f.metrics_address,
                        "host:port of a Prometheus /metrics listener (e.g. 127.0.0.1:9400); off "
                        "by default");
  serve_cmd
      ->add_option("--dcgm-hostname-label", f.dcgm_hostname_label,
                   "Name of the host label on the DCGM-compatible families (dcgm-exporter's "
                   "hostname; Hostname for dashboards made before dcgm-exporter renamed it)")
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-leases", f.max_leases,
                   "Leases held at once by all clients together (503 with Retry-After beyond)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-leases-per-owner", f.max_leases_per_owner,
                   "Leases held at once per token subject (or per uid without tokens; 429 with "
                   "Retry-After beyond)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
}

// The attribution ledger's flags, and rediscovery's (for GPUs that appear late).
void add_ledger_and_rediscovery_flags(CLI::App* serve_cmd, ServeFlags& f) {
  serve_cmd->add_flag("--no-attribution", f.no_attribution,
                      "Turn off the attribution ledger (who used the energy; docs/attribution.md)");
  serve_cmd
      ->add_option("--attribution-interval", f.attribution_interval,
                   "Seconds between the ledger's polls")
      ->check(finite_number())
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  serve_cmd->add_flag("--attribution-processes", f.attribution_processes,
                      "Also export per-process series (pid, comm): one series per GPU process");
  serve_cmd->add_option("--gpu-idle-power", f.gpu_idle_power,
                        "Idle power the ledger keeps apart, per GPU id: 0=60,1=58.5 (watts); "
                        "GPUs not named have it learned while no process runs");
  serve_cmd->add_option("--cpu-idle-power", f.cpu_idle_power,
                        "Idle power per CPU package id (watts), e.g. 0=25; 0 when not given");
  serve_cmd->add_option("--attribution-state", f.attribution_state,
                        "File that keeps learned idle powers across restarts (e.g. "
                        "/var/lib/zeusd/attribution.json)");
  serve_cmd
      ->add_option("--rediscover-interval", f.rediscover_interval,
                   "Started with no GPU (a driver that loads late): look again every this many "
                   "seconds, and exit with status 75 when GPUs appear so that systemd restarts "
                   "zeusd with them (0: never look again)")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.0, 86400.0));
  serve_cmd
      ->add_option("--pod-resources-socket", f.pod_resources_socket,
                   "The kubelet's PodResources socket, read for pod labels when it exists "
                   "(\"\" turns it off)")
      ->capture_default_str();
}

CLI::App* add_token_issue_command(CLI::App& app, IssueFlags& t) {
  auto* token_cmd = app.add_subcommand("token", "Manage bearer tokens");
  token_cmd->require_subcommand(1);
  auto* issue_cmd = token_cmd->add_subcommand("issue", "Print a signed HS256 token");
  issue_cmd->add_option("--signing-key-path", t.key_path, "The daemon's key file")->required();
  issue_cmd->add_option("--user", t.user, "Subject (sub) of the token")->required();
  issue_cmd->add_option("--scope", t.scope, "API groups it may use, comma-separated")->required();
  issue_cmd->add_option("--expires", t.expires, "1h, 7d, 30d, ... or never (0)")->required();
  return issue_cmd;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "zeusd: the Zeus node daemon (GPU control, RAPL and power streaming for "
      "unprivileged clients)",
      "zeusd"};
  app.set_version_flag("--version", std::string("zeusd ") + ZEUS_VERSION);
  app.require_subcommand(1);

  ServeFlags f;
  auto* serve_cmd = app.add_subcommand("serve", "Serve the zeusd API until SIGINT or SIGTERM");
  add_serve_flags(serve_cmd, f);
  add_ledger_and_rediscovery_flags(serve_cmd, f);

  IssueFlags t;
  auto* issue_cmd = add_token_issue_command(app, t);

  try {
    app.parse(argc, argv);
    if (serve_cmd->parsed()) return serve(f);
    if (issue_cmd->parsed()) return issue(t);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : zeus::kExitUsage;
  } catch (const zeus::Error& e) {
    std::fprintf(stderr, "zeusd: error: %s\n", e.what());
    return zeus::exit_code_for(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zeusd: error: %s\n", e.what());
    return zeus::kExitFailure;
  }
  return 0;
}
