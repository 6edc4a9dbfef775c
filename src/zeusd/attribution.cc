#include "zeusd/attribution.h"

#include <fmt/format.h>

#include <filesystem>

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
  std::vector<std::shared_ptr<Gpu>> gpus(s.devices.gpus.begin(), s.devices.gpus.end());
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
  s.metrics->cpu_energy = [&s](std::size_t cpu, CpuEnergy& energy) {
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
  const auto polls_per_refresh = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(10.0 / s.options.attribution_interval_s));
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

void add_attribution_routes(Daemon::State& s, http::Router& router) {
  add_route(s, router, http::Method::kGet, "/attribution",
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
