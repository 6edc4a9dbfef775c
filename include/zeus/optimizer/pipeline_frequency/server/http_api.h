// The pipeline-frequency server's HTTP endpoints (upstream's paths and bodies,
// plus POST /straggler/{job_id}): a thin adapter from requests to the
// JobManager. A schedule request is answered through its Responder when the
// job's last rank has asked, so waiting ranks hold no thread. Errors are the
// project's JSON {"message": ...} with zeus::http_status_for's status.
#pragma once

#include "http/router.h"
#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"

namespace zeus::pipeline_frequency {

// Adds the routes; `manager` must outlive the server that dispatches them.
void add_routes(http::Router& router, JobManager& manager);

}  // namespace zeus::pipeline_frequency
