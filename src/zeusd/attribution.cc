#include "zeusd/attribution.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "http/connection.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"
#include "zeusd/daemon_state.h"
#include "zeusd/query.h"

namespace zeus::zeusd {
namespace {

attribution::AttributorOptions attributor_options(const DaemonOptions& o) {
  attribution::AttributorOptions a;
  for (const auto& [gpu, w] : o.gpu_idle_w) a.gpu_idle[gpu] = Watts(w);
  for (const auto& [cpu, w] : o.cpu_idle_w) a.cpu_idle[cpu] = Watts(w);
  a.idle_state_path = o.attribution_state_path;
  a.proc_root = o.proc_root;
  a.cgroup_root = o.cgroup_root;
  return a;
}

// Each ledger device's label text, as the existing families label it.
std::vector<std::string> device_labels(const attribution::NodeAttributor& attributor) {
  std::vector<std::string> labels;
  attributor.visit([&](const attribution::Ledger&, std::span<const attribution::DeviceInfo> infos) {
    for (const auto& info : infos) {
      if (info.kind == attribution::DeviceInfo::Kind::kGpu) {
        labels.push_back(
            fmt::format(R"(gpu="{}",uuid="{}")", info.index, escape_label_value(info.uuid)));
      } else {
        labels.push_back(
            fmt::format(R"(package="{}",zone="{}")", info.index, escape_label_value(info.zone)));
      }
    }
  });
  return labels;
}

}  // namespace

void make_attribution(Daemon::State& s) {
  if (!s.options.attribution) return;
  std::vector<std::shared_ptr<device::Gpu>> gpus(s.devices.gpus.begin(), s.devices.gpus.end());
  s.attributor = std::make_unique<attribution::NodeAttributor>(
      gpus, s.devices.cpus, attributor_options(s.options), s.clock);
  s.attribution_labels = device_labels(*s.attributor);
  // The counters the scrape shows come from the ledger's last poll, so the
  // split families add up to them in every scrape.
  s.metrics->gpu_energy = [&s](std::size_t gpu, double& joules) {
    bool found = false;
    s.attributor->visit(
        [&](const attribution::Ledger& ledger, std::span<const attribution::DeviceInfo> infos) {
          for (std::size_t d = 0; d < infos.size(); ++d) {
            if (infos[d].kind != attribution::DeviceInfo::Kind::kGpu || infos[d].index != gpu)
              continue;
            if (ledger.device(static_cast<attribution::DeviceIndex>(d)).intervals == 0 &&
                ledger.device(static_cast<attribution::DeviceIndex>(d)).measured.value() == 0) {
              return;  // not read yet: the live counter
            }
            joules = static_cast<double>(
                         ledger.device(static_cast<attribution::DeviceIndex>(d)).measured.value()) /
                     1000.0;
            found = true;
          }
        });
    return found;
  };
  s.metrics->cpu_energy = [&s](std::size_t cpu, device::CpuEnergy& energy) {
    bool found = false;
    s.attributor->visit(
        [&](const attribution::Ledger& ledger, std::span<const attribution::DeviceInfo> infos) {
          for (std::size_t d = 0; d < infos.size(); ++d) {
            if (infos[d].index != cpu || infos[d].kind == attribution::DeviceInfo::Kind::kGpu)
              continue;
            const auto& t = ledger.device(static_cast<attribution::DeviceIndex>(d));
            const Joules j(static_cast<double>(t.measured.value()) / 1000.0);
            if (infos[d].kind == attribution::DeviceInfo::Kind::kCpuPackage) {
              if (t.intervals == 0 && t.measured.value() == 0) return;
              energy.package = j;
              found = true;
            } else {
              energy.dram = j;
            }
          }
        });
    return found;
  };
}

void start_attribution(Daemon::State& s) {
  if (!s.attributor) return;
  s.attributor->poll();  // the first reading: the counters' starting points
  refresh_pods(s);
  const auto polls_per_refresh =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(s.options.pod_resources_refresh_s /
                                                            s.options.attribution_interval_s));
  s.attribution_thread.start(s.clock, Seconds(s.options.attribution_interval_s),
                             [&s, polls_per_refresh] {
                               try {
                                 s.attributor->poll();
                                 if (s.attributor->polls() % polls_per_refresh == 0)
                                   refresh_pods(s);
                               } catch (const std::exception& e) {
                                 // The daemon's other work goes on; the
                                 // next poll tries again.
                                 log::warn("zeusd: attribution poll failed: {}", e.what());
                               }
                             });
}

void stop_attribution(Daemon::State& s) { s.attribution_thread.stop(); }

namespace {

// Job and step ids as Slurm writes them ("42", "42_3" in an array, "42+1" in
// a heterogeneous job, "batch", "extern"), bounded so they stay label values.
std::string job_id(const QueryFields& query, std::string_view name) {
  const std::string_view value = query.required(name);
  const bool ok =
      !value.empty() && value.size() <= 64 && std::all_of(value.begin(), value.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' ||
               c == '-';
      });
  if (!ok) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: '{}' is not a job or step id (letters, digits, _ . + -, at most 64)", name,
                    printable(value, 80)));
  }
  return std::string(value);
}

std::vector<std::uint32_t> pid_list(std::string_view raw) {
  std::vector<std::uint32_t> pids;
  for (int id : parse_device_ids(raw, "process")) {
    if (id == 0) throw_error(ErrorCode::kInvalidArgument, "pids: 0 is not a process");
    pids.push_back(static_cast<std::uint32_t>(id));
  }
  if (pids.size() > 4096) throw_error(ErrorCode::kInvalidArgument, "pids: at most 4096 per call");
  return pids;
}

