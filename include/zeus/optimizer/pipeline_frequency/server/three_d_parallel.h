// make_3d_parallel: runs a pipeline-only scheduler on a job with data and
// tensor parallelism, as upstream's wrapper. The wrapped scheduler sees a job
// of pp_degree ranks (rank = pp_rank, the RankInfo of the rank with dp_rank 0
// and tp_rank 0 of each stage); each stage's schedule is copied to every rank
// of that stage; results are aggregated per stage before it observes them:
// iteration time and time breakdowns by maximum, energies by sum.
#pragma once

#include <memory>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"

namespace zeus::pipeline_frequency {

// The wrapper's name is inner's + "3D".
std::unique_ptr<SchedulerFactory> make_3d_parallel(std::unique_ptr<SchedulerFactory> inner);

// The per-stage aggregate of `results` (one per rank of `ranks`), indexed by
// pp_rank with rank = pp_rank. Lists of different lengths are cut to the
// shortest, as upstream's zip does.
std::vector<ProfilingResult> aggregate_per_stage(const std::vector<ProfilingResult>& results,
                                                 const std::vector<RankInfo>& ranks, int pp_degree);

}  // namespace zeus::pipeline_frequency
