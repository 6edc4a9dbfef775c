#include "monitor/carbon/hourly_json.h"

#include <fmt/format.h>

#include <cctype>
#include <fstream>

#include "util/csv.h"
#include "util/iso8601.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::carbon {
namespace {

using nlohmann::json;

json device_map(const std::optional<std::map<int, double>>& m) {
  if (!m) return nullptr;
  json j = json::object();
  for (const auto& [i, v] : *m) j[std::to_string(i)] = v;
  return j;
}

std::string cell(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : std::string();
}

}  // namespace

json to_json(const RateResult& r) {
  json j;
  j["provider"] = r.provider;
  j["rate_unit"] = r.rate_unit;
  j["unit"] = r.unit;
  j["gpu"] = device_map(r.gpu);
  j["cpu"] = device_map(r.cpu);
  j["dram"] = device_map(r.dram);
  const auto total = r.total();
  j["total"] = total ? json(*total) : json(nullptr);
  j["error"] = r.error.empty() ? json(nullptr) : json(r.error);
  return j;
}

json hours_to_json(const HourlyMeasurement& m) {
  json out = json::array();
  for (std::size_t h = 0; h < m.hours.size(); ++h) {
    json rates = json::array();
    for (const auto& r : m.rates) {
      rates.push_back(h < r.hour_rates.size() && r.hour_rates[h] ? json(*r.hour_rates[h])
                                                                 : json(nullptr));
    }
    out.push_back({{"hour", format_iso8601(m.hours[h].hour)},
                   {"time_s", m.hours[h].time.count()},
                   {"energy_j", m.hours[h].total_energy().value()},
                   {"rates", rates}});
  }
  return out;
}

std::string result_column(const std::string& unit) {
  if (unit == "gCO2eq") return "carbon_gco2eq";
  if (unit == "$") return "cost_usd";
  std::string out;
  for (char c : unit) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  }
  return out;
}

void PricedLog::append(double start_unix, const std::string& window, const HourlyMeasurement& m) {
  std::vector<std::string> header{"start_time", "window_name", "elapsed_time"};
  std::vector<std::string> row{fmt::format("{:.6f}", start_unix), csv_escape(window),
                               fmt::format("{:.6f}", m.energy.time.count())};
  for (const auto& [i, e] : m.energy.gpu_energy) {
    header.push_back(fmt::format("gpu{}_energy", i));
    row.push_back(fmt::format("{}", e.value()));
  }
  for (const auto& [i, e] : m.energy.cpu_energy) {
    header.push_back(fmt::format("cpu{}_energy", i));
    row.push_back(fmt::format("{}", e.value()));
  }
  for (const auto& [i, e] : m.energy.dram_energy) {
    header.push_back(fmt::format("dram{}_energy", i));
    row.push_back(fmt::format("{}", e.value()));
  }
  for (const auto& r : m.rates) {
    const std::string stem = result_column(r.unit);
    const auto add = [&](const char* kind, const std::map<int, Joules>& devices,
                         const std::optional<std::map<int, double>>& values) {
      for (const auto& [i, e] : devices) {
        (void)e;
        header.push_back(fmt::format("{}{}_{}", kind, i, stem));
        row.push_back(values ? cell(values->at(i)) : std::string());
      }
    };
    add("gpu", m.energy.gpu_energy, r.gpu);
    add("cpu", m.energy.cpu_energy, r.cpu);
    add("dram", m.energy.dram_energy, r.dram);
    header.push_back("total_" + stem);
    row.push_back(cell(r.total()));
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + v[k];
    return s;
  };
  const std::string header_line = join(header);
  std::string existing;
  try {
    existing = read_file(path_);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kIo && e.code() != ErrorCode::kNotFound) throw;
  }
  const std::string first_line = existing.substr(0, existing.find('\n'));
  if (!existing.empty() && first_line != header_line) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("log file {} has other columns ({}) than this measurement ({}); "
                            "log to a new file",
                            path_, first_line, header_line));
  }
  std::ofstream out(path_, std::ios::app);
  if (existing.empty()) out << header_line << '\n';
  out << join(row) << '\n';
  out.flush();
  if (!out) throw_error(ErrorCode::kIo, fmt::format("cannot write the log file {}", path_));
}

}  // namespace zeus::carbon