// Who may name a process: root any; another user only its own (the owner of
// /proc/<pid>), so no one can charge a job with another user's work.
void check_may_register(const Daemon::State& s, const http::Request& request,
                        std::span<const std::uint32_t> pids) {
  const auto peer = request.connection ? request.connection->peer() : std::nullopt;
  if (!peer) {
    throw_error(ErrorCode::kNoPermission,
                "job registration needs zeusd's Unix socket (the caller's uid decides which "
                "processes it may name)");
  }
  if (peer->uid == 0) return;
  for (std::uint32_t pid : pids) {
    struct stat st {};
    const std::string path = fmt::format("{}/{}", s.options.proc_root, pid);
    if (::stat(path.c_str(), &st) != 0) continue;  // gone: noted as missing, harms no one
    if (st.st_uid != peer->uid) {
      throw_error(ErrorCode::kNoPermission,
                  fmt::format("process {} does not belong to uid {}: only root may register "
                              "another user's processes",
                              pid, peer->uid));
    }
  }
}

std::optional<uid_t> peer_uid(const http::Request& request) {
  const auto peer = request.connection ? request.connection->peer() : std::nullopt;
  if (!peer) return std::nullopt;
  return peer->uid;
}

void add_job_routes(Daemon::State& s, http::Router& router) {
  add_route(s, router, http::Method::kPost, "/attribution/jobs/start",
            RouteAccess::group_of(ApiGroup::kCpuRead),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              const QueryFields query(request.query, {"job", "step", "pids", "gpus"});
              const std::string job = job_id(query, "job");
              const std::string step = job_id(query, "step");
              const auto pids = pid_list(query.required("pids"));
              std::vector<unsigned> gpus;
              if (const auto raw = query.get("gpus"); raw && !raw->empty()) {
                for (int id : parse_device_ids(*raw, "GPU"))
                  gpus.push_back(static_cast<unsigned>(id));
              }
              check_may_register(s, request, pids);
              {
                std::lock_guard lock(s.job_owners_mutex);
                const std::string key = job + "." + step;
                const auto uid = peer_uid(request).value_or(0);
                auto [it, created] = s.job_owners.try_emplace(key, uid);
                if (!created && it->second != uid && uid != 0) {
                  throw_error(ErrorCode::kNoPermission,
                              fmt::format("step {} was registered by uid {}", key, it->second));
                }
              }
              s.attributor->start_job(job, step, pids, gpus);
              responder.send(
                  http::Response::json(200, {{"job", job}, {"step", step}, {"pids", pids.size()}}));
            });
  add_route(s, router, http::Method::kPost, "/attribution/jobs/end",
            RouteAccess::group_of(ApiGroup::kCpuRead),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              const QueryFields query(request.query, {"job", "step"});
              const std::string job = job_id(query, "job");
              const std::string step = job_id(query, "step");
              const std::string key = job + "." + step;
              {
                std::lock_guard lock(s.job_owners_mutex);
                const auto it = s.job_owners.find(key);
                const auto uid = peer_uid(request);
                if (it != s.job_owners.end() && (!uid || (*uid != 0 && *uid != it->second))) {
                  throw_error(ErrorCode::kNoPermission,
                              fmt::format("step {} was registered by uid {}", key, it->second));
                }
              }
              const auto record = s.attributor->end_job(job, step);
              if (!record) {
                responder.send(error_response(
                    404, fmt::format("no running step {} (never registered, already ended, or "
                                     "zeusd restarted since)",
                                     key)));
                return;
              }
              {
                std::lock_guard lock(s.job_owners_mutex);
                s.job_owners.erase(key);
              }
              responder.send(http::Response::text(200, attribution::job_record_json(*record),
                                                  "application/json"));
            });
  add_route(s, router, http::Method::kGet, "/attribution/jobs",
            RouteAccess::group_of(ApiGroup::kCpuRead),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              QueryFields(request.query, {});
              std::string body = R"({"steps":[)";
              bool first = true;
              for (const auto& r : s.attributor->jobs()) {
                if (!first) body += ',';
                first = false;
                body += attribution::job_record_json(r);
              }
              body += "]}";
              responder.send(http::Response::text(200, std::move(body), "application/json"));
            });
}

}  // namespace

void add_attribution_routes(Daemon::State& s, http::Router& router) {
  if (s.attributor) add_job_routes(s, router);
  add_route(s, router, http::Method::kGet, "/attribution",
            RouteAccess::group_of(ApiGroup::kCpuRead),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              const QueryFields query(request.query, {"processes"});
              if (!s.attributor) {
                responder.send(error_response(
                    404, "attribution is off on this daemon (started with --no-attribution)"));
                return;
              }
              const bool processes = query.optional_boolean("processes").value_or(false);
              responder.send(
                  http::Response::text(200, s.attributor->json(processes), "application/json"));
            });
}

}  // namespace zeus::zeusd

#if defined(ZEUS_WITHOUT_KUBERNETES)
namespace zeus::zeusd {
// A build without gRPC reads no pod labels; docs/attribution.md says how to
// get them (ZEUS_WITH_KUBERNETES).
void refresh_pods(Daemon::State& s) {
  if (!s.options.pod_resources_socket.empty() && s.pods_warning.empty() &&
      std::filesystem::exists(s.options.pod_resources_socket)) {
    s.pods_warning = "no Kubernetes support in this build";
    log::warn(
        "zeusd: {} exists but this build has no Kubernetes support (gRPC): workloads get "
        "no pod labels; build with -DZEUS_WITH_KUBERNETES=ON",
        s.options.pod_resources_socket);
  }
}
}  // namespace zeus::zeusd
#endif
