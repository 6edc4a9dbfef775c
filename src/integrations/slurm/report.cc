#include "integrations/slurm/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "util/iso8601.h"
#include "util/json.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::slurm {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;

std::vector<std::string> strings(const JsonObject& o, std::string_view key) {
  std::vector<std::string> out;
  if (!o.has(key)) return out;
  const auto& v = o.required(key);
  if (!v.is_array())
    throw FieldError(ErrorCode::kParse, o.field_path(key), o.field_path(key) + " is not an array");
  for (const auto& e : v) {
    if (!e.is_string()) {
      throw FieldError(ErrorCode::kParse, o.field_path(key),
                       o.field_path(key) + " holds a value that is not a string");
    }
    out.push_back(printable(e.get<std::string>(), 300));
  }
  return out;
}

// Numbers sort as numbers, names ("batch") after them.
bool id_less(const std::string& a, const std::string& b) {
  const auto digits = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const bool da = digits(a);
  const bool db = digits(b);
  if (da && db && a.size() != b.size()) return a.size() < b.size();
  if (da != db) return da;
  return a < b;
}

// Total length of the union of [start, end) intervals.
double union_length(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : spans) {
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

void add(std::optional<double>& sum, const std::optional<double>& value) {
  if (value) sum = sum.value_or(0) + *value;
}

std::string joules_text(const std::optional<double>& j, bool complete) {
  if (!j) return "-";
  return fmt::format("{:.1f}{}", *j, complete ? "" : "*");
}

std::string time_text(double unix_s) { return format_iso8601(static_cast<std::int64_t>(unix_s)); }

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void add_rates(nlohmann::json& j, double total_j, const Rates& rates) {
  if (rates.carbon_g_per_kwh) j["carbon_g"] = total_j / kJoulesPerKwh * *rates.carbon_g_per_kwh;
  if (rates.price_per_kwh) j["cost"] = total_j / kJoulesPerKwh * *rates.price_per_kwh;
}

}  // namespace

StepRecord parse_step_record(const std::string& line, const std::string& source) {
  const nlohmann::json j = parse_json(line, source);
  const JsonObject o(j, source);
  StepRecord r;
  r.job = o.string("job", 64);
  r.step = o.string("step", 64);
  r.node = o.optional_string("node", 256).value_or("");
  r.user = o.optional_string("user", 256).value_or("");
  r.uid = static_cast<std::uint32_t>(o.optional_integer("uid", 0, UINT32_MAX).value_or(0));
  if (const auto a = o.optional_integer("array_job", 0, UINT32_MAX)) {
    r.array_job = static_cast<std::uint32_t>(*a);
    r.array_task =
        static_cast<std::uint32_t>(o.optional_integer("array_task", 0, UINT32_MAX).value_or(0));
  }
  r.start = o.number("start", 0, 1e11);
  r.end = o.number("end", r.start, 1e11);
  r.gpu_j = o.optional_number("gpu_j", 0);
  r.cpu_j = o.optional_number("cpu_j", 0);
  r.idle_j = o.optional_number("idle_j", 0);
  r.method = o.optional_string("method", 256).value_or("");
  r.gpus = strings(o, "gpus");
  r.missing = strings(o, "missing");
  r.error = printable(o.optional_string("error", 4096).value_or(""), 300);
  return r;
}

std::vector<StepRecord> read_step_records(const std::string& dir,
                                          std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw_error(ErrorCode::kNotFound,
                "no records directory " + dir +
                    " (the SPANK plugin's records= option; pass --records DIR)");
  }
  std::vector<StepRecord> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(".") || !name.ends_with(".json")) continue;
    try {
      std::string text = read_file(entry.path().string(), 1 << 20);
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      out.push_back(parse_step_record(text, name));
    } catch (const Error& e) {
      if (skipped != nullptr) skipped->push_back(name + ": " + e.what());
    }
  }
  if (ec) throw_error(ErrorCode::kIo, "cannot list " + dir + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const StepRecord& a, const StepRecord& b) {
    if (a.job != b.job) return id_less(a.job, b.job);
    return id_less(a.step, b.step);
  });
  return out;
}

std::vector<JobReport> summarize_jobs(const std::vector<StepRecord>& records,
                                      const ReportFilter& filter) {
  std::map<std::string, std::vector<const StepRecord*>> by_job;
  for (const auto& r : records) by_job[r.job].push_back(&r);
  std::vector<JobReport> jobs;
  for (const auto& [id, steps] : by_job) {
    JobReport job;
    job.job = id;
    job.start = steps.front()->start;
    job.end = steps.front()->end;
    std::set<std::string> methods, nodes;
    std::map<std::string, std::vector<std::pair<double, double>>> gpu_spans;
    for (const StepRecord* s : steps) {
      job.user = s->user;
      job.uid = s->uid;
      job.array_job = s->array_job;
      job.array_task = s->array_task;
      job.steps.push_back(s->step);
      nodes.insert(s->node);
      job.start = std::min(job.start, s->start);
      job.end = std::max(job.end, s->end);
      add(job.gpu_j, s->gpu_j);
      add(job.cpu_j, s->cpu_j);
      add(job.idle_j, s->idle_j);
      if (!s->method.empty()) methods.insert(s->method);
      for (const auto& g : s->gpus) gpu_spans[s->node + "/" + g].push_back({s->start, s->end});
      if (!s->gpu_j || !s->cpu_j || !s->idle_j) job.complete = false;
      for (const auto& m : s->missing) job.missing.push_back("step " + s->step + ": " + m);
    }
    for (const auto& [gpu, spans] : gpu_spans) job.gpu_hours += union_length(spans) / 3600.0;
    for (const auto& m : methods) job.method += (job.method.empty() ? "" : "+") + m;
    job.nodes.assign(nodes.begin(), nodes.end());
    if (filter.job && *filter.job != job.job &&
        !(job.array_job && *filter.job == std::to_string(*job.array_job))) {
      continue;
    }
    if (filter.user && *filter.user != job.user && *filter.user != std::to_string(job.uid)) {
      continue;
    }
    if (filter.since && job.end < *filter.since) continue;
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const JobReport& a, const JobReport& b) {
    if (a.start != b.start) return a.start < b.start;
    return id_less(a.job, b.job);
  });
  return jobs;
}

