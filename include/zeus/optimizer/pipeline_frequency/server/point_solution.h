// PointSolution: the scheduler that serves one fixed plan, as upstream's. The
// plan holds one schedule per rank; for data- and tensor-parallel jobs wrap it
// with make_3d_parallel (PointSolution3D), which sees one rank per stage.
#pragma once

#include <memory>
#include <string>

#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"

namespace zeus::pipeline_frequency {

// `plan[r]` is rank r's schedule; `source` names the plan in messages
// ("freqs_pipeline_00012.py", "plans.json point 403 (min-energy)").
// check_job refuses a job whose world size is not plan.size().
std::unique_ptr<SchedulerFactory> make_point_solution(StagePlan plan, std::string source);

}  // namespace zeus::pipeline_frequency
