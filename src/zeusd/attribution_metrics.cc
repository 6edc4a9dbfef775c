// The attribution ledger's Prometheus families (docs/attribution.md):
//
//   zeus_gpu_energy_split_joules_total{gpu,uuid,share}          share: idle, attributed,
//   unattributed zeus_cpu_energy_split_joules_total{package,zone,share}      per device they add up
//   to its counter
//   zeus_workload_gpu_energy_joules_total{cgroup,namespace,pod,container,hpc_job,gpu,uuid}
//   zeus_workload_cpu_energy_joules_total{cgroup,namespace,pod,container,hpc_job,package,zone}
//   zeus_process_gpu_energy_joules_total{pid,comm,cgroup,gpu,uuid}  (opt-in)
//   zeus_attribution_idle_power_watts{<device>,source}
//   zeus_attribution_method_info{<device>,method,estimate} 1
//   zeus_attribution_polls_total, zeus_attribution_read_errors_total
//
// Energy before the ledger started watching is counted as unattributed, so
// the three shares add up to the counter itself; workloads dropped after the
// retention window are one series with cgroup="(retired)".
#include <fmt/format.h>

#include <iterator>

#include "zeus/zeusd/metrics.h"
#include "zeusd/attribution.h"

namespace zeus::zeusd {
namespace {

using attribution::DeviceInfo;
using attribution::Ledger;

void head(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).push_back(' ');
  out.append(help).push_back('\n');
  out.append("# TYPE ").append(name).push_back(' ');
  out.append(type).push_back('\n');
}

void value(std::string& out, double v) {
  out.push_back(' ');
  fmt::format_to(std::back_inserter(out), "{}", v);
  out.push_back('\n');
}

double joules(Millijoules mj) { return static_cast<double>(mj.value()) / 1000.0; }

bool is_gpu(const DeviceInfo& info) { return info.kind == DeviceInfo::Kind::kGpu; }

void workload_labels(std::string& out, const attribution::WorkloadLabels& w) {
  out.append("cgroup=\"");
  append_label_value(out, w.cgroup);
  out.append("\",namespace=\"");
  append_label_value(out, w.namespace_);
  out.append("\",pod=\"");
  append_label_value(out, w.pod);
  out.append("\",container=\"");
  append_label_value(out, w.container);
  out.append("\",hpc_job=\"");
  append_label_value(out, w.hpc_job);
  out.append("\",");
}

struct Families {
  const Ledger& ledger;
  std::span<const DeviceInfo> infos;
  const std::vector<std::string>& labels;

  void split(std::string& out, bool gpu) const {
    const std::string_view name =
        gpu ? "zeus_gpu_energy_split_joules_total" : "zeus_cpu_energy_split_joules_total";
    head(out, name, "counter",
         gpu ? "GPU energy by share: idle, attributed to workloads, unattributed; the three add up "
               "to zeus_gpu_energy_joules_total."
             : "CPU package and DRAM energy by share: idle, attributed to workloads, "
               "unattributed; the three add up to the zone's energy counter.");
    for (std::size_t d = 0; d < infos.size(); ++d) {
      if (is_gpu(infos[d]) != gpu) continue;
      const auto& t = ledger.device(static_cast<attribution::DeviceIndex>(d));
      const std::pair<std::string_view, Millijoules> shares[] = {
          {"idle", t.idle},
          {"attributed", t.attributed},
          {"unattributed", t.unattributed + t.before_start}};
      for (const auto& [share, mj] : shares) {
        out.append(name).push_back('{');
        out.append(labels[d]).append(",share=\"").append(share).append("\"}");
        value(out, joules(mj));
      }
    }
  }

