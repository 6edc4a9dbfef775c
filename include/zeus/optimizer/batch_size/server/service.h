// The batch-size optimizer service (zeus-inventory §4.1 and §4.3): job
// registration, batch-size decisions, epoch reports with early stopping,
// failed trials, deletion. Its decisions come from batch_size::BatchSizeSearch,
// the same code the trace simulator runs; its state lives in a Store. The
// HTTP adapter (http_api.h) only parses bodies and calls these.
//
// Every call completes asynchronously: `done` gets the Outcome of the store's
// unit of work (store.h) once its change is committed, on a store thread or
// the caller's. Thread-safe; a store serializes the work on each job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zeus/optimizer/batch_size/common/api.h"
#include "zeus/optimizer/batch_size/server/store.h"

namespace zeus::batch_size {

struct ServiceLimits {
  // Jobs registered at once; a registration beyond is 503 with Retry-After
  // (delete finished jobs, DELETE /jobs, or raise the limit).
  std::int64_t max_jobs = 10000;
};

class Service {
 public:
  explicit Service(Store& store, ServiceLimits limits = {});

  // 201 new, 200 already registered with an identical spec, 409 (kAlreadyExists)
  // for a different one. A missing job_id is generated from the prefix.
  void register_job(JobSpec spec, OutcomeCallback done);
  // The next trial {job_id, batch_size, trial_number}. With an idempotency key,
  // a retried call returns the trial it created the first time.
  void next_batch_size(const std::string& job_id, std::optional<std::string> idempotency_key,
                       OutcomeCallback done);
  // {stop_train, converged, message}; a finished trial is recorded and learned from.
  void report(const TrainingResult& result, OutcomeCallback done);
  // Marks a still-dispatched trial failed (its client died); 404 if unknown.
  void end_trial(const TrialId& trial, OutcomeCallback done);
  void delete_job(const std::string& job_id, OutcomeCallback done);

 private:
  Store& store_;
  const ServiceLimits limits_;
};

}  // namespace zeus::batch_size
