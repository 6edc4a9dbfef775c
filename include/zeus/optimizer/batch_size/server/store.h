// Where the batch-size optimizer service keeps its jobs and trials: an
// embedded SQLite file (one server) or PostgreSQL (several replicas). A store
// runs a unit of work on one job with exclusive access to it and answers only
// after the work's changes are committed, so an acknowledged trial or report
// survives a crash.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/common/api.h"
#include "zeus/optimizer/batch_size/server/job_search.h"
#include "zeus/util/units.h"

namespace zeus::batch_size {

enum class TrialStatus { kDispatched, kSucceeded, kFailed };
std::string_view trial_status_name(TrialStatus status);  // Dispatched, Succeeded, Failed
TrialStatus parse_trial_status(std::string_view name);   // kParse otherwise

struct TrialRecord {
  std::int64_t number = 0;  // 1, 2, ... per job (the search's trial id)
  int batch_size = 0;
  batch_size::TrialKind kind = batch_size::TrialKind::kExploration;
  TrialStatus status = TrialStatus::kDispatched;
  std::string idempotency_key;  // "" when the client sent none
  double start_time = 0.0;      // Unix seconds
  std::optional<double> end_time;
  std::optional<double> time;    // s, cumulative, once reported
  std::optional<double> energy;  // J, cumulative, once reported
  std::optional<bool> converged;
};

struct JobRecord {
  JobSpec spec;
  JobSearch search;  // the built-in search, or the registered policy spec.policy names
};
// The job's state as the stores keep it (JobSearch::to_json, as text).
std::string job_state_to_json(const JobRecord& job);
// A stored job from its spec and state texts; kParse naming what is malformed.
JobRecord job_from_stored(const std::string& spec_json, const std::string& state_json);

// One job inside a unit of work. Changes are collected and committed together
// when the work returns; nothing is committed if it throws.
class JobTransaction {
 public:
  virtual ~JobTransaction() = default;
  virtual JobRecord* job() = 0;  // nullptr when the job does not exist
  virtual void create_job(JobRecord job) = 0;
  virtual void delete_job() = 0;   // with its trials
  virtual void job_changed() = 0;  // persist job()->search
  virtual std::optional<TrialRecord> trial(std::int64_t number) = 0;
  virtual std::optional<TrialRecord> trial_by_key(std::string_view key) = 0;
  virtual void put_trial(const TrialRecord& trial) = 0;  // insert or replace
  // Jobs registered in the store (all of its jobs, not just this one). May
  // lag concurrent registrations: it enforces a soft cap.
  virtual std::int64_t job_count() = 0;
  // The answer repeats stored data (a retried request): send it only once
  // every earlier change of this job is committed, even if this work changes nothing.
  virtual void answer_after_commit() = 0;
};

struct StoreOptions {
  int connections = 8;  // PostgreSQL: connections (and worker threads)
  // SQLite: at most this many units of work share one commit (group commit).
  int max_batch = 256;
  // PostgreSQL: how long to wait for the server to answer a connection
  // (libpq's connect_timeout, at least 2 s) unless the URL or
  // PGCONNECT_TIMEOUT sets it.
  Seconds connect_timeout{10.0};
};

// How a unit of work ends, from the work to the caller: a successful answer
// (status, JSON body) or the error that stopped it (a zeus::Error;
// FieldError for bad input). The service's calls complete with it too.
struct Outcome {
  int status = 200;
  nlohmann::json body;
  std::exception_ptr error;

  static Outcome failed(std::exception_ptr error) {
    Outcome o;
    o.error = std::move(error);
    return o;
  }
};
using OutcomeCallback = std::function<void(Outcome)>;

class Store {
 public:
  // A unit of work: reads and changes one job, and returns the answer to
  // send once its changes are committed. It fails by throwing.
  using Work = std::function<Outcome(JobTransaction&)>;
  virtual ~Store() = default;
  // Runs `work` with exclusive access to job `job_id`, commits its changes,
  // then calls `done` with the work's Outcome, or with one whose `error` is
  // the exception of the work or of the database (the commit, or the sync
  // that makes it durable), on a store thread or the calling one. Work that
  // throws changes nothing. Thread-safe.
  virtual void run(const std::string& job_id, Work work, OutcomeCallback done) = 0;
  // Finishes queued work, then refuses more. Idempotent.
  virtual void close() = 0;
  // "sqlite:/path/to/file" or "postgresql://host/db" without a password.
  virtual std::string describe() const = 0;
};

// The schema version this binary writes; a database with a newer one is
// refused (kFailedPrecondition) rather than misread.
inline constexpr int kSchemaVersion = 1;

// Opens (creating or migrating) the database named by `url`:
//   sqlite:PATH, sqlite:///RELATIVE, sqlite:////ABSOLUTE (also sqlite+aiosqlite:...)
//   postgresql://..., postgres://... (also postgresql+asyncpg://...), a libpq URI.
// kInvalidArgument for other schemes; kIo when the database cannot be opened.
std::unique_ptr<Store> open_store(const std::string& url, const StoreOptions& options = {});

std::unique_ptr<Store> open_sqlite_store(const std::string& path, const StoreOptions& options);
std::unique_ptr<Store> open_postgres_store(const std::string& conninfo,
                                           const StoreOptions& options);

}  // namespace zeus::batch_size
