// Request bodies of the batch-size optimizer service (zeus/bso/api/api.h): a job
// spec, an epoch report or a trial id. Accepted bodies must satisfy the
// documented invariants and survive a round trip unchanged.
#include <algorithm>
#include <cmath>

#include "fuzz_support.h"
#include "util/json.h"
#include "zeus/optimizer/batch_size/common/api.h"
#include "zeus/util/error.h"

namespace {

using namespace zeus::batch_size;

bool try_spec(const nlohmann::json& doc) {
  try {
    const JobSpec s = parse_job_spec(doc);
    ZEUS_FUZZ_CHECK(!s.batch_sizes.empty());
    ZEUS_FUZZ_CHECK(std::is_sorted(s.batch_sizes.begin(), s.batch_sizes.end()));
    ZEUS_FUZZ_CHECK(s.batch_sizes.front() > 0);
    ZEUS_FUZZ_CHECK(
        std::binary_search(s.batch_sizes.begin(), s.batch_sizes.end(), s.default_batch_size));
    ZEUS_FUZZ_CHECK(s.eta_knob >= 0.0 && s.eta_knob <= 1.0);
    ZEUS_FUZZ_CHECK(!s.beta_knob || (std::isfinite(*s.beta_knob) && *s.beta_knob > 0.0));
    ZEUS_FUZZ_CHECK(s.max_epochs > 0 && s.num_pruning_rounds >= 0 && s.window_size >= 0);
    ZEUS_FUZZ_CHECK(std::isfinite(s.max_power) && s.max_power > 0.0);
    ZEUS_FUZZ_CHECK(s.job_id.size() <= kMaxJobIdLength);
    ZEUS_FUZZ_CHECK(s.job_id.empty() || s.job_id.starts_with(s.job_id_prefix));
    ZEUS_FUZZ_CHECK(parse_job_spec(to_json(s)) == s);
    return true;
  } catch (const zeus::Error&) {
    return false;
  }
}

bool try_report(const nlohmann::json& doc) {
  try {
    const TrainingResult r = parse_training_result(doc);
    ZEUS_FUZZ_CHECK(r.time >= 0.0 && std::isfinite(r.time));
    ZEUS_FUZZ_CHECK(r.energy >= 0.0 && std::isfinite(r.energy));
    ZEUS_FUZZ_CHECK(std::isfinite(r.metric) && r.current_epoch >= 0);
    ZEUS_FUZZ_CHECK(r.trial.trial_number >= 1 && r.trial.batch_size >= 1);
    ZEUS_FUZZ_CHECK(to_json(parse_training_result(to_json(r))) == to_json(r));
    return true;
  } catch (const zeus::Error&) {
    return false;
  }
}

bool try_trial(const nlohmann::json& doc) {
  try {
    const TrialId t = parse_trial_id(doc);
    ZEUS_FUZZ_CHECK(!t.job_id.empty() && t.job_id.size() <= kMaxJobIdLength);
    return true;
  } catch (const zeus::Error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto doc = zeus::parse_json(zeus::fuzz::as_text(data, size), "request body");
    // Each endpoint reads one kind of body, and unknown fields are ignored,
    // so a body goes to the parser its fields name (a report is not also
    // tried as a bare trial id, which it would pass).
    const auto has = [&](const char* key) { return doc.is_object() && doc.contains(key); };
    bool ok = false;
    if (has("job_id_prefix") || has("batch_sizes")) {
      ok = try_spec(doc);
    } else if (has("time") || has("energy") || has("metric") || has("current_epoch")) {
      ok = try_report(doc);
    } else {
      ok = try_trial(doc);
    }
    if (ok) zeus::fuzz::accepted();
  } catch (const zeus::Error&) {
  }
  return 0;
}
