// The Alibaba group trace of the Zeus NSDI '23 evaluation (upstream's
// trace/alibaba_groups.csv.xz: group,start_time,end_time,dataset,runtime_ratio)
// and the replay of one group's concurrent recurring jobs
// (Simulator.simulate_one_alibaba_group). docs/extending.md describes the
// format and how to reproduce the paper's figure with the real file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {

// One job of a group: when it ran in the cluster, and its runtime relative to
// the mean of its dataset's jobs.
struct GroupJob {
  double start_time = 0.0;  // s
  double end_time = 0.0;    // s, > start_time
  double runtime_ratio = 1.0;
};

// One recurring-job group: jobs sorted by start time (stable).
struct JobGroup {
  std::string group;
  std::string dataset;
  std::vector<GroupJob> jobs;
};

// Bounds on what a group trace may hold.
inline constexpr double kMaxGroupTime = 1e10;  // s
inline constexpr double kMaxRuntimeRatio = 1e6;

// Parses the CSV text (header required; extra columns ignored). Groups come
// in order of first appearance. kParse naming source and line for a missing
// column, a bad number, end_time <= start_time, a ratio outside (0, 1e6], or
// one group with two datasets.
std::vector<JobGroup> parse_group_trace(std::string_view csv, const std::string& source);
// Reads PATH, decompressing it when it ends in ".xz" (liblzma). kIo/kParse naming the path.
std::vector<JobGroup> read_group_trace(const std::string& path);

// zlib's adler32 of the group id: the seed upstream's run_alibaba.py gives a group.
std::uint32_t adler32(std::string_view text);

// Replays one group on `trace` (upstream's semantics): each job starts at its
// start time; while others are in flight it runs at the best-known batch size
// (the cheapest that reached so far) with its power limit, otherwise at the
// policy's choice; a run is observed when it ends; a run that does not reach
// the target is retried at its end for the same duration. A run's energy and
// time are scaled by the job's runtime_ratio (the policy sees the unscaled
// cost). SimResult::runs holds the runs that ran, in the order they ended
// (upstream's history); `recurrences` is empty. A job retried
// options.max_tries times without reaching is kInvalidArgument naming the
// policy and the group (upstream would retry forever).
SimResult simulate_group(const WorkloadTrace& trace, const JobGroup& group,
                         batch_size::Policy& policy, const std::string& name, bool early_stopping,
                         const SimOptions& options);

}  // namespace zeus::sim
