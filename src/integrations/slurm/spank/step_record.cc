#include "integrations/slurm/spank/step_record.h"

#include <set>

#include "integrations/slurm/spank/unix_http.h"

namespace zeus::slurm_internal {
namespace {

// Energies of a record: a number or null (missing), nothing else.
nlohmann::json energy_field(const nlohmann::json& ledger, const char* key) {
  const auto it = ledger.find(key);
  if (it == ledger.end() || !it->is_number()) return nullptr;
  return *it;
}

nlohmann::json string_array(const nlohmann::json& ledger, const char* key) {
  nlohmann::json out = nlohmann::json::array();
  const auto it = ledger.find(key);
  if (it == ledger.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v);
  }
  return out;
}

}  // namespace

std::string step_name(std::uint32_t step_id) {
  switch (step_id) {
    case 0xfffffffbU:
      return "batch";
    case 0xfffffffcU:
      return "extern";
    case 0xfffffffaU:
      return "interactive";
    case 0xfffffffdU:
      return "pending";
    default:
      return std::to_string(step_id);
  }
}

std::string start_query(const StepIdentity& id, const std::vector<long>& pids,
                        std::string_view gpus) {
  std::string list;
  for (const long pid : pids) {
    if (!list.empty()) list.push_back(',');
    list += std::to_string(pid);
  }
  return "job=" + query_escape(id.job) + "&step=" + query_escape(id.step) + "&pids=" + list +
         "&gpus=" + query_escape(gpus);
}

std::string end_query(const StepIdentity& id) {
  return "job=" + query_escape(id.job) + "&step=" + query_escape(id.step);
}

std::string gpu_list(std::string_view value) {
  bool digit_before = false;
  for (const char c : value) {
    if (c >= '0' && c <= '9') {
      digit_before = true;
    } else if (c == ',' && digit_before) {
      digit_before = false;
    } else {
      return "";
    }
  }
  return digit_before ? std::string(value) : "";
}

nlohmann::json make_record(const StepOutcome& o) {
  nlohmann::json r = {{"job", o.id.job},
                      {"step", o.id.step},
                      {"node", o.id.node},
                      {"uid", o.id.uid},
                      {"user", o.id.user}};
  if (o.id.array_job) {
    r["array_job"] = *o.id.array_job;
    r["array_task"] = o.id.array_task.value_or(0);
  }
  nlohmann::json missing = nlohmann::json::array();
  if (o.ledger && o.ledger->is_object()) {
    const auto& l = *o.ledger;
    const auto start = l.find("start");
    const auto end = l.find("end");
    r["start"] = start != l.end() && start->is_number() ? *start : nlohmann::json(o.start_s);
    r["end"] = end != l.end() && end->is_number() ? *end : nlohmann::json(o.end_s);
    for (const char* key : {"gpu_j", "cpu_j", "idle_j"}) {
      r[key] = energy_field(l, key);
      if (r[key].is_null()) missing.push_back(std::string(key) + ": not in zeusd's answer");
    }
    const auto method = l.find("method");
    r["method"] = method != l.end() && method->is_string() ? *method : nlohmann::json(nullptr);
    r["gpus"] = string_array(l, "gpus");
    for (const auto& m : string_array(l, "missing")) missing.push_back(m);
  } else {
    r["start"] = o.start_s;
    r["end"] = o.end_s;
    r["gpu_j"] = nullptr;
    r["cpu_j"] = nullptr;
    r["idle_j"] = nullptr;
    r["method"] = nullptr;
    r["gpus"] = nlohmann::json::array();
    r["error"] = o.error.empty() ? "zeusd gave no record" : o.error;
    missing.push_back("all energy: " + r["error"].get<std::string>());
  }
  for (const auto& p : o.problems) missing.push_back(p);
  r["missing"] = std::move(missing);
  return r;
}

nlohmann::json job_summary(const std::vector<nlohmann::json>& step_records) {
  double gpu = 0, cpu = 0, idle = 0;
  std::set<std::string> methods;
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json missing = nlohmann::json::array();
  std::string node;
  for (const auto& r : step_records) {
    if (!r.is_object()) continue;
    const std::string step = r.value("step", std::string("?"));
    steps.push_back(step);
    if (node.empty()) node = r.value("node", std::string());
    bool complete = true;
    for (const auto& [key, sum] :
         {std::pair<const char*, double*>{"gpu_j", &gpu}, {"cpu_j", &cpu}, {"idle_j", &idle}}) {
      const auto it = r.find(key);
      if (it != r.end() && it->is_number()) {
        *sum += it->get<double>();
      } else {
        complete = false;
      }
    }
    if (!complete) missing.push_back("step " + step + ": energy missing (see its record)");
    const auto m = r.find("method");
    if (m != r.end() && m->is_string()) methods.insert(m->get<std::string>());
  }
  std::string method;
  for (const auto& m : methods) method += (method.empty() ? "" : "+") + m;
  // Millijoule resolution: the ledger's own unit; keeps the comment short.
  const auto mj = [](double j) {
    return static_cast<double>(static_cast<long long>(j * 1000.0 + 0.5)) / 1000.0;
  };
  nlohmann::json s = {{"gpu_j", mj(gpu)}, {"cpu_j", mj(cpu)}, {"idle_j", mj(idle)},
                      {"method", method}, {"steps", steps},   {"node", node}};
  if (!missing.empty()) s["missing"] = std::move(missing);
  return s;
}

std::optional<std::string> merge_admin_comment(std::string_view existing,
                                               const nlohmann::json& summary) {
  nlohmann::json comment = nlohmann::json::object();
  bool blank = true;
  for (const char c : existing) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') blank = false;
  }
  if (!blank) {
    comment = nlohmann::json::parse(existing, nullptr, /*allow_exceptions=*/false);
    if (!comment.is_object()) return std::nullopt;
  }
  comment["zeus"] = summary;
  return comment.dump();
}

std::string record_file_name(const StepIdentity& id) { return id.job + "." + id.step + ".json"; }

}  // namespace zeus::slurm_internal