std::string render_report_table(const std::vector<JobReport>& jobs, const Rates& rates) {
  std::string out = fmt::format("{:<12} {:<10} {:<20} {:>10} {:>9} {:>12} {:>12} {:>12}", "JOB",
                                "USER", "START", "DURATION", "GPU-H", "GPU_J", "CPU_J", "IDLE_J");
  if (rates.carbon_g_per_kwh) out += fmt::format(" {:>10}", "CO2_G");
  if (rates.price_per_kwh) out += fmt::format(" {:>9}", "COST");
  out += "  METHOD\n";
  std::optional<double> gpu, cpu, idle;
  double gpu_hours = 0, total = 0;
  bool complete = true;
  for (const auto& j : jobs) {
    std::string name = j.job;
    if (j.array_job) name = fmt::format("{}_{}", *j.array_job, *j.array_task);
    out += fmt::format(
        "{:<12} {:<10} {:<20} {:>9.1f}s {:>9.3f} {:>12} {:>12} {:>12}", printable(name, 12),
        printable(j.user.empty() ? std::to_string(j.uid) : j.user, 10), time_text(j.start),
        j.duration_s(), j.gpu_hours, joules_text(j.gpu_j, j.complete),
        joules_text(j.cpu_j, j.complete), joules_text(j.idle_j, j.complete));
    if (rates.carbon_g_per_kwh)
      out += fmt::format(" {:>10.2f}", j.total_j() / kJoulesPerKwh * *rates.carbon_g_per_kwh);
    if (rates.price_per_kwh)
      out += fmt::format(" {:>9.4f}", j.total_j() / kJoulesPerKwh * *rates.price_per_kwh);
    out += "  " + printable(j.method.empty() ? "-" : j.method, 40) + "\n";
    add(gpu, j.gpu_j);
    add(cpu, j.cpu_j);
    add(idle, j.idle_j);
    gpu_hours += j.gpu_hours;
    total += j.total_j();
    complete = complete && j.complete;
  }
  out += fmt::format("{:<12} {:<10} {:<20} {:>10} {:>9.3f} {:>12} {:>12} {:>12}", "TOTAL",
                     fmt::format("{} jobs", jobs.size()), "", "", gpu_hours,
                     joules_text(gpu, complete), joules_text(cpu, complete),
                     joules_text(idle, complete));
  if (rates.carbon_g_per_kwh)
    out += fmt::format(" {:>10.2f}", total / kJoulesPerKwh * *rates.carbon_g_per_kwh);
  if (rates.price_per_kwh)
    out += fmt::format(" {:>9.4f}", total / kJoulesPerKwh * *rates.price_per_kwh);
  out += "\n";
  for (const auto& j : jobs) {
    if (j.complete && j.missing.empty()) continue;
    out += fmt::format("* job {}: {}\n", j.job,
                       j.missing.empty() ? "incomplete" : printable(j.missing.front(), 200));
    for (std::size_t i = 1; i < j.missing.size(); ++i) {
      out += fmt::format("  job {}: {}\n", j.job, printable(j.missing[i], 200));
    }
  }
  return out;
}

nlohmann::json report_json(const std::vector<JobReport>& jobs, const Rates& rates) {
  nlohmann::json list = nlohmann::json::array();
  std::optional<double> gpu, cpu, idle;
  double gpu_hours = 0, total_j = 0;
  bool complete = true;
  for (const auto& j : jobs) {
    nlohmann::json o = {{"job", j.job},
                        {"user", j.user},
                        {"uid", j.uid},
                        {"steps", j.steps},
                        {"nodes", j.nodes},
                        {"start", j.start},
                        {"end", j.end},
                        {"duration_s", j.duration_s()},
                        {"gpu_hours", j.gpu_hours},
                        {"gpu_j", optional_json(j.gpu_j)},
                        {"cpu_j", optional_json(j.cpu_j)},
                        {"idle_j", optional_json(j.idle_j)},
                        {"method", j.method},
                        {"complete", j.complete},
                        {"missing", j.missing}};
    if (j.array_job) {
      o["array_job"] = *j.array_job;
      o["array_task"] = j.array_task.value_or(0);
    }
    add_rates(o, j.total_j(), rates);
    list.push_back(std::move(o));
    add(gpu, j.gpu_j);
    add(cpu, j.cpu_j);
    add(idle, j.idle_j);
    gpu_hours += j.gpu_hours;
    total_j += j.total_j();
    complete = complete && j.complete;
  }
  nlohmann::json total = {{"jobs", jobs.size()},           {"gpu_hours", gpu_hours},
                          {"gpu_j", optional_json(gpu)},   {"cpu_j", optional_json(cpu)},
                          {"idle_j", optional_json(idle)}, {"complete", complete}};
  add_rates(total, total_j, rates);
  return {{"jobs", std::move(list)}, {"total", std::move(total)}};
}

}  // namespace zeus::slurm
