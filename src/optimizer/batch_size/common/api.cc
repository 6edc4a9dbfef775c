#include "zeus/optimizer/batch_size/common/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <set>
#include <string>

#include "util/json.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr double kMaxQuantity = 1e18;
constexpr std::size_t kMaxLoggedUnknownFields =
    64;  // time (s), energy (J), power (W): far beyond real runs

[[noreturn]] void invalid(const JsonObject& o, std::string_view key, const std::string& what) {
  const std::string f = o.field_path(key);
  throw FieldError(ErrorCode::kInvalidArgument, f, fmt::format("{}: {}: {}", o.source(), f, what));
}

std::string id_string(const JsonObject& o, std::string_view key) {
  std::string s = o.string(key, kMaxJobIdLength);
  if (s.empty()) invalid(o, key, "must not be empty");
  return s;
}

// Liberal in what we accept: a field a newer client (or upstream's own
// tests: "error", "max_power" in reports) adds is ignored, as pydantic does,
// and named once in the log so an operator notices. Known fields are still
// checked strictly. At most kMaxLoggedUnknownFields names are remembered.
void ignore_unknown_keys(const json& body, std::string_view source,
                         std::initializer_list<std::string_view> known) {
  static std::mutex mutex;
  static std::set<std::string> logged;
  if (!body.is_object()) return;  // the parser says what is wrong with it
  for (const auto& item : body.items()) {
    const std::string& name = item.key();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::lock_guard lock(mutex);
    const std::string key = std::string(source) + "\n" + name;
    if (logged.size() >= kMaxLoggedUnknownFields || !logged.insert(key).second) continue;
    log::warn("bso: ignoring unknown field {} in the {} (a newer client?)", printable(name, 64),
              source);
  }
}

}  // namespace

void check_job_id(std::string_view job_id, std::string_view field) {
  if (job_id.empty() || job_id.size() > kMaxJobIdLength) {
    throw FieldError(ErrorCode::kInvalidArgument, std::string(field),
                     fmt::format("{} must be 1 to {} characters long", field, kMaxJobIdLength));
  }
}

JobSpec parse_job_spec(const json& body, std::string_view source) {
  const JsonObject o(body, std::string(source));
  ignore_unknown_keys(
      body, source,
      {"job_id", "job_id_prefix", "batch_sizes", "default_batch_size", "eta_knob", "beta_knob",
       "target_metric", "higher_is_better_metric", "max_epochs", "num_pruning_rounds",
       "window_size", "mab_prior_mean", "mab_prior_precision", "mab_num_explorations", "mab_seed",
       "max_power", "number_of_gpus", "gpu_model", "policy"});
  JobSpec s;
  s.job_id_prefix = id_string(o, "job_id_prefix");
  if (o.has("job_id")) {
    s.job_id = id_string(o, "job_id");
    if (!s.job_id.starts_with(s.job_id_prefix)) {
      invalid(
          o, "job_id",
          fmt::format("'{}' does not start with job_id_prefix '{}'", s.job_id, s.job_id_prefix));
    }
  } else if (s.job_id_prefix.size() + 9 > kMaxJobIdLength) {
    invalid(o, "job_id_prefix", "is too long to generate a job id from");
  }
  for (const auto b : o.integers("batch_sizes", 1, kMaxInt)) {
    s.batch_sizes.push_back(static_cast<int>(b));
  }
  if (s.batch_sizes.empty()) invalid(o, "batch_sizes", "must not be empty");
  if (s.batch_sizes.size() > kMaxBatchSizes) {
    // Each batch size becomes an arm whose state is stored and rewritten with
    // every decision: a list this long is no search space anyone trains over.
    invalid(o, "batch_sizes",
            fmt::format("has {} entries; at most {} (choose the candidates to explore)",
                        s.batch_sizes.size(), kMaxBatchSizes));
  }
  std::sort(s.batch_sizes.begin(), s.batch_sizes.end());
  if (std::adjacent_find(s.batch_sizes.begin(), s.batch_sizes.end()) != s.batch_sizes.end()) {
    invalid(o, "batch_sizes", "must not repeat a batch size");
  }
  s.default_batch_size = static_cast<int>(o.integer("default_batch_size", 1, kMaxInt));
  if (!std::binary_search(s.batch_sizes.begin(), s.batch_sizes.end(), s.default_batch_size)) {
    invalid(o, "default_batch_size",
            fmt::format("{} is not one of batch_sizes", s.default_batch_size));
  }
  s.eta_knob = o.optional_number("eta_knob", 0.0, 1.0).value_or(0.5);
  if (o.value().contains("beta_knob") && o.value()["beta_knob"].is_null()) {
    s.beta_knob.reset();
  } else if (o.has("beta_knob")) {
    s.beta_knob = o.number("beta_knob", 0.0, kMaxQuantity);
    if (!(*s.beta_knob > 0.0)) {
      invalid(o, "beta_knob", "must be positive; send null to disable early stopping");
    }
  }
  s.target_metric = o.optional_number("target_metric").value_or(0.5);
  s.higher_is_better_metric = o.optional_boolean("higher_is_better_metric").value_or(true);
  s.max_epochs = static_cast<int>(o.optional_integer("max_epochs", 1, 1000000).value_or(100));
  s.num_pruning_rounds =
      static_cast<int>(o.optional_integer("num_pruning_rounds", 0, 1000).value_or(2));
  s.window_size = static_cast<int>(o.optional_integer("window_size", 0, 1000000).value_or(0));
  s.mab_prior_mean = o.optional_number("mab_prior_mean").value_or(0.0);
  s.mab_prior_precision = o.optional_number("mab_prior_precision", 0.0).value_or(0.0);
  s.mab_num_explorations =
      static_cast<int>(o.optional_integer("mab_num_explorations", 0, 1000000).value_or(2));
  s.mab_seed = o.optional_integer("mab_seed", 0);
  s.max_power = o.number("max_power", 0.0, kMaxQuantity);
  if (!(s.max_power > 0.0)) invalid(o, "max_power", "must be positive (watts)");
  s.number_of_gpus = static_cast<int>(o.integer("number_of_gpus", 1, 1000000));
  s.gpu_model = o.string("gpu_model", 256);
  if (s.gpu_model.empty()) invalid(o, "gpu_model", "must not be empty");
  if (o.has("policy")) {
    s.policy = o.string("policy", 64);
    if (s.policy == "zeus") s.policy.clear();  // the built-in search by its registry name
  }
  return s;
}

