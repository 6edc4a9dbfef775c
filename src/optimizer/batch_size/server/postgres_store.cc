// The replicated store: PostgreSQL through libpqxx. Every unit of work is one
// database transaction that first locks its job's row (SELECT ... FOR
// UPDATE), so several servers on one database serialize per job: none hands
// out a pruning trial another already handed out, and no report is lost.
// A pool of worker threads, one connection each, keeps the HTTP threads free.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <pqxx/pqxx>
#include <thread>

#include "optimizer/batch_size/state_json.h"
#include "store_rows.h"
#include "util/json.h"
#include "zeus/optimizer/batch_size/server/store.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

namespace bs = zeus::batch_size;

// Arbitrary key of the advisory lock that serializes schema migrations.
constexpr long long kMigrationLock = 0x7a657573'62736f;  // "zeusbso"

std::optional<double> opt_double(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<double>();
}

void prepare(pqxx::connection& c) {
  c.prepare("select_job", "SELECT spec, state FROM jobs WHERE job_id = $1 FOR UPDATE");
  c.prepare("insert_job", "INSERT INTO jobs (job_id, spec, state) VALUES ($1, $2, $3)");
  c.prepare("update_state", "UPDATE jobs SET state = $2 WHERE job_id = $1");
  c.prepare("delete_job", "DELETE FROM jobs WHERE job_id = $1");
  const char* columns =
      "trial_number, batch_size, kind, status, idempotency_key, start_time, end_time, time, "
      "energy, converged";
  c.prepare("select_trial", fmt::format("SELECT {} FROM trials WHERE job_id = $1 AND "
                                        "trial_number = $2",
                                        columns));
  c.prepare("select_trial_by_key", fmt::format("SELECT {} FROM trials WHERE job_id = $1 AND "
                                               "idempotency_key = $2",
                                               columns));
  c.prepare("put_trial",
            "INSERT INTO trials (job_id, trial_number, batch_size, kind, status, "
            "idempotency_key, start_time, end_time, time, energy, converged) VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (job_id, trial_number) "
            "DO UPDATE SET status = EXCLUDED.status, end_time = EXCLUDED.end_time, "
            "time = EXCLUDED.time, energy = EXCLUDED.energy, converged = EXCLUDED.converged");
}

TrialRecord trial_from(const pqxx::row& r) {
  return trial_from_row(r[0].as<std::int64_t>(), r[1].as<int>(), r[2].as<std::string>(),
                        r[3].as<std::string>(), r[4].is_null() ? "" : r[4].as<std::string>(),
                        r[5].as<double>(), opt_double(r[6]), opt_double(r[7]), opt_double(r[8]),
                        opt_double(r[9]));
}

// One job inside one database transaction; writes go out at once and are
// undone by PostgreSQL if the work throws.
class PostgresTransaction final : public JobTransaction {
 public:
  PostgresTransaction(pqxx::work& w, const std::string& id) : w_(w), id_(id) {
    const auto r = w_.exec_prepared("select_job", id_);
    if (!r.empty()) {
      job_.emplace(job_from_stored(r[0][0].as<std::string>(), r[0][1].as<std::string>()));
    }
  }
  JobRecord* job() override { return job_ ? &*job_ : nullptr; }
  void create_job(JobRecord job) override {
    job_.emplace(std::move(job));
    w_.exec_prepared("insert_job", id_, to_json(job_->spec).dump(), job_state_to_json(*job_));
  }
  void delete_job() override {
    w_.exec_prepared("delete_job", id_);
    job_.reset();
    changed_ = false;
  }
  void job_changed() override { changed_ = true; }
  std::optional<TrialRecord> trial(std::int64_t number) override {
    const auto r = w_.exec_prepared("select_trial", id_, number);
    if (r.empty()) return std::nullopt;
    return trial_from(r[0]);
  }
  std::optional<TrialRecord> trial_by_key(std::string_view key) override {
    const auto r = w_.exec_prepared("select_trial_by_key", id_, std::string(key));
    if (r.empty()) return std::nullopt;
    return trial_from(r[0]);
  }
  void put_trial(const TrialRecord& t) override {
    const std::string end = t.end_time ? fmt::format("{}", *t.end_time) : "";
    const std::string time = t.time ? fmt::format("{}", *t.time) : "";
    const std::string energy = t.energy ? fmt::format("{}", *t.energy) : "";
    const std::string conv = t.converged ? (*t.converged ? "1" : "0") : "";
    auto opt = [](const std::string& s, bool present) { return present ? s.c_str() : nullptr; };
    w_.exec_prepared(
        "put_trial", id_, t.number, t.batch_size, std::string(bs::trial_kind_name(t.kind)),
        std::string(trial_status_name(t.status)),
        opt(t.idempotency_key, !t.idempotency_key.empty()), fmt::format("{}", t.start_time),
        opt(end, t.end_time.has_value()), opt(time, t.time.has_value()),
        opt(energy, t.energy.has_value()), opt(conv, t.converged.has_value()));
  }
  void answer_after_commit() override {}  // reads see committed data only
  std::int64_t job_count() override {
    return w_.exec("SELECT count(*) FROM jobs")[0][0].as<std::int64_t>();
  }

  void flush() {
    if (changed_ && job_) {
      w_.exec_prepared("update_state", id_, job_state_to_json(*job_));
    }
  }

 private:
  pqxx::work& w_;
  const std::string& id_;
  std::optional<JobRecord> job_;
  bool changed_ = false;
};