  void workloads(std::string& out, bool gpu) const {
    const std::string_view name =
        gpu ? "zeus_workload_gpu_energy_joules_total" : "zeus_workload_cpu_energy_joules_total";
    head(out, name, "counter",
         gpu ? "GPU energy attributed to a workload (a cgroup: container, pod, job), idle excluded."
             : "CPU package and DRAM energy attributed to a workload by CPU time, idle excluded.");
    ledger.for_each_workload([&](const Ledger::WorkloadView& w) {
      for (std::size_t d = 0; d < infos.size(); ++d) {
        if (is_gpu(infos[d]) != gpu || w.energy[d].total.value() == 0) continue;
        out.append(name).push_back('{');
        workload_labels(out, w.labels);
        out.append(labels[d]).push_back('}');
        value(out, joules(w.energy[d].total));
      }
    });
    for (std::size_t d = 0; d < infos.size(); ++d) {
      if (is_gpu(infos[d]) != gpu) continue;
      const auto& t = ledger.device(static_cast<attribution::DeviceIndex>(d));
      if (t.retired.value() == 0) continue;
      out.append(name).append(
          R"x({cgroup="(retired)",namespace="",pod="",container="",hpc_job="",)x");
      out.append(labels[d]).push_back('}');
      value(out, joules(t.retired));
    }
  }

  void processes(std::string& out) const {
    const std::string_view name = "zeus_process_gpu_energy_joules_total";
    head(out, name, "counter", "GPU energy attributed to a process, idle excluded.");
    ledger.for_each_process([&](const Ledger::ProcessView& p) {
      for (std::size_t d = 0; d < infos.size(); ++d) {
        if (!is_gpu(infos[d]) || p.energy[d].total.value() == 0) continue;
        out.append(name).append("{pid=\"");
        fmt::format_to(std::back_inserter(out), "{}", p.pid);
        out.append("\",comm=\"");
        append_label_value(out, p.comm);
        out.append("\",cgroup=\"");
        append_label_value(out, ledger.workload_labels(p.workload).cgroup);
        out.append("\",").append(labels[d]).push_back('}');
        value(out, joules(p.energy[d].total));
      }
    });
  }

  void device_info(std::string& out) const {
    head(out, "zeus_attribution_idle_power_watts", "gauge",
         "Idle power the ledger keeps apart, and where it comes from (configured, learned, none).");
    for (std::size_t d = 0; d < infos.size(); ++d) {
      out.append("zeus_attribution_idle_power_watts{").append(labels[d]).append(",source=\"");
      out.append(attribution::idle_source_name(infos[d].idle_source)).append("\"}");
      value(out, infos[d].idle_power.value());
    }
    head(
        out, "zeus_attribution_method_info", "gauge",
        "How the device's last interval was split; estimate=\"true\" for the equal split and MIG.");
    for (std::size_t d = 0; d < infos.size(); ++d) {
      const auto method = ledger.device(static_cast<attribution::DeviceIndex>(d)).method;
      out.append("zeus_attribution_method_info{").append(labels[d]).append(",method=\"");
      out.append(attribution::method_name(method)).append("\",estimate=\"");
      out.append(attribution::method_is_estimate(method) ? "true" : "false").append("\"} 1\n");
    }
  }
};

}  // namespace

void render_attribution(const attribution::NodeAttributor& attributor,
                        const std::vector<std::string>& device_labels, bool processes,
                        std::string& out) {
  attributor.visit([&](const Ledger& ledger, std::span<const DeviceInfo> infos) {
    const Families f{ledger, infos, device_labels};
    const bool any_gpu = std::any_of(infos.begin(), infos.end(), is_gpu);
    const bool any_cpu = !std::all_of(infos.begin(), infos.end(), is_gpu);
    if (any_gpu) {
      f.split(out, true);
      f.workloads(out, true);
      if (processes) f.processes(out);
    }
    if (any_cpu) {
      f.split(out, false);
      f.workloads(out, false);
    }
    if (!infos.empty()) f.device_info(out);
  });
  head(out, "zeus_attribution_polls_total", "counter", "Polls of the attribution ledger.");
  out.append("zeus_attribution_polls_total");
  value(out, static_cast<double>(attributor.polls()));
  head(out, "zeus_attribution_read_errors_total", "counter",
       "Device reads of the attribution ledger that failed (the interval carries into the next).");
  out.append("zeus_attribution_read_errors_total");
  value(out, static_cast<double>(attributor.read_errors()));
}

}  // namespace zeus::zeusd
