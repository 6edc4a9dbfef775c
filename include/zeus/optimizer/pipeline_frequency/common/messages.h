// The pipeline-frequency optimizer's wire format, shared by the server
// (`zeus perseus serve`) and the per-rank client: the Python Zeus's JobInfo,
// RankInfo, FrequencySchedule and ProfilingResult as JSON, the endpoints and
// the job id. Field names and shapes are upstream's, so the Python Zeus client
// and ours talk to either server. Plain values; no shared state.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::pipeline_frequency {

// Endpoints ("{job_id}" is one path segment).
inline constexpr std::string_view kRegisterJobPath = "/register_job";
inline constexpr std::string_view kRegisterRankPath = "/register_rank/{job_id}";
inline constexpr std::string_view kSchedulePath = "/schedule/{job_id}";  // ?rank=N
inline constexpr std::string_view kResultPath = "/result/{job_id}";
// Ours (upstream has no way to announce a straggler): {"iteration_time": s | null}.
inline constexpr std::string_view kStragglerPath = "/straggler/{job_id}";
// `path` with "{job_id}" replaced by the URL-encoded id.
std::string job_path(std::string_view path, std::string_view job_id);

// The largest job a server accepts: far beyond any pipeline-parallel job, small
// enough that per-rank state stays bounded.
inline constexpr int kMaxWorldSize = 1 << 20;
// Graphics clocks a rank may list (NVML lists about 80 to 200 per memory
// clock on current GPUs).
inline constexpr std::size_t kMaxAvailableFrequencies = 1024;
inline constexpr std::size_t kMaxMetadataBytes = 256;

// What rank 0 registers. job_id is empty when sent; the server assigns it.
struct JobInfo {
  std::string job_id;
  int pp_degree = 1;
  int dp_degree = 1;
  int tp_degree = 1;
  int world_size = 1;
  std::optional<std::string> job_metadata;
};

// One rank of a job.
struct RankInfo {
  int rank = 0;
  int dp_rank = 0;
  int pp_rank = 0;
  int tp_rank = 0;
  std::vector<Megahertz> available_frequencies;  // graphics clocks, upstream: descending
};

// One instruction of a schedule: its name ("forward", "backward") and the SM
// frequency to lock before it runs (0: leave the clock as it is).
struct ScheduleEntry {
  std::string instruction;
  Megahertz frequency{0};
  friend bool operator==(const ScheduleEntry&, const ScheduleEntry&) = default;
};

// One iteration's worth of instructions of one rank, in execution order.
struct FrequencySchedule {
  int rank = 0;
  std::vector<ScheduleEntry> frequencies;
  friend bool operator==(const FrequencySchedule&, const FrequencySchedule&) = default;
};

// Measurements of one rank over the iterations run with its last schedule.
// Breakdowns map an instruction name to per-iteration lists of per-instance
// values (upstream's shape; our client leaves them empty).
struct ProfilingResult {
  int rank = 0;
  std::vector<Seconds> iter_time;
  std::vector<Joules> iter_energy;
  std::map<std::string, std::vector<std::vector<Seconds>>> time_breakdown;
  std::map<std::string, std::vector<std::vector<Joules>>> energy_breakdown;
};

// Parsers for request bodies. Like upstream (pydantic), unknown fields are
// ignored; anything missing, mistyped or out of range is a FieldError
// (kParse/kInvalidArgument) naming the field, e.g. "register_job body:
// world_size: ...". JobInfo also checks job_id is empty, every degree >= 1,
// world_size = pp * dp * tp <= kMaxWorldSize, and that job_metadata fits in a
// job id (at most kMaxMetadataBytes, no '/', '?', '#', '%' or control
// characters: the id becomes a URL path segment and a directory name).
JobInfo parse_job_info(std::string_view body);
RankInfo parse_rank_info(std::string_view body);
FrequencySchedule parse_frequency_schedule(std::string_view body);
ProfilingResult parse_profiling_result(std::string_view body);

nlohmann::json to_json(const JobInfo& info);
nlohmann::json to_json(const RankInfo& info);
nlohmann::json to_json(const FrequencySchedule& schedule);
nlohmann::json to_json(const ProfilingResult& result);

// Upstream's job id: "YYYY-MM-DD-HH-MM-SS+dp<d>+pp<p>+tp<t>+<scheduler>"
// followed by "+<metadata>" when job_metadata is set (local time, as
// upstream's datetime.now()).
std::string make_job_id(const JobInfo& info, std::string_view scheduler_name,
                        std::chrono::system_clock::time_point when);

}  // namespace zeus::pipeline_frequency
