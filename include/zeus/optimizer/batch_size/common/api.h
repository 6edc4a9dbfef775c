// The batch-size optimizer's wire format (zeus-inventory §4.1): the bodies of
// POST /jobs, GET /jobs/batch_size, POST /report and PATCH /trials, with the
// upstream defaults and validation, shared by the server and the client.
// Readers throw a zeus::Error naming the offending field (FieldError inside
// the project; the server answers 422).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::batch_size {

inline constexpr std::size_t kMaxJobIdLength = 400;  // upstream's varchar(400)
inline constexpr std::size_t kMaxIdempotencyKeyLength = 200;
// Candidates per job (powers of two, or multiples of 8 up to 2048, fit).
inline constexpr std::size_t kMaxBatchSizes = 256;
// Trials of one job handed out and not yet finished: recurrences running at
// once. Beyond, GET /jobs/batch_size answers 429 with Retry-After.
inline constexpr std::size_t kMaxTrialsInFlight = 64;

// JobSpecFromClient / CreatedJob: what a job is registered with.
struct JobSpec {
  std::string job_id;  // empty: the server generates "<prefix>-<8 hex digits>"
  std::string job_id_prefix;
  std::vector<int> batch_sizes;  // sorted, distinct, positive
  int default_batch_size = 0;
  double eta_knob = 0.5;
  std::optional<double> beta_knob = 2.0;  // nullopt disables early stopping
  double target_metric = 0.5;
  bool higher_is_better_metric = true;
  int max_epochs = 100;
  int num_pruning_rounds = 2;
  int window_size = 0;  // 0 = every observation
  double mab_prior_mean = 0.0;
  double mab_prior_precision = 0.0;
  int mab_num_explorations = 2;
  std::optional<std::int64_t> mab_seed;  // nullopt: seeded from the clock
  double max_power = 0.0;                // W, all GPUs of the job together
  int number_of_gpus = 0;
  std::string gpu_model;
  // zeuscpp's addition: the registered policy that chooses this job's batch
  // sizes (docs/extending.md); "" is the built-in Zeus search. Sent only when set.
  std::string policy;

  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

// Parses and validates a registration body: defaults filled, unknown fields
// rejected, batch sizes sorted. `source` names the document in messages.
JobSpec parse_job_spec(const nlohmann::json& body, std::string_view source = "request body");
nlohmann::json to_json(const JobSpec& spec);

struct TrialId {
  std::string job_id;
  int batch_size = 0;
  std::int64_t trial_number = 0;
};
TrialId parse_trial_id(const nlohmann::json& body, std::string_view source = "request body");
nlohmann::json to_json(const TrialId& id);

// One epoch report; time (s) and energy (J) are cumulative for the trial.
struct TrainingResult {
  TrialId trial;
  double time = 0.0;
  double energy = 0.0;
  double metric = 0.0;
  int current_epoch = 0;
};
TrainingResult parse_training_result(const nlohmann::json& body,
                                     std::string_view source = "request body");
nlohmann::json to_json(const TrainingResult& result);

struct ReportResponse {
  bool stop_train = false;
  bool converged = false;
  std::string message;
};
ReportResponse parse_report_response(const nlohmann::json& body);
nlohmann::json to_json(const ReportResponse& response);

// Checks a job id taken from a query string (non-empty, at most kMaxJobIdLength).
void check_job_id(std::string_view job_id, std::string_view field = "job_id");

}  // namespace zeus::batch_size
