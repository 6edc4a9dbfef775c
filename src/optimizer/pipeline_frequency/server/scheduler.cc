#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"

#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

void FrequencyScheduler::set_straggler(std::optional<Seconds> /*iteration_time*/) {
  throw_error(ErrorCode::kFailedPrecondition,
              "this server serves a fixed plan and cannot react to a straggler: run "
              "'zeus perseus serve --scheduler StragglerAware' with a frontier (plans.json)");
}

}  // namespace zeus::pipeline_frequency
