// zeusd's side of the attribution ledger: it builds the node's
// NodeAttributor from the daemon's devices, polls it on a timer, refreshes
// pod labels from the kubelet, renders the ledger's Prometheus families and
// serves GET /attribution. Private to src/zeusd.
#pragma once

#include <string>
#include <vector>

#include "http/router.h"
#include "zeus/monitor/attribution/node_attributor.h"
#include "zeus/zeusd/daemon.h"

namespace zeus::zeusd {

// Builds the attributor (s.attributor) when s.options.attribution is on and
// hooks its families into s.metrics. Nothing polls until start_attribution().
void make_attribution(Daemon::State& s);
void start_attribution(Daemon::State& s);
void stop_attribution(Daemon::State& s);
void add_attribution_routes(Daemon::State& s, http::Router& router);

// The ledger's families (docs/attribution.md has the table). `device_labels`
// holds each ledger device's label text (gpu="0",uuid="…" or
// package="0",zone="…"). Appends to `out`; allocates nothing once `out` has
// the capacity.
void render_attribution(const attribution::NodeAttributor& attributor,
                        const std::vector<std::string>& device_labels, bool processes,
                        std::string& out);

// One List call to the kubelet into the attributor's pod map; a warning
// (once per kind of failure) when the socket is missing or the call fails.
// Defined in kubelet_pods.cc, or as a no-op in a build without Kubernetes.
void refresh_pods(Daemon::State& s);

}  // namespace zeus::zeusd
