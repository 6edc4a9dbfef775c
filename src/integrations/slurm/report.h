// `zeus slurm report`: the step records the SPANK plugin writes on a node
// (one JSON line per step, docs/slurm.md) read back and summed per job:
// duration, GPU-hours, GPU/CPU active energy, idle share, and carbon and cost
// at constant rates. A step whose energy is missing keeps the job's total
// marked incomplete; it is never counted as 0.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace zeus::slurm {

struct StepRecord {
  std::string job;
  std::string step;
  std::string node;
  std::string user;
  std::uint32_t uid = 0;
  std::optional<std::uint32_t> array_job;
  std::optional<std::uint32_t> array_task;
  double start = 0;  // Unix seconds
  double end = 0;
  std::optional<double> gpu_j;  // nullopt: not measured (see missing)
  std::optional<double> cpu_j;
  std::optional<double> idle_j;
  std::string method;
  std::vector<std::string> gpus;  // UUIDs
  std::vector<std::string> missing;
  std::string error;
};

// Parses one record line; kParse naming `source` and the field otherwise.
StepRecord parse_step_record(const std::string& line, const std::string& source);

// Every record file ("*.json") of `dir`, sorted by job and step. Files that
// do not parse are skipped and named in `skipped` ("file: why"). A missing
// directory is kNotFound.
std::vector<StepRecord> read_step_records(const std::string& dir,
                                          std::vector<std::string>* skipped = nullptr);

struct ReportFilter {
  std::optional<std::string> job;   // job id, or an array's id (all its elements)
  std::optional<std::string> user;  // name or uid
  std::optional<double> since;      // jobs that ended at or after (Unix seconds)
};

struct Rates {
  std::optional<double> carbon_g_per_kwh;
  std::optional<double> price_per_kwh;
};

struct JobReport {
  std::string job;
  std::string user;
  std::uint32_t uid = 0;
  std::optional<std::uint32_t> array_job;
  std::optional<std::uint32_t> array_task;
  std::vector<std::string> steps;
  std::vector<std::string> nodes;
  double start = 0;
  double end = 0;
  double gpu_hours = 0;  // per GPU, the union of its steps' intervals
  // Sums over the steps that have the value; nullopt when none has it.
  std::optional<double> gpu_j;
  std::optional<double> cpu_j;
  std::optional<double> idle_j;
  std::string method;                // the steps' methods, '+'-joined
  bool complete = true;              // every step has all three energies
  std::vector<std::string> missing;  // "step 0: ..." per missing item
  double duration_s() const { return end - start; }
  // gpu + cpu + idle over the steps that have them.
  double total_j() const { return gpu_j.value_or(0) + cpu_j.value_or(0) + idle_j.value_or(0); }
};

// The jobs of `records` that pass `filter`, ordered by start time, job id.
std::vector<JobReport> summarize_jobs(const std::vector<StepRecord>& records,
                                      const ReportFilter& filter);

// A fixed-width table, one line per job, a total line, and footnotes for
// incomplete jobs.
std::string render_report_table(const std::vector<JobReport>& jobs, const Rates& rates);
// {"jobs":[...], "total":{...}}: energies in J (null where not measured),
// carbon in gCO2eq and cost in the price's currency where a rate is given.
nlohmann::json report_json(const std::vector<JobReport>& jobs, const Rates& rates);

}  // namespace zeus::slurm
