// The node ledger as JSON: zeusd's GET /attribution and `zeus top --json`.
// docs/attribution.md documents the schema.
#include <nlohmann/json.hpp>

#include "zeus/monitor/attribution/node_attributor.h"

namespace zeus::attribution {
namespace {

double joules(Millijoules mj) { return static_cast<double>(mj.value()) / 1000.0; }

const char* kind_name(DeviceInfo::Kind kind) {
  switch (kind) {
    case DeviceInfo::Kind::kGpu:
      return "gpu";
    case DeviceInfo::Kind::kCpuPackage:
      return "cpu_package";
    case DeviceInfo::Kind::kCpuDram:
      return "cpu_dram";
  }
  return "gpu";
}

nlohmann::json device_json(const Ledger& ledger, DeviceIndex d, const DeviceInfo& info) {
  const DeviceTotals& t = ledger.device(d);
  nlohmann::json j = {{"kind", kind_name(info.kind)},
                      {"index", info.index},
                      {"measured_j", joules(t.measured)},
                      {"before_start_j", joules(t.before_start)},
                      {"idle_j", joules(t.idle)},
                      {"attributed_j", joules(t.attributed)},
                      {"unattributed_j", joules(t.unattributed)},
                      {"retired_j", joules(t.retired)},
                      {"method", method_name(t.method)},
                      {"estimate", method_is_estimate(t.method)},
                      {"idle_source", idle_source_name(info.idle_source)},
                      {"idle_power_w", info.idle_power.value()},
                      {"power_w", info.last_power.value()},
                      {"intervals", t.intervals},
                      {"counter_resets", t.counter_resets}};
  if (info.kind == DeviceInfo::Kind::kGpu) {
    j["uuid"] = info.uuid;
  } else {
    j["zone"] = info.zone;
  }
  return j;
}

// A consumer's energy per device, only where it has any.
nlohmann::json energy_json(const Ledger& ledger, std::span<const Ledger::ConsumerEnergy> energy,
                           double interval_s) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t d = 0; d < energy.size(); ++d) {
    if (energy[d].total.value() == 0) continue;
    const Millijoules last = ledger.last_interval(energy[d], static_cast<DeviceIndex>(d));
    out.push_back({{"device", d},
                   {"energy_j", joules(energy[d].total)},
                   {"power_w", interval_s > 0 ? joules(last) / interval_s : 0.0}});
  }
  return out;
}

}  // namespace

std::string NodeAttributor::json(bool processes) const {
  std::lock_guard lock(mutex_);
  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t d = 0; d < infos_.size(); ++d) {
    devices.push_back(device_json(ledger_, static_cast<DeviceIndex>(d), infos_[d]));
  }
  nlohmann::json workloads = nlohmann::json::array();
  ledger_.for_each_workload([&](const Ledger::WorkloadView& w) {
    auto energy = energy_json(ledger_, w.energy, last_interval_s_);
    if (energy.empty()) return;
    workloads.push_back({{"cgroup", w.labels.cgroup},
                         {"namespace", w.labels.namespace_},
                         {"pod", w.labels.pod},
                         {"container", w.labels.container},
                         {"hpc_job", w.labels.hpc_job},
                         {"energy", std::move(energy)}});
  });
  nlohmann::json body = {{"polls", polls_},
                         {"interval_s", last_interval_s_},
                         {"read_errors", read_errors_},
                         {"cgroup_mode", cgroup_mode_name(reader_.mode())},
                         {"devices", std::move(devices)},
                         {"workloads", std::move(workloads)}};
  if (processes) {
    nlohmann::json list = nlohmann::json::array();
    ledger_.for_each_process([&](const Ledger::ProcessView& p) {
      auto energy = energy_json(ledger_, p.energy, last_interval_s_);
      if (energy.empty()) return;
      list.push_back({{"pid", p.pid},
                      {"comm", p.comm},
                      {"cgroup", ledger_.workload_labels(p.workload).cgroup},
                      {"energy", std::move(energy)}});
    });
    body["processes"] = std::move(list);
  }
  // Process names and cgroup paths are not ours: invalid UTF-8 is replaced,
  // never a reason to fail the answer.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace zeus::attribution
