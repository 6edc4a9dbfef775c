#include "zeus/optimizer/batch_size/server/store.h"

#include <fmt/format.h>

#include "store_rows.h"
#include "util/json.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {

std::string_view trial_status_name(TrialStatus status) {
  switch (status) {
    case TrialStatus::kDispatched:
      return "Dispatched";
    case TrialStatus::kSucceeded:
      return "Succeeded";
    case TrialStatus::kFailed:
      return "Failed";
  }
  return "Unknown";
}

TrialStatus parse_trial_status(std::string_view name) {
  for (auto s : {TrialStatus::kDispatched, TrialStatus::kSucceeded, TrialStatus::kFailed}) {
    if (trial_status_name(s) == name) return s;
  }
  throw_error(ErrorCode::kParse, fmt::format("unknown trial status '{}'", name));
}

std::string job_state_to_json(const JobRecord& job) { return job.search.to_json().dump(); }

JobRecord job_from_stored(const std::string& spec_json, const std::string& state_json) {
  JobSpec spec = parse_job_spec(parse_json(spec_json, "stored job spec"), "stored job");
  JobSearch search = JobSearch::from_json(spec, parse_json(state_json, "stored job state"));
  return JobRecord{std::move(spec), std::move(search)};
}

const std::vector<const char*>& schema_v1_statements() {
  // Jobs keep their spec (the registration body) and the search state as JSON
  // text; trials are rows, so an operator can query them.
  static const std::vector<const char*> statements = {
      "CREATE TABLE jobs (job_id TEXT PRIMARY KEY, spec TEXT NOT NULL, state TEXT NOT NULL)",
      "CREATE TABLE trials (job_id TEXT NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE, "
      "trial_number BIGINT NOT NULL, batch_size INTEGER NOT NULL, kind TEXT NOT NULL, "
      "status TEXT NOT NULL, idempotency_key TEXT, start_time DOUBLE PRECISION NOT NULL, "
      "end_time DOUBLE PRECISION, time DOUBLE PRECISION, energy DOUBLE PRECISION, "
      "converged INTEGER, PRIMARY KEY (job_id, trial_number))",
      "CREATE UNIQUE INDEX trials_by_key ON trials (job_id, idempotency_key)",
  };
  return statements;
}

void check_schema_version(int stored, const std::string& where) {
  if (stored > kSchemaVersion) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("the database {} has schema version {}, newer than this zeus "
                            "understands ({}); run a newer zeus, or point it at another database",
                            where, stored, kSchemaVersion));
  }
}

TrialRecord trial_from_row(std::int64_t number, int batch_size, const std::string& kind,
                           const std::string& status, const std::string& key, double start_time,
                           std::optional<double> end_time, std::optional<double> time,
                           std::optional<double> energy, std::optional<double> converged) {
  TrialRecord t;
  t.number = number;
  t.batch_size = batch_size;
  t.kind = batch_size::parse_trial_kind(kind);
  t.status = parse_trial_status(status);
  t.idempotency_key = key;
  t.start_time = start_time;
  t.end_time = end_time;
  t.time = time;
  t.energy = energy;
  if (converged) t.converged = *converged != 0.0;
  return t;
}

namespace {

// "scheme+driver://rest" -> ("scheme", "//rest")
std::pair<std::string, std::string> split_url(const std::string& url) {
  const auto colon = url.find(':');
  if (colon == std::string::npos) return {"", url};
  std::string scheme = url.substr(0, colon);
  if (const auto plus = scheme.find('+'); plus != std::string::npos) scheme.resize(plus);
  return {scheme, url.substr(colon + 1)};
}

}  // namespace

std::unique_ptr<Store> open_store(const std::string& url, const StoreOptions& options) {
  const auto [scheme, rest] = split_url(url);
  if (scheme == "sqlite") {
    std::string path = rest;
    // SQLAlchemy: sqlite:///relative, sqlite:////absolute; also plain sqlite:path.
    if (path.starts_with("///")) {
      path = path.substr(3);
    } else if (path.starts_with("//")) {
      path = path.substr(2);
    }
    if (path.empty() || path == ":memory:") {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' names no database file; use sqlite:///path/to/bso.db", url));
    }
    return open_sqlite_store(path, options);
  }
  if (scheme == "postgresql" || scheme == "postgres") {
    return open_postgres_store("postgresql:" + rest, options);
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("unsupported database URL '{}'; use sqlite:///path/to/bso.db or "
                          "postgresql://user@host/dbname",
                          url));
}

}  // namespace zeus::batch_size
