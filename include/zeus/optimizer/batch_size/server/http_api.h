// The batch-size optimizer's REST API (zeus-inventory §4.1) on the project's
// HTTP layer: parses requests, calls batch_size::Service, writes the answers.
//
//   POST   /jobs                JobSpec        -> 201 new / 200 identical / 409 different
//   GET    /jobs/batch_size     ?job_id=       -> {job_id, batch_size, trial_number}
//                               optional Idempotency-Key header (or ?idempotency_key=)
//   POST   /report              TrainingResult -> {stop_train, converged, message}
//   PATCH  /trials              TrialId        -> marks a dispatched trial failed
//   DELETE /jobs                ?job_id=       -> 200 or 404
//
// Bodies are JSON with or without a Content-Type. Bad bodies and parameters
// are 422 with {"message", "detail": [{"loc", "msg", "type"}]}; other errors
// {"message"} with zeus::http_status_for().
#pragma once

#include "http/router.h"
#include "zeus/optimizer/batch_size/server/service.h"

namespace zeus::batch_size {

// Adds the routes to `router`; `service` must outlive the server.
void add_routes(http::Router& router, Service& service);

}  // namespace zeus::batch_size
