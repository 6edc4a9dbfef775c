#include "zeus/optimizer/batch_size/client/client.h"

#include <fmt/format.h>

#include <random>
#include <thread>

#include "util/json.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

std::string random_key() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

// The error a refused request becomes, by the server's status.
ErrorCode code_for_status(int status) {
  switch (status) {
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kAlreadyExists;
    case 400:
    case 422:
      return ErrorCode::kInvalidArgument;
    default:
      return ErrorCode::kIo;
  }
}

}  // namespace

BatchSizeOptimizer::BatchSizeOptimizer(monitor::EnergyMonitor& monitor, std::string server_url,
                                       JobSpec job, ClientOptions options)
    : monitor_(monitor),
      http_(server_url, options.http),
      job_(std::move(job)),
      options_(std::move(options)) {
  const auto& indices = monitor_.gpu_indices();
  if (indices.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "the batch-size optimizer needs the monitor to measure at least one GPU");
  }
  const auto& gpu0 = monitor_.gpu(indices.front());
  const std::string model = gpu0->name();
  for (int i : indices) {
    if (monitor_.gpu(i)->name() != model) {
      throw_error(ErrorCode::kHeterogeneous,
                  fmt::format("the batch-size optimizer needs identical GPUs; GPU {} is {}, GPU "
                              "{} is {}",
                              indices.front(), model, i, monitor_.gpu(i)->name()));
    }
  }
  const auto max_mw = gpu0->power_limit_constraints().max.value();
  job_.max_power = static_cast<double>((max_mw / 1000) * static_cast<std::int64_t>(indices.size()));
  job_.number_of_gpus = static_cast<int>(indices.size());
  job_.gpu_model = model;
  const auto r = send(http::Method::kPost, "/jobs", to_json(job_).dump());
  job_ = parse_job_spec(expect_ok(r, "registering the job"), "the server's job");
  log::info("bso client: job {} registered", job_.job_id);
}

BatchSizeOptimizer::~BatchSizeOptimizer() {
  if (trial_ && !finished_) {
    try {
      mark_failed();
    } catch (const std::exception& e) {
      log::warn("bso client: could not mark trial {} failed: {}", trial_->trial_number, e.what());
    }
  }
}

http::Response BatchSizeOptimizer::send(http::Method method, const std::string& target,
                                        const std::string& body, const http::Headers& headers) {
  for (int attempt = 1;; ++attempt) {
    try {
      return http_.request(method, target, body, headers);
    } catch (const Error& e) {
      if (attempt >= options_.attempts ||
          (e.code() != ErrorCode::kIo && e.code() != ErrorCode::kTimeout)) {
        throw;
      }
      log::warn("bso client: {} (attempt {} of {}); retrying", e.what(), attempt,
                options_.attempts);
      std::this_thread::sleep_for(options_.retry_delay);
    }
  }
}

nlohmann::json BatchSizeOptimizer::expect_ok(const http::Response& r, const char* what) {
  if (r.status < 200 || r.status >= 300) {
    std::string message = r.body;
    try {
      const auto j = nlohmann::json::parse(r.body);
      if (j.is_object() && j.contains("message")) message = j["message"].get<std::string>();
    } catch (const std::exception&) {
    }
    throw_error(code_for_status(r.status),
                fmt::format("{}: the batch-size optimizer server answered {}: {}", what, r.status,
                            message));
  }
  return parse_json(r.body, "the server's answer");
}

int BatchSizeOptimizer::get_batch_size() {
  if (options_.rank != 0) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("only rank 0 asks for a batch size (this is rank {})", options_.rank));
  }
  if (trial_) return trial_->batch_size;
  http::Headers h;
  h.set("Idempotency-Key", random_key());  // the same key on every retry
  const auto r =
      send(http::Method::kGet, "/jobs/batch_size?job_id=" + http::url_encode(job_.job_id), "", h);
  const TrialId t = parse_trial_id(expect_ok(r, "asking for a batch size"), "the server's trial");
  if (!std::binary_search(job_.batch_sizes.begin(), job_.batch_sizes.end(), t.batch_size)) {
    throw_error(ErrorCode::kIo,
                fmt::format("the server chose batch size {}, which is not in the job's list",
                            t.batch_size));
  }
  trial_ = t;
  epoch_ = 0;
  time_ = Seconds(0);
  energy_ = Joules(0);
  finished_ = false;
  log::info("bso client: trial {} of job {} runs batch size {}", t.trial_number, t.job_id,
            t.batch_size);
  return t.batch_size;
}

void BatchSizeOptimizer::on_train_begin() {
  finished_ = false;
  monitor_.begin_window(options_.window_name);
}

ReportResponse BatchSizeOptimizer::on_evaluate(double metric) {
  if (!trial_) {
    throw_error(ErrorCode::kFailedPrecondition, "call get_batch_size() before on_evaluate()");
  }
  if (finished_) return {true, false, "training already finished"};
  ++epoch_;
  const monitor::Measurement m = monitor_.end_window(options_.window_name);
  time_ += m.time;
  energy_ += m.total_gpu_energy();
  TrainingResult result{*trial_, time_.count(), energy_.value(), metric, epoch_};
  const auto r = send(http::Method::kPost, "/report", to_json(result).dump());
  const ReportResponse answer = parse_report_response(expect_ok(r, "reporting an epoch"));
  if (!answer.stop_train) {
    monitor_.begin_window(options_.window_name);
    return answer;
  }
  finished_ = true;
  if (!answer.converged) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("training with batch size {} stopped without converging: {} "
                            "Relaunch the job; this batch size will not be chosen again.",
                            trial_->batch_size, answer.message));
  }
  return answer;
}

void BatchSizeOptimizer::mark_failed() {
  if (!trial_ || finished_) return;
  finished_ = true;
  if (monitor_.window_running(options_.window_name)) {
    monitor_.end_window(options_.window_name, false, true);
  }
  const auto r = send(http::Method::kPatch, "/trials", to_json(*trial_).dump());
  expect_ok(r, "marking the trial failed");
}

}  // namespace zeus::batch_size
