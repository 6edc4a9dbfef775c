// StragglerAware: a scheduler over a whole frontier (plans.json) that reacts
// to stragglers, the SOSP '24 paper's extrinsic-bloat scenario. It starts at
// an initial target (e.g. min-energy). When a straggler elsewhere holds every
// data-parallel pipeline to iteration time T', it switches at the next round
// to the slowest plan that still meets T' (pipeline_frequency::select_straggler), which
// saves energy without delaying anyone. T' arrives two ways:
//  * measured: the ranks' reported iteration times (gradient synchronization
//    makes every pipeline wait for the straggler) exceed the time this
//    scheduler aims at (the straggler target, or the plan's own time) by more
//    than `tolerance`; then T' is the largest per-rank mean reported;
//  * announced: set_straggler(T') (POST /straggler/{job_id}); nullopt
//    returns to the initial target, the only way to learn of a recovery.
#pragma once

#include <memory>
#include <string>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"

namespace zeus::pipeline_frequency {

struct StragglerOptions {
  // "fastest", "min-energy" or "straggler:<T'>" (pipeline_frequency::select_target).
  std::string initial_target = "min-energy";
  // Relative excess of measured iteration time over the aimed one that counts
  // as a straggler: above the planner's quantization slop (under one unit
  // time per computation on the critical path) and ordinary jitter.
  double tolerance = 0.03;
};

// A factory of one StragglerAware scheduler per job, all from `frontier`
// (`source` names it in messages). check_job refuses a job whose world size is
// not the frontier's stage count (wrap with make_3d_parallel for DP/TP).
// kInvalidArgument for a bad target or tolerance (in (0, 10]).
std::unique_ptr<SchedulerFactory> make_straggler_aware(
    std::shared_ptr<const pipeline_frequency::StoredSolution> frontier, std::string source,
    StragglerOptions options);

}  // namespace zeus::pipeline_frequency
