#include "monitor/attribution/top_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::attribution {
namespace {

struct Row {
  std::string who;
  double power_w = 0;
  double energy_j = 0;
};

std::string energy_text(double j) {
  if (j >= 1e6) return fmt::format("{:.2f} MJ", j / 1e6);
  if (j >= 1e3) return fmt::format("{:.2f} kJ", j / 1e3);
  return fmt::format("{:.1f} J", j);
}

std::string device_title(const nlohmann::json& d) {
  if (d.at("kind") == "gpu") {
    return fmt::format("GPU {} {}", d.at("index").get<unsigned>(),
                       printable(d.value("uuid", ""), 48));
  }
  return fmt::format("CPU {} {}", d.at("index").get<unsigned>(),
                     printable(d.value("zone", ""), 32));
}

std::string workload_name(const nlohmann::json& w) {
  const std::string pod = w.value("pod", "");
  if (!pod.empty()) {
    std::string name = w.value("namespace", "") + "/" + pod;
    if (!w.value("container", "").empty()) name += "/" + w.value("container", "");
    return printable(name, 60);
  }
  if (!w.value("hpc_job", "").empty()) return "job " + printable(w.value("hpc_job", ""), 20);
  const std::string cgroup = w.value("cgroup", "");
  return cgroup.empty() ? std::string("(cgroup unknown)") : printable(cgroup, 60);
}

// Consumers of device `d`: processes when the JSON has them (GPUs), else workloads.
std::vector<Row> rows_of(const nlohmann::json& body, std::size_t d, bool gpu, bool processes) {
  std::vector<Row> rows;
  const bool by_process = gpu && processes && body.contains("processes");
  for (const auto& c : body.at(by_process ? "processes" : "workloads")) {
    for (const auto& e : c.at("energy")) {
      if (e.at("device").get<std::size_t>() != d) continue;
      Row row;
      row.who = by_process ? fmt::format("pid {} {}", c.at("pid").get<unsigned>(),
                                         printable(c.value("comm", ""), 20))
                           : workload_name(c);
      row.power_w = e.at("power_w").get<double>();
      row.energy_j = e.at("energy_j").get<double>();
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.power_w != b.power_w ? a.power_w > b.power_w : a.energy_j > b.energy_j;
  });
  return rows;
}

}  // namespace

std::string render_top(std::string_view ledger_json, const TopOptions& options) {
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(ledger_json);
    body.at("devices");
    body.at("workloads");
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::kParse, fmt::format("not the attribution ledger's JSON: {}", e.what()));
  }
  std::string out;
  try {
    fmt::format_to(std::back_inserter(out), "{:<44} {:>10} {:>12}\n", "WHO", "POWER", "ENERGY");
    const auto& devices = body.at("devices");
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const auto& dev = devices[d];
      const bool gpu = dev.at("kind") == "gpu";
      const double power = dev.at("power_w").get<double>();
      const double idle = std::min(power, dev.at("idle_power_w").get<double>());
      fmt::format_to(std::back_inserter(out), "{:<44} {:>8.1f} W {:>12}   split: {}{}\n",
                     device_title(dev), power, energy_text(dev.at("measured_j").get<double>()),
                     dev.at("method").get<std::string>(),
                     dev.at("estimate").get<bool>() ? " (estimate)" : "");
      const auto rows = rows_of(body, d, gpu, options.processes);
      double shown = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        shown += rows[i].power_w;
        if (i >= options.rows_per_device) continue;
        fmt::format_to(std::back_inserter(out), "  {:<42} {:>8.1f} W {:>12}\n", rows[i].who,
                       rows[i].power_w, energy_text(rows[i].energy_j));
      }
      if (rows.size() > options.rows_per_device) {
        fmt::format_to(std::back_inserter(out), "  ({} more)\n",
                       rows.size() - options.rows_per_device);
      }
      fmt::format_to(std::back_inserter(out), "  {:<42} {:>8.1f} W {:>12}\n",
                     fmt::format("idle ({})", dev.at("idle_source").get<std::string>()), idle,
                     energy_text(dev.at("idle_j").get<double>()));
      fmt::format_to(std::back_inserter(out), "  {:<42} {:>8.1f} W {:>12}\n", "unattributed",
                     std::max(0.0, power - idle - shown),
                     energy_text(dev.at("unattributed_j").get<double>()));
    }
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::kParse, fmt::format("not the attribution ledger's JSON: {}", e.what()));
  }
  return out;
}

}  // namespace zeus::attribution