json to_json(const JobSpec& s) {
  json out = {{"job_id", s.job_id.empty() ? json(nullptr) : json(s.job_id)},
              {"job_id_prefix", s.job_id_prefix},
              {"batch_sizes", s.batch_sizes},
              {"default_batch_size", s.default_batch_size},
              {"eta_knob", s.eta_knob},
              {"beta_knob", s.beta_knob ? json(*s.beta_knob) : json(nullptr)},
              {"target_metric", s.target_metric},
              {"higher_is_better_metric", s.higher_is_better_metric},
              {"max_epochs", s.max_epochs},
              {"num_pruning_rounds", s.num_pruning_rounds},
              {"window_size", s.window_size},
              {"mab_prior_mean", s.mab_prior_mean},
              {"mab_prior_precision", s.mab_prior_precision},
              {"mab_num_explorations", s.mab_num_explorations},
              {"mab_seed", s.mab_seed ? json(*s.mab_seed) : json(nullptr)},
              {"max_power", s.max_power},
              {"number_of_gpus", s.number_of_gpus},
              {"gpu_model", s.gpu_model}};
  if (!s.policy.empty()) out["policy"] = s.policy;
  return out;
}

namespace {

TrialId read_trial_id(const JsonObject& o) {
  TrialId t;
  t.job_id = id_string(o, "job_id");
  t.batch_size = static_cast<int>(o.integer("batch_size", 1, kMaxInt));
  t.trial_number = o.integer("trial_number", 1, std::int64_t{1} << 53);
  return t;
}

}  // namespace

TrialId parse_trial_id(const json& body, std::string_view source) {
  const JsonObject o(body, std::string(source));
  ignore_unknown_keys(body, source, {"job_id", "batch_size", "trial_number"});
  return read_trial_id(o);
}

json to_json(const TrialId& t) {
  return {{"job_id", t.job_id}, {"batch_size", t.batch_size}, {"trial_number", t.trial_number}};
}

TrainingResult parse_training_result(const json& body, std::string_view source) {
  const JsonObject o(body, std::string(source));
  ignore_unknown_keys(
      body, source,
      {"job_id", "batch_size", "trial_number", "time", "energy", "metric", "current_epoch"});
  TrainingResult r;
  r.trial = read_trial_id(o);
  r.time = o.number("time", 0.0, kMaxQuantity);
  r.energy = o.number("energy", 0.0, kMaxQuantity);
  r.metric = o.number("metric");
  r.current_epoch = static_cast<int>(o.integer("current_epoch", 0, 1000000));
  return r;
}

json to_json(const TrainingResult& r) {
  json j = to_json(r.trial);
  j["time"] = r.time;
  j["energy"] = r.energy;
  j["metric"] = r.metric;
  j["current_epoch"] = r.current_epoch;
  return j;
}

ReportResponse parse_report_response(const json& body) {
  const JsonObject o(body, "report response");
  return {o.boolean("stop_train"), o.boolean("converged"),
          o.optional_string("message").value_or("")};
}

json to_json(const ReportResponse& r) {
  return {{"stop_train", r.stop_train}, {"converged", r.converged}, {"message", r.message}};
}

}  // namespace zeus::batch_size
