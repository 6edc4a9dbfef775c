// The batch-size optimizer client for training scripts (the C++ twin of the
// Python Zeus BatchSizeOptimizer): registers the job with the GPUs' maximum
// power and model, gets the batch size for this run (rank 0), measures every
// epoch with the energy monitor, reports on evaluate and stops when told.
//
//   batch_size::BatchSizeOptimizer opt(monitor, "http://bso:8000", spec);
//   const int b = opt.get_batch_size();
//   opt.on_train_begin();
//   for (...) { train_one_epoch(b); if (opt.on_evaluate(metric()).stop_train) break; }
//
// A run that ends abnormally (the optimizer is destroyed before a final
// report, e.g. during stack unwinding) marks its trial failed on the server,
// so the batch size is explored again. Transport errors are retried; the
// batch-size request carries an idempotency key, so a retry never leaves an
// orphan trial behind. Not thread-safe: one training loop drives it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zeus/http/client.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/batch_size/common/api.h"

namespace zeus::batch_size {

struct ClientOptions {
  int rank = 0;  // only rank 0 asks for a batch size
  http::ClientOptions http;
  int attempts = 5;          // per request, on transport errors
  Seconds retry_delay{0.2};  // between attempts
  std::string window_name = "BatchSizeOptimizerClient";
};

class BatchSizeOptimizer {
 public:
  // Fills max_power (GPU 0's maximum power limit in whole watts times the
  // number of monitored GPUs), number_of_gpus and gpu_model from the monitor's
  // GPUs and registers the job (POST /jobs). kInvalidArgument without GPUs,
  // kHeterogeneous for mixed models, the server's message on a refusal
  // (kAlreadyExists for a different spec under the same job_id).
  BatchSizeOptimizer(monitor::EnergyMonitor& monitor, std::string server_url, JobSpec job,
                     ClientOptions options = {});
  ~BatchSizeOptimizer();
  BatchSizeOptimizer(const BatchSizeOptimizer&) = delete;
  BatchSizeOptimizer& operator=(const BatchSizeOptimizer&) = delete;

  // The batch size for this run (asked once, then cached). Rank 0 only
  // (kFailedPrecondition otherwise).
  int get_batch_size();
  // Starts measuring the first epoch.
  void on_train_begin();
  // Ends the epoch's measurement, reports cumulative time and GPU energy with
  // `metric`, and starts the next epoch unless told to stop. When training
  // stops without converging, throws kFailedPrecondition with the server's
  // reason: relaunch the job and another batch size is chosen.
  ReportResponse on_evaluate(double metric);
  // Marks the trial failed now (also done by the destructor when needed).
  void mark_failed();

  bool training_finished() const { return finished_; }
  const JobSpec& job() const { return job_; }  // as registered (job_id filled)
  std::optional<TrialId> trial() const { return trial_; }

 private:
  http::Response send(http::Method method, const std::string& target, const std::string& body,
                      const http::Headers& headers = {});
  nlohmann::json expect_ok(const http::Response& r, const char* what);

  monitor::EnergyMonitor& monitor_;
  http::Client http_;
  JobSpec job_;
  ClientOptions options_;
  std::optional<TrialId> trial_;
  int epoch_ = 0;
  Seconds time_{0};
  Joules energy_{0};
  bool finished_ = false;
};

}  // namespace zeus::batch_size
