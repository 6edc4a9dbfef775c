// What the plugin writes for a step: the record line (records directory) and
// the job summary under "zeus" in AdminComment. Pure functions over JSON, so
// the unit tests check the exact shapes without Slurm; docs/slurm.md
// documents the fields.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::slurm_internal {

struct StepIdentity {
  std::string job;   // decimal job id
  std::string step;  // "0", "1", ... or "batch", "extern", "interactive"
  std::uint32_t uid = 0;
  std::string user;  // empty when the uid has no name
  std::string node;
  std::optional<std::uint32_t> array_job;  // for an element of a job array
  std::optional<std::uint32_t> array_task;
};

// Slurm's step id as zeusd and the records name it (the special ids of
// slurm.h: batch script, extern container, interactive, pending).
std::string step_name(std::uint32_t step_id);

// The query of POST /attribution/jobs/start (without the path).
std::string start_query(const StepIdentity& id, const std::vector<long>& pids,
                        std::string_view gpus);
// The query of POST /attribution/jobs/end.
std::string end_query(const StepIdentity& id);

// Keeps a GPU list from SLURM_STEP_GPUS / SLURM_JOB_GPUS only when it is
// comma-separated indices ("" otherwise).
std::string gpu_list(std::string_view value);

struct StepOutcome {
  StepIdentity id;
  double start_s = 0;  // the plugin's own clock: used when zeusd gives none
  double end_s = 0;
  // What went wrong on the way (a task not registered, ...): added to the
  // record's "missing" even when zeusd answered.
  std::vector<std::string> problems;
  // zeusd's answer to /attribution/jobs/end, when it gave one (200).
  std::optional<nlohmann::json> ledger;
  // Why there is no ledger answer.
  std::string error;
};

// The record: zeusd's fields when it answered, else null energies with
// "error" and "missing" saying why; never a 0 for a measurement not made.
nlohmann::json make_record(const StepOutcome& outcome);

// The job's totals over its step records on this node, for AdminComment:
// {"gpu_j","cpu_j","idle_j","method","steps":[...],"node", "missing"?}.
// Steps without energy are listed in "missing" and left out of the sums.
nlohmann::json job_summary(const std::vector<nlohmann::json>& step_records);

// The new AdminComment: `existing` with its "zeus" key replaced. An empty
// comment becomes {"zeus": ...}; std::nullopt when `existing` is text that is
// not a JSON object (someone else's format: left alone).
std::optional<std::string> merge_admin_comment(std::string_view existing,
                                               const nlohmann::json& summary);

// The record file's name in the records directory: "<job>.<step>.json".
std::string record_file_name(const StepIdentity& id);

}  // namespace zeus::slurm_internal
