#include "zeus/optimizer/batch_size/server/service.h"

#include <fmt/format.h>

#include <chrono>
#include <limits>
#include <random>

#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/optimizer/power_limit/selection/zeus_cost.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

// A recurrence takes minutes at least: no point asking again sooner.
constexpr Seconds kRetryAfterTrialsInFlight{60.0};
// Jobs leave the table only when deleted: a coarse hint.
constexpr Seconds kRetryAfterFullJobs{3600.0};

namespace bs = zeus::batch_size;
using nlohmann::json;

std::uint64_t clock_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ static_cast<std::uint64_t>(rd()) ^
         static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

bs::BatchSizeSearchOptions search_options(const JobSpec& s) {
  bs::BatchSizeSearchOptions o;
  o.batch_sizes = s.batch_sizes;
  o.default_batch_size = s.default_batch_size;
  o.num_pruning_rounds = s.num_pruning_rounds;
  o.mab.prior_mean = s.mab_prior_mean;
  o.mab.prior_precision = s.mab_prior_precision;
  o.mab.num_explorations = s.mab_num_explorations;
  o.mab.window_size = s.window_size;
  o.seed = s.mab_seed ? static_cast<std::uint64_t>(*s.mab_seed) : clock_seed();
  o.fail_on_round_without_survivor = true;
  return o;
}

// The job's search: the built-in one, or the registered policy its spec names.
JobRecord new_job(const JobSpec& spec) {
  bs::BatchSizeSearchOptions o = search_options(spec);
  if (spec.policy.empty()) return JobRecord{spec, JobSearch(bs::BatchSizeSearch(o))};
  return JobRecord{spec, JobSearch(PluggedSearch(spec, o.seed))};  // unknown policy: 400
}

std::string generated_job_id(const std::string& prefix) {
  static thread_local std::mt19937_64 gen(clock_seed());
  return fmt::format("{}-{:08x}", prefix, static_cast<std::uint32_t>(gen()));
}

JobRecord& existing_job(JobTransaction& txn, const std::string& job_id) {
  JobRecord* job = txn.job();
  if (job == nullptr) {
    // 400 like upstream's ZeusBSOValueError.
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("unknown job '{}'; register it with POST /jobs first", job_id));
  }
  return *job;
}

}  // namespace

Service::Service(Store& store, ServiceLimits limits) : store_(store), limits_(limits) {}

void Service::register_job(JobSpec spec, OutcomeCallback done) {
  const bool generated = spec.job_id.empty();
  if (generated) spec.job_id = generated_job_id(spec.job_id_prefix);
  const std::string id = spec.job_id;
  store_.run(
      id,
      [spec = std::move(spec), generated, max_jobs = limits_.max_jobs](JobTransaction& txn) {
        if (const JobRecord* existing = txn.job()) {
          if (generated) {
            throw_error(
                ErrorCode::kAlreadyExists,
                fmt::format("the generated job id {} is taken; register again", spec.job_id));
          }
          if (!(existing->spec == spec)) {
            throw_error(ErrorCode::kAlreadyExists,
                        fmt::format("job {} is already registered with a different spec; use a "
                                    "new job_id for a different configuration",
                                    spec.job_id));
          }
          txn.answer_after_commit();
          return Outcome{200, to_json(existing->spec), nullptr};
        }
        if (const auto jobs = txn.job_count(); jobs >= max_jobs) {
          throw RetryLater(fmt::format("the service holds {} jobs, its limit (--max-jobs); "
                                       "delete finished ones (DELETE /jobs?job_id=...) first",
                                       jobs),
                           kRetryAfterFullJobs, /*whole_server=*/true);
        }
        txn.create_job(new_job(spec));
        log::info("bso: registered job {} (batch sizes {}..{}, default {})", spec.job_id,
                  spec.batch_sizes.front(), spec.batch_sizes.back(), spec.default_batch_size);
        return Outcome{201, to_json(spec), nullptr};
      },
      std::move(done));
}

void Service::next_batch_size(const std::string& job_id, std::optional<std::string> key,
                              OutcomeCallback done) {
  store_.run(
      job_id,
      [job_id, key = std::move(key)](JobTransaction& txn) {
        JobRecord& job = existing_job(txn, job_id);
        if (key) {
          if (const auto t = txn.trial_by_key(*key)) {
            txn.answer_after_commit();
            return Outcome{200, to_json(TrialId{job_id, t->batch_size, t->number}), nullptr};
          }
        }
        if (job.search.num_in_flight() >= kMaxTrialsInFlight) {
          // A client looping on this endpoint would otherwise grow the job's
          // state and the trials table without bound.
          throw RetryLater(fmt::format("job {} has {} trials handed out and not finished, the "
                                       "limit; report or end some (PATCH /trials) first",
                                       job_id, job.search.num_in_flight()),
                           kRetryAfterTrialsInFlight, /*whole_server=*/false);
        }
        bs::Trial t;
        try {
          t = job.search.next_trial();
        } catch (const Error& e) {
          if (e.code() != ErrorCode::kFailedPrecondition) throw;
          throw_error(ErrorCode::kFailedPrecondition,
                      fmt::format("job {}: {}. Register the job again under a new job_id with a "
                                  "reachable target_metric or a larger max_epochs "
                                  "(DELETE /jobs?job_id={} removes this one).",
                                  job_id, e.what(), job_id));
        }
        TrialRecord r;
        r.number = t.id;
        r.batch_size = t.batch_size;
        r.kind = t.kind;
        r.idempotency_key = key.value_or("");
        r.start_time = wall_time_seconds();
        txn.put_trial(r);
        txn.job_changed();
        log::info("bso: job {} trial {}: batch size {} ({})", job_id, t.id, t.batch_size,
                  bs::trial_kind_name(t.kind));
        return Outcome{200, to_json(TrialId{job_id, t.batch_size, t.id}), nullptr};
      },
      std::move(done));
}

