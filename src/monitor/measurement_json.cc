#include "monitor/measurement_json.h"

#include <string>

namespace zeus::monitor {
namespace {

nlohmann::json by_index(const std::map<int, Joules>& energies) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [i, e] : energies) j[std::to_string(i)] = e.value();
  return j;
}

nlohmann::json by_index_text(const std::map<int, std::string>& texts) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [i, t] : texts) j[std::to_string(i)] = t;
  return j;
}

nlohmann::json joules_or_null(const std::optional<Joules>& e) {
  return e ? nlohmann::json(e->value()) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const Measurement& m) {
  nlohmann::json sources = nlohmann::json::object();
  for (const auto& [i, s] : m.gpu_energy_source) sources[std::to_string(i)] = energy_source_name(s);
  nlohmann::json soc = nullptr;
  if (m.soc_energy) {
    soc = {{"cpu_j", joules_or_null(m.soc_energy->cpu)},
           {"gpu_j", joules_or_null(m.soc_energy->gpu)},
           {"total_j", joules_or_null(m.soc_energy->total)}};
  }
  return {{"time_s", m.time.count()},
          {"gpu_energy_j", by_index(m.gpu_energy)},
          {"gpu_energy_source", sources},
          {"cpu_energy_j", by_index(m.cpu_energy)},
          {"dram_energy_j", by_index(m.dram_energy)},
          {"total_gpu_energy_j", m.total_gpu_energy().value()},
          {"total_energy_j", m.total_energy().value()},
          {"gpus_below_update_period", m.gpus_below_update_period},
          {"failed_gpus", by_index_text(m.failed_gpus)},
          {"failed_cpus", by_index_text(m.failed_cpus)},
          {"soc_energy", soc}};
}

}  // namespace zeus::monitor