// libpq waits forever for a server that accepts but never answers unless
// the connection string bounds it: add the default bound where the user set
// none (in the URL or PGCONNECT_TIMEOUT).
std::string with_connect_timeout(std::string conninfo, Seconds timeout) {
  if (conninfo.find("connect_timeout") != std::string::npos ||
      std::getenv("PGCONNECT_TIMEOUT") != nullptr) {
    return conninfo;
  }
  // libpq rounds anything under 2 s up to 2 s.
  const long seconds = std::max(2L, std::lround(timeout.count()));
  if (conninfo.starts_with("postgresql:") || conninfo.starts_with("postgres:")) {
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") +
           fmt::format("connect_timeout={}", seconds);
  }
  return conninfo + fmt::format(" connect_timeout={}", seconds);
}

std::string without_trailing_space(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// The bound in effect, for messages.
double connect_timeout_of(const std::string& conninfo) {
  const auto at = conninfo.find("connect_timeout=");
  if (at == std::string::npos) {
    const char* env = std::getenv("PGCONNECT_TIMEOUT");
    return env != nullptr ? std::atof(env) : 0.0;
  }
  return std::atof(conninfo.c_str() + at + std::string_view("connect_timeout=").size());
}

class PostgresStore final : public Store {
 public:
  PostgresStore(std::string conninfo, const StoreOptions& options)
      : conninfo_(with_connect_timeout(std::move(conninfo), options.connect_timeout)) {
    try {
      pqxx::connection c(conninfo_);
      description_ = fmt::format("postgresql://{}@{}/{}", c.username(),
                                 c.hostname() ? c.hostname() : "local", c.dbname());
      migrate(c);
    } catch (const pqxx::broken_connection& e) {
      throw_error(ErrorCode::kIo,
                  fmt::format("cannot connect to PostgreSQL (waited at most {:g} s; "
                              "connect_timeout in the URL changes it): {}",
                              connect_timeout_of(conninfo_), without_trailing_space(e.what())));
    } catch (const pqxx::sql_error& e) {
      throw_error(ErrorCode::kIo, fmt::format("PostgreSQL: {}", e.what()));
    }
    for (int i = 0; i < std::max(1, options.connections); ++i) {
      workers_.emplace_back([this] { work_loop(); });
    }
  }
  ~PostgresStore() override { close(); }

  void run(const std::string& job_id, Work work, OutcomeCallback done) override {
    {
      std::lock_guard lock(mutex_);
      if (!closing_) {
        queue_.push_back({job_id, std::move(work), std::move(done)});
        cv_.notify_one();
        return;
      }
    }
    done(Outcome::failed(
        std::make_exception_ptr(Error(ErrorCode::kFailedPrecondition, "the store is closed"))));
  }

  void close() override {
    {
      std::lock_guard lock(mutex_);
      if (closing_) return;
      closing_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  std::string describe() const override { return description_; }

 private:
  struct Task {
    std::string job_id;
    Work work;
    OutcomeCallback done;
  };

  static void migrate(pqxx::connection& c) {
    pqxx::work w(c);
    w.exec(fmt::format("SELECT pg_advisory_xact_lock({})", kMigrationLock));
    w.exec("CREATE TABLE IF NOT EXISTS zeus_bso_schema (version INTEGER NOT NULL)");
    const auto r = w.exec("SELECT coalesce(max(version), 0) FROM zeus_bso_schema");
    const int version = r[0][0].as<int>();
    check_schema_version(version, fmt::format("{} (PostgreSQL)", c.dbname()));
    if (version < kSchemaVersion) {
      for (const char* sql : schema_v1_statements()) w.exec(sql);
      w.exec(fmt::format("INSERT INTO zeus_bso_schema (version) VALUES ({})", kSchemaVersion));
    }
    w.commit();
  }

  void work_loop() {
    std::unique_ptr<pqxx::connection> conn;
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      execute(conn, task);
    }
  }

  void execute(std::unique_ptr<pqxx::connection>& conn, Task& task) {
    Outcome outcome;
    for (int attempt = 0;; ++attempt) {
      try {
        if (!conn || !conn->is_open()) {
          conn = std::make_unique<pqxx::connection>(conninfo_);
          prepare(*conn);
        }
        pqxx::work w(*conn);
        PostgresTransaction txn(w, task.job_id);
        outcome = task.work(txn);
        txn.flush();
        w.commit();
        break;
      } catch (const pqxx::unique_violation&) {
        // Another replica registered the same job meanwhile: run again on its row.
        if (attempt < 3) continue;
        outcome = Outcome::failed(std::make_exception_ptr(
            Error(ErrorCode::kAlreadyExists, "the job changed concurrently; retry")));
        break;
      } catch (const pqxx::broken_connection& e) {
        conn.reset();
        if (attempt < 1) continue;
        outcome = Outcome::failed(std::make_exception_ptr(
            Error(ErrorCode::kIo, fmt::format("lost the PostgreSQL connection: {}", e.what()))));
        break;
      } catch (const pqxx::sql_error& e) {
        log::error("bso: PostgreSQL error on job {}: {}", task.job_id, e.what());
        outcome = Outcome::failed(std::make_exception_ptr(
            Error(ErrorCode::kIo, fmt::format("the database failed: {}", e.what()))));
        break;
      } catch (...) {
        outcome = Outcome::failed(std::current_exception());
        break;
      }
    }
    task.done(std::move(outcome));
  }

  std::string conninfo_;
  std::string description_;
  std::mutex mutex_;  // guards queue_ and closing_
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool closing_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<Store> open_postgres_store(const std::string& conninfo,
                                           const StoreOptions& options) {
  return std::make_unique<PostgresStore>(conninfo, options);
}

}  // namespace zeus::batch_size