void Service::report(const TrainingResult& result, OutcomeCallback done) {
  store_.run(
      result.trial.job_id,
      [result](JobTransaction& txn) {
        const auto& id = result.trial;
        JobRecord& job = existing_job(txn, id.job_id);
        auto trial = txn.trial(id.trial_number);
        if (!trial || trial->batch_size != id.batch_size) {
          throw_error(ErrorCode::kInvalidArgument,
                      fmt::format("job {} has no trial {} with batch size {}; report the "
                                  "trial_number and batch_size that GET /jobs/batch_size gave",
                                  id.job_id, id.trial_number, id.batch_size));
        }
        if (trial->status == TrialStatus::kFailed) {
          throw_error(ErrorCode::kInvalidArgument,
                      fmt::format("trial {} of job {} was marked failed (PATCH /trials) and "
                                  "takes no more reports; get a new batch size with GET "
                                  "/jobs/batch_size",
                                  id.trial_number, id.job_id));
        }
        if (trial->status == TrialStatus::kSucceeded) {
          txn.answer_after_commit();
          return Outcome{
              200,
              to_json(ReportResponse{
                  true, trial->converged.value_or(false),
                  fmt::format("Result for this trial({}) is already reported.", trial->number)}),
              nullptr};
        }
        const JobSpec& s = job.spec;
        const Joules cost(power_limit::zeus_cost(Joules(result.energy), Seconds(result.time),
                                                 s.eta_knob, Watts(s.max_power)));
        bs::StopRule rule;
        rule.beta = s.beta_knob.value_or(std::numeric_limits<double>::infinity());
        rule.max_epochs = s.max_epochs;
        rule.target_metric = s.target_metric;
        rule.higher_is_better = s.higher_is_better_metric;
        const Joules min_cost =
            job.search.min_cost().value_or(Joules(std::numeric_limits<double>::infinity()));
        const auto verdict =
            bs::judge_epoch(rule, min_cost, cost, result.metric, result.current_epoch);
        if (!verdict.stop()) {
          return Outcome{
              200, to_json(ReportResponse{false, false, "Stop condition not met, keep training"}),
              nullptr};
        }
        std::string message;
        switch (verdict.end) {
          case bs::TrialEnd::kConverged:
            message = "Train succeeded";
            break;
          case bs::TrialEnd::kOverCostBound:
            message = fmt::format(
                "Batch size {} exceeded the cost upper bound: current cost {:g} J > beta_knob "
                "({:g}) * min_cost ({:g} J)",
                id.batch_size, cost.value(), rule.beta, min_cost.value());
            break;
          default:
            message = fmt::format("Train failed to converge within max_epochs ({})", s.max_epochs);
            break;
        }
        trial->status = TrialStatus::kSucceeded;
        trial->time = result.time;
        trial->energy = result.energy;
        trial->converged = verdict.converged();
        trial->end_time = wall_time_seconds();
        if (job.search.is_in_flight(trial->number)) {
          job.search.report(trial->number, cost, verdict.converged());
          txn.job_changed();
        }
        txn.put_trial(*trial);
        log::info("bso: job {} trial {} (batch size {}) ended after {} epochs: {} (cost {:g} J)",
                  id.job_id, trial->number, id.batch_size, result.current_epoch,
                  verdict.converged() ? "converged" : "not converged", cost.value());
        return Outcome{200, to_json(ReportResponse{true, verdict.converged(), message}), nullptr};
      },
      std::move(done));
}

void Service::end_trial(const TrialId& id, OutcomeCallback done) {
  store_.run(
      id.job_id,
      [id](JobTransaction& txn) {
        auto trial = txn.trial(id.trial_number);
        if (!trial || trial->batch_size != id.batch_size) {
          throw_error(ErrorCode::kNotFound,
                      fmt::format("could not find trial {} with batch size {} of job {}",
                                  id.trial_number, id.batch_size, id.job_id));
        }
        if (trial->status == TrialStatus::kDispatched) {
          trial->status = TrialStatus::kFailed;
          trial->end_time = wall_time_seconds();
          txn.put_trial(*trial);
          JobRecord* job = txn.job();
          if (job != nullptr && job->search.is_in_flight(trial->number)) {
            job->search.cancel(trial->number);
            txn.job_changed();
          }
          log::info("bso: job {} trial {} (batch size {}) failed", id.job_id, id.trial_number,
                    id.batch_size);
        } else {
          txn.answer_after_commit();
        }
        return Outcome{200, json(nullptr), nullptr};
      },
      std::move(done));
}

void Service::delete_job(const std::string& job_id, OutcomeCallback done) {
  store_.run(
      job_id,
      [job_id](JobTransaction& txn) {
        if (txn.job() == nullptr) {
          throw_error(ErrorCode::kNotFound, fmt::format("no job {} to delete", job_id));
        }
        txn.delete_job();
        log::info("bso: deleted job {}", job_id);
        return Outcome{200, json(nullptr), nullptr};
      },
      std::move(done));
}

}  // namespace zeus::batch_size
