// The embedded store: one SQLite file in WAL mode, opened exclusively by one
// server. Jobs live in memory once read; a unit of work runs on a private
// copy of its job under the job's mutex, so work on different jobs runs in
// parallel and a failed unit changes nothing. One writer thread commits the
// queued changes of many requests in one transaction (group commit); a
// request is answered only once an fdatasync of the write-ahead log that
// began after its commit has returned.
//
// The commit and its sync are pipelined: SQLite runs with synchronous=NORMAL
// (a COMMIT writes the log without syncing it; checkpoints still sync), and
// sync threads fdatasync the log themselves, several at once. So a request
// that arrives while a sync is in flight is committed at once and gets a
// sync of its own started at once, instead of waiting for the one in flight
// to end and then for the next (group commit's "up to two syncs").
#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "optimizer/batch_size/state_json.h"
#include "store_rows.h"
#include "util/json.h"
#include "zeus/optimizer/batch_size/server/store.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

namespace bs = zeus::batch_size;

// A prepared statement, reset after each use.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw_error(ErrorCode::kIo,
                  fmt::format("SQLite: cannot prepare '{}': {}", sql, sqlite3_errmsg(db)));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& s) {
    check(sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Statement& bind_null(int i) {
    check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string msg = sqlite3_errmsg(db_);
    sqlite3_reset(stmt_);
    throw_error(ErrorCode::kIo, "SQLite: " + msg);
  }
  void run() {
    step();
    reset();
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::optional<double> real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw_error(ErrorCode::kIo, std::string("SQLite: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw_error(ErrorCode::kIo, fmt::format("SQLite: {} (in: {})", msg, sql));
  }
}

// One change to write.
struct Change {
  enum class Kind { kInsertJob, kUpdateState, kDeleteJob, kPutTrial } kind;
  std::string job_id;
  std::string spec;   // kInsertJob
  std::string state;  // kInsertJob, kUpdateState
  TrialRecord trial;  // kPutTrial
};

// Finished trials kept in memory per job (for late reports and retried
// requests); older ones are read from the file when asked for.
constexpr std::size_t kCachedFinishedTrials = 32;

// A job as cached in memory: the job, its dispatched trials and its most
// recent finished ones. `mutex` guards everything else.
struct CachedJob {
  std::mutex mutex;
  std::uint64_t generation = 0;  // 0: not loaded (or invalidated by a failed commit)
  std::optional<JobRecord> job;
  std::map<std::int64_t, TrialRecord> trials;
  std::unordered_map<std::string, std::int64_t> keys;
  // Finished trials whose final state is committed, oldest first: only these
  // leave the cache, so the file is current for every trial not cached.
  std::deque<std::int64_t> committed_finished;
  // False from a deletion until it is committed: the file still has the old trials.
  bool file_current = true;
};

// Reads trials that are no longer cached.
class StoredTrials {
 public:
  virtual ~StoredTrials() = default;
  virtual std::optional<TrialRecord> by_number(const std::string& job_id, std::int64_t n) = 0;
  virtual std::optional<TrialRecord> by_key(const std::string& job_id, std::string_view key) = 0;
};

class SqliteStore;

// The unit of work's view: reads the cache, stages every change.
class SqliteTransaction final : public JobTransaction {
 public:
  SqliteTransaction(const std::string& id, CachedJob& cached, StoredTrials& stored,
                    std::atomic<std::int64_t>& jobs)
      : id_(id), cached_(cached), stored_(stored), jobs_(jobs) {}

  JobRecord* job() override {
    if (deleted_) return nullptr;
    if (!copy_ && cached_.job) copy_.emplace(*cached_.job);
    return copy_ ? &*copy_ : nullptr;
  }
  void create_job(JobRecord job) override {
    if (this->job() != nullptr) throw_error(ErrorCode::kInternal, "job exists");
    copy_.emplace(std::move(job));
    deleted_ = false;
    created_ = true;
  }
  void delete_job() override {
    copy_.reset();
    staged_trials_.clear();
    deleted_ = true;
    created_ = false;
    state_changed_ = false;
  }
  void job_changed() override { state_changed_ = true; }
  std::optional<TrialRecord> trial(std::int64_t number) override {
    if (const auto it = staged_trials_.find(number); it != staged_trials_.end()) return it->second;
    if (deleted_) return std::nullopt;
    if (const auto it = cached_.trials.find(number); it != cached_.trials.end()) {
      return it->second;
    }
    if (!cached_.job || !cached_.file_current) return std::nullopt;
    return stored_.by_number(id_, number);
  }
  std::optional<TrialRecord> trial_by_key(std::string_view key) override {
    for (const auto& [n, t] : staged_trials_) {
      if (t.idempotency_key == key) return t;
    }
    if (deleted_) return std::nullopt;
    const auto it = cached_.keys.find(std::string(key));
    if (it != cached_.keys.end()) return trial(it->second);
    if (!cached_.job || !cached_.file_current) return std::nullopt;
    return stored_.by_key(id_, key);
  }
  void put_trial(const TrialRecord& t) override { staged_trials_[t.number] = t; }
  void answer_after_commit() override { barrier_ = true; }
  std::int64_t job_count() override { return jobs_.load(); }

  // Applies the staged changes to the cache and lists them for the writer.
  std::vector<Change> commit_to_cache() {
    std::vector<Change> out;
    if (deleted_ && cached_.job) --jobs_;
    if (created_) ++jobs_;
    if (deleted_) {
      cached_.job.reset();
      cached_.trials.clear();
      cached_.keys.clear();
      cached_.committed_finished.clear();
      cached_.file_current = false;
      out.push_back({Change::Kind::kDeleteJob, id_, {}, {}, {}});
    }
    if (copy_ && (created_ || state_changed_)) {
      std::string state = job_state_to_json(*copy_);
      if (created_) {
        out.push_back(
            {Change::Kind::kInsertJob, id_, to_json(copy_->spec).dump(), std::move(state), {}});
      } else {
        out.push_back({Change::Kind::kUpdateState, id_, {}, std::move(state), {}});
      }
    }
    if (copy_ && (created_ || state_changed_)) cached_.job = std::move(*copy_);
    for (auto& [n, t] : staged_trials_) {
      if (!t.idempotency_key.empty()) cached_.keys[t.idempotency_key] = n;
      cached_.trials[n] = t;
      out.push_back({Change::Kind::kPutTrial, id_, {}, {}, std::move(t)});
    }
    return out;
  }
  bool barrier() const { return barrier_; }

 private:
  const std::string& id_;
  CachedJob& cached_;
  StoredTrials& stored_;
  std::atomic<std::int64_t>& jobs_;
  std::optional<JobRecord> copy_;
  std::map<std::int64_t, TrialRecord> staged_trials_;
  bool created_ = false;
  bool deleted_ = false;
  bool state_changed_ = false;
  bool barrier_ = false;
};

// Says what is wrong with a database path in the user's words before SQLite
// says "unable to open database file": SQLite needs the file and, for its
// write-ahead log, its folder writable.
void check_database_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the SQLite database {} is a directory; name a file in it, e.g. "
                            "sqlite:///{}/zeus_bso.db",
                            path, fs::absolute(path, ec).lexically_normal().string()));
  }
  fs::path folder = fs::absolute(path, ec).parent_path();
  if (!fs::is_directory(folder, ec)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("cannot create the SQLite database {}: the folder {} does not exist; "
                            "create it (mkdir -p) or name another",
                            path, folder.string()));
  }
  const bool exists = fs::exists(path, ec);
  if (exists && ::access(path.c_str(), R_OK | W_OK) != 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the SQLite database {} is not writable by uid {} (the user this "
                            "server runs as): {}",
                            path, ::geteuid(), errno_text(errno)));
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the folder {} is not writable by uid {} (the user this server runs "
                            "as): SQLite {} there; {}",
                            folder.string(), ::geteuid(),
                            exists ? "writes its write-ahead log" : "creates the database",
                            errno_text(errno)));
  }
}

class SqliteStore final : public Store, private StoredTrials {
 public:
  SqliteStore(std::string path, const StoreOptions& options)
      : path_(std::move(path)), max_batch_(std::max(1, options.max_batch)) {
    check_database_path(path_);
    if (sqlite3_open_v2(path_.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw_error(ErrorCode::kIo,
                  fmt::format("cannot open the SQLite database {}: {}", path_, msg));
    }
    try {
      exec(db_, "PRAGMA busy_timeout=0");
      // Exclusive: one server owns the file, so its in-memory cache stays
      // true. A second server fails here instead of corrupting decisions.
      exec(db_, "PRAGMA locking_mode=EXCLUSIVE");
      exec(db_, "PRAGMA journal_mode=WAL");
      // The log is synced by the sync threads before any answer (durable_seq_).
      exec(db_, "PRAGMA synchronous=NORMAL");
      // A checkpoint runs inside a commit on the writer thread and syncs the
      // log and the file (two fsyncs no commit can pass): every 1,000 pages
      // (SQLite's default) that was every ~50 ms at 32 clients. 10,000 pages
      // (~40 MiB of log) makes it ten times rarer.
      exec(db_, "PRAGMA wal_autocheckpoint=10000");
      exec(db_, "PRAGMA foreign_keys=ON");
      migrate();
      prepare();
      Statement count(db_, "SELECT count(*) FROM jobs");
      if (count.step()) registered_jobs_ = count.integer(0);
    } catch (const Error& e) {
      sqlite3_close(db_);
      const std::string what = e.what();
      if (what.find("locked") != std::string::npos || what.find("busy") != std::string::npos) {
        throw_error(ErrorCode::kFailedPrecondition,
                    fmt::format("{} is in use by another process (another zeus bso serve?); "
                                "one server per SQLite file; use PostgreSQL for replicas",
                                path_));
      }
      throw;
    }
    writer_ = std::thread([this] { write_loop(); });
    for (int i = 0; i < kSyncThreads; ++i) syncers_.emplace_back([this] { sync_loop(); });
  }

  ~SqliteStore() override {
    close();
    statements_.clear();
    sqlite3_close(db_);
    for (int fd : wal_fds_) ::close(fd);
  }

  void run(const std::string& job_id, Work work, OutcomeCallback done) override {
    std::shared_ptr<CachedJob> cached = entry(job_id);
    Item item{{}, {{}, std::move(done)}, 0, cached};
    try {
      std::lock_guard lock(cached->mutex);
      {
        std::lock_guard q(queue_mutex_);
        if (closing_) throw_error(ErrorCode::kFailedPrecondition, "the store is closed");
      }
      {
        std::lock_guard s(sync_mutex_);
        if (sync_error_) std::rethrow_exception(sync_error_);
      }
      if (cached->generation != generation_.load()) load(job_id, *cached);
      SqliteTransaction txn(job_id, *cached, *this, registered_jobs_);
      item.answer.outcome = work(txn);
      item.changes = txn.commit_to_cache();
      item.generation = cached->generation;
      if (!item.changes.empty() || txn.barrier()) {
        // Queued under the job's mutex, so one job's changes commit in order.
        enqueue(item);
        return;
      }
    } catch (...) {
      item.answer.send(std::current_exception());
      return;
    }
    item.answer.send(nullptr);  // nothing to commit or to wait for
  }

  void close() override {
    {
      std::lock_guard lock(queue_mutex_);
      if (closing_) return;
      closing_ = true;
    }
    queue_cv_.notify_all();
    if (writer_.joinable()) writer_.join();
    {
      std::lock_guard lock(sync_mutex_);
      writer_done_ = true;
    }
    sync_cv_.notify_all();
    for (auto& t : syncers_) {
      if (t.joinable()) t.join();
    }
  }

  std::string describe() const override { return "sqlite:" + path_; }

 private:
  // The work's outcome, held until its commit is durable.
  struct Answer {
    Outcome outcome;
    OutcomeCallback done;
    // Sends the outcome, or `error` in its place when there is one.
    void send(std::exception_ptr error) {
      done(error ? Outcome::failed(std::move(error)) : std::move(outcome));
    }
  };
  struct Item {
    std::vector<Change> changes;
    Answer answer;
    std::uint64_t generation;
    std::shared_ptr<CachedJob> cached;
  };
  // An answer waiting for the log to be synced up to commit `seq`.
  struct Unsynced {
    std::uint64_t seq;
    Answer answer;
  };
  // Syncs of the log in flight at once. More than one lets a commit's sync
  // start while the previous one runs; a sync covers every commit before it.
  static constexpr int kSyncThreads = 4;

  std::shared_ptr<CachedJob> entry(const std::string& job_id) {
    std::lock_guard lock(jobs_mutex_);
    auto& e = jobs_[job_id];
    if (!e) e = std::make_shared<CachedJob>();
    return e;
  }

  // Moves `item` to the writer's queue; throws, leaving it as it was, once closing.
  void enqueue(Item& item) {
    {
      std::lock_guard lock(queue_mutex_);
      if (closing_) throw_error(ErrorCode::kFailedPrecondition, "the store is closed");
      queue_.push_back(std::move(item));
    }
    queue_cv_.notify_one();
  }

  // Reads one job and its trials from the file into the cache.
  void load(const std::string& job_id, CachedJob& c) {
    std::lock_guard lock(db_mutex_);
    c.job.reset();
    c.trials.clear();
    c.keys.clear();
    c.committed_finished.clear();
    c.file_current = true;
    Statement& sj = *statements_.at("select_job");
    sj.bind(1, job_id);
    if (sj.step()) {
      const auto spec = sj.text(0), state = sj.text(1);
      sj.reset();
      c.job.emplace(job_from_stored(spec, state));
      Statement& st = *statements_.at("select_trials");
      st.bind(1, job_id);
      while (st.step()) {
        TrialRecord t =
            trial_from_row(st.integer(0), static_cast<int>(st.integer(1)), st.text(2), st.text(3),
                           st.text(4), *st.real(5), st.real(6), st.real(7), st.real(8), st.real(9));
        if (!t.idempotency_key.empty()) c.keys[t.idempotency_key] = t.number;
        if (t.status != TrialStatus::kDispatched) c.committed_finished.push_back(t.number);
        c.trials[t.number] = std::move(t);
      }
      st.reset();
    } else {
      sj.reset();
    }
    c.generation = generation_.load();
  }

  void migrate() {
    exec(db_, "CREATE TABLE IF NOT EXISTS zeus_bso_schema (version INTEGER NOT NULL)");
    int version = 0;
    {
      Statement s(db_, "SELECT max(version) FROM zeus_bso_schema");
      if (s.step()) version = static_cast<int>(s.integer(0));
    }
    check_schema_version(version, path_);
    if (version == kSchemaVersion) return;
    exec(db_, "BEGIN IMMEDIATE");
    try {
      for (const char* sql : schema_v1_statements()) exec(db_, sql);
      exec(
          db_,
          fmt::format("INSERT INTO zeus_bso_schema (version) VALUES ({})", kSchemaVersion).c_str());
      exec(db_, "COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  void prepare() {
    auto add = [&](const char* name, const char* sql) {
      statements_.emplace(name, std::make_unique<Statement>(db_, sql));
    };
    add("select_job", "SELECT spec, state FROM jobs WHERE job_id = ?1");
    add("select_trials",
        "SELECT trial_number, batch_size, kind, status, idempotency_key, start_time, end_time, "
        "time, energy, converged FROM trials WHERE job_id = ?1 AND (status = 'Dispatched' OR "
        "trial_number > (SELECT max(trial_number) FROM trials WHERE job_id = ?1) - 32) ORDER BY "
        "trial_number");
    add("select_trial",
        "SELECT trial_number, batch_size, kind, status, idempotency_key, start_time, end_time, "
        "time, energy, converged FROM trials WHERE job_id = ?1 AND trial_number = ?2");
    add("select_trial_by_key",
        "SELECT trial_number, batch_size, kind, status, idempotency_key, start_time, end_time, "
        "time, energy, converged FROM trials WHERE job_id = ?1 AND idempotency_key = ?2");
    add("insert_job", "INSERT INTO jobs (job_id, spec, state) VALUES (?1, ?2, ?3)");
    add("update_state", "UPDATE jobs SET state = ?2 WHERE job_id = ?1");
    add("delete_trials", "DELETE FROM trials WHERE job_id = ?1");
    add("delete_job", "DELETE FROM jobs WHERE job_id = ?1");
    add("put_trial",
        "INSERT OR REPLACE INTO trials (job_id, trial_number, batch_size, kind, status, "
        "idempotency_key, start_time, end_time, time, energy, converged) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    add("begin", "BEGIN IMMEDIATE");
    add("commit", "COMMIT");
  }

  void apply(const Change& c) {
    switch (c.kind) {
      case Change::Kind::kInsertJob:
        statements_.at("insert_job")->bind(1, c.job_id).bind(2, c.spec).bind(3, c.state).run();
        break;
      case Change::Kind::kUpdateState:
        statements_.at("update_state")->bind(1, c.job_id).bind(2, c.state).run();
        break;
      case Change::Kind::kDeleteJob:
        statements_.at("delete_trials")->bind(1, c.job_id).run();
        statements_.at("delete_job")->bind(1, c.job_id).run();
        break;
      case Change::Kind::kPutTrial: {
        const TrialRecord& t = c.trial;
        auto& s = *statements_.at("put_trial");
        s.bind(1, c.job_id).bind(2, t.number).bind(3, std::int64_t{t.batch_size});
        s.bind(4, std::string(bs::trial_kind_name(t.kind)));
        s.bind(5, std::string(trial_status_name(t.status)));
        if (t.idempotency_key.empty()) {
          s.bind_null(6);
        } else {
          s.bind(6, t.idempotency_key);
        }
        s.bind(7, t.start_time).bind(8, t.end_time).bind(9, t.time).bind(10, t.energy);
        if (t.converged) {
          s.bind(11, std::int64_t{*t.converged ? 1 : 0});
        } else {
          s.bind_null(11);
        }
        s.run();
        break;
      }
    }
  }

  void write_loop() {
    for (;;) {
      std::vector<Item> batch;
      {
        std::unique_lock lock(queue_mutex_);
        queue_cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;
        while (!queue_.empty() && batch.size() < static_cast<std::size_t>(max_batch_)) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      commit(batch);
    }
  }

  void commit(std::vector<Item>& batch) {
    const std::uint64_t generation = generation_.load();
    std::exception_ptr error;
    bool any = false;
    for (const auto& item : batch) any = any || !item.changes.empty();
    if (any) {
      std::lock_guard lock(db_mutex_);
      try {
        statements_.at("begin")->run();
        try {
          for (const auto& item : batch) {
            if (item.generation != generation) continue;
            for (const auto& c : item.changes) apply(c);
          }
          statements_.at("commit")->run();
        } catch (...) {
          sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
          throw;
        }
      } catch (const std::exception& e) {
        log::error("bso: committing {} change set(s) to {} failed: {}", batch.size(), path_,
                   e.what());
        error = std::make_exception_ptr(
            Error(ErrorCode::kIo, fmt::format("the database write failed: {}", e.what())));
        // The cache ran ahead of the file: drop it, so every job is read again.
        generation_.fetch_add(1);
      }
    }
    if (!error && any) error = note_wal_written();
    if (!error) {
      for (auto& item : batch) {
        if (item.generation == generation && item.cached) note_committed(item);
      }
    }
    // Answers: errors now; the rest once the log is synced past this commit
    // (work that changed nothing waits for its job's earlier commits, which
    // are at or before it).
    std::vector<Unsynced> waiting;
    for (auto& item : batch) {
      if (!item.answer.done) continue;
      if (error) {
        item.answer.send(error);
      } else if (item.generation != generation) {
        item.answer.send(std::make_exception_ptr(
            Error(ErrorCode::kIo, "an earlier database write failed; this change was not stored")));
      } else {
        waiting.push_back({0, std::move(item.answer)});
      }
    }
    if (waiting.empty()) return;
    std::exception_ptr failed;
    {
      std::lock_guard lock(sync_mutex_);
      if (any && !error) ++committed_seq_;
      failed = sync_error_;
      if (!failed && durable_seq_ < committed_seq_) {
        for (auto& w : waiting) {
          w.seq = committed_seq_;
          unsynced_.push_back(std::move(w));
        }
        waiting.clear();
      }
    }
    sync_cv_.notify_one();
    for (auto& w : waiting) w.answer.send(failed);  // durable already (or the log cannot be synced)
  }

  // After a commit wrote the log: the descriptor the sync threads fdatasync.
  // The log file is opened once (with a sync of its folder, so the file
  // itself survives a crash), and again should SQLite ever replace it.
  std::exception_ptr note_wal_written() {
    const std::string wal = path_ + "-wal";
    struct stat now {};
    if (::stat(wal.c_str(), &now) != 0) {
      return std::make_exception_ptr(
          Error(ErrorCode::kIo, fmt::format("the write-ahead log {}: {}", wal, errno_text(errno))));
    }
    {
      std::lock_guard lock(sync_mutex_);
      if (wal_fd_ >= 0 && now.st_ino == wal_inode_ && now.st_dev == wal_device_) return nullptr;
    }
    const int fd = ::open(wal.c_str(), O_RDWR | O_CLOEXEC);
    const std::string folder = std::filesystem::path(path_).parent_path().string();
    const int dir =
        ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool ok = fd >= 0 && dir >= 0 && ::fsync(dir) == 0;
    const int err = errno;
    if (dir >= 0) ::close(dir);
    if (!ok) {
      if (fd >= 0) ::close(fd);
      return std::make_exception_ptr(
          Error(ErrorCode::kIo, fmt::format("the write-ahead log {}: {}", wal, errno_text(err))));
    }
    std::lock_guard lock(sync_mutex_);
    wal_fds_.push_back(fd);  // closed with the store: a sync in flight may use the old one
    wal_fd_ = fd;
    wal_inode_ = now.st_ino;
    wal_device_ = now.st_dev;
    return nullptr;
  }

  // One sync thread: when a commit is not yet covered by a sync in flight,
  // fdatasyncs the log (covering every commit so far) and answers the
  // requests it made durable.
  void sync_loop() {
    std::unique_lock lock(sync_mutex_);
    for (;;) {
      sync_cv_.wait(lock, [&] {
        return covered_seq_ < committed_seq_ || (writer_done_ && unsynced_.empty());
      });
      if (covered_seq_ >= committed_seq_) return;  // closing, nothing left
      const std::uint64_t cover = committed_seq_;
      covered_seq_ = cover;
      const int fd = wal_fd_;
      lock.unlock();
      const bool ok = fd >= 0 && ::fdatasync(fd) == 0;
      const int err = errno;
      lock.lock();
      std::vector<Answer> ready;
      std::exception_ptr error;
      if (!ok && !sync_error_) {
        // The kernel may have dropped the pages it failed to write: nothing
        // written since can be trusted to be durable. Refuse from now on.
        log::error("bso: fdatasync of {}-wal failed: {}", path_, errno_text(err));
        sync_error_ = std::make_exception_ptr(
            Error(ErrorCode::kIo, fmt::format("the database write failed: fdatasync of the "
                                              "write-ahead log: {}",
                                              errno_text(err))));
      }
      error = sync_error_;
      if (!error) durable_seq_ = std::max(durable_seq_, cover);
      while (!unsynced_.empty() && (error || unsynced_.front().seq <= durable_seq_)) {
        ready.push_back(std::move(unsynced_.front().answer));
        unsynced_.pop_front();
      }
      if (unsynced_.empty()) sync_cv_.notify_all();  // close() may be waiting
      lock.unlock();
      for (auto& a : ready) a.send(error);
      lock.lock();
    }
  }

  // After a commit: a deletion makes the file current again; finished trials
  // become evictable, and the oldest beyond kCachedFinishedTrials leave the cache.
  void note_committed(const Item& item) {
    CachedJob& c = *item.cached;
    std::lock_guard lock(c.mutex);
    if (c.generation != item.generation) return;
    for (const auto& ch : item.changes) {
      if (ch.kind == Change::Kind::kDeleteJob) {
        c.file_current = true;
        c.committed_finished.clear();
      } else if (ch.kind == Change::Kind::kPutTrial &&
                 ch.trial.status != TrialStatus::kDispatched) {
        c.committed_finished.push_back(ch.trial.number);
      }
    }
    while (c.committed_finished.size() > kCachedFinishedTrials) {
      const auto it = c.trials.find(c.committed_finished.front());
      c.committed_finished.pop_front();
      if (it == c.trials.end() || it->second.status == TrialStatus::kDispatched) continue;
      if (!it->second.idempotency_key.empty()) c.keys.erase(it->second.idempotency_key);
      c.trials.erase(it);
    }
  }

  std::optional<TrialRecord> read_trial(Statement& s) {
    std::optional<TrialRecord> t;
    if (s.step()) {
      t = trial_from_row(s.integer(0), static_cast<int>(s.integer(1)), s.text(2), s.text(3),
                         s.text(4), *s.real(5), s.real(6), s.real(7), s.real(8), s.real(9));
    }
    s.reset();
    return t;
  }
  std::optional<TrialRecord> by_number(const std::string& job_id, std::int64_t n) override {
    std::lock_guard lock(db_mutex_);
    return read_trial(statements_.at("select_trial")->bind(1, job_id).bind(2, n));
  }
  std::optional<TrialRecord> by_key(const std::string& job_id, std::string_view key) override {
    std::lock_guard lock(db_mutex_);
    return read_trial(
        statements_.at("select_trial_by_key")->bind(1, job_id).bind(2, std::string(key)));
  }

  std::string path_;
  int max_batch_;
  sqlite3* db_ = nullptr;
  std::mutex db_mutex_;  // guards db_ and statements_ (loads and the writer)
  std::map<std::string, std::unique_ptr<Statement>> statements_;
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<std::int64_t> registered_jobs_{0};  // kept with the cache
  std::mutex jobs_mutex_;  // guards the jobs_ map (each entry has its own mutex)
  std::unordered_map<std::string, std::shared_ptr<CachedJob>> jobs_;
  std::mutex queue_mutex_;  // guards queue_ and closing_
  std::condition_variable queue_cv_;
  std::deque<Item> queue_;
  bool closing_ = false;
  std::thread writer_;
  // The log's syncs. Commits are numbered 1, 2, ...; a request is answered
  // once durable_seq_ reaches the commit that holds its changes.
  std::mutex sync_mutex_;  // guards the members below
  std::condition_variable sync_cv_;
  std::uint64_t committed_seq_ = 0;  // the last commit written to the log
  std::uint64_t covered_seq_ = 0;    // the last commit a sync (in flight or done) covers
  std::uint64_t durable_seq_ = 0;    // the last commit a finished sync covers
  std::deque<Unsynced> unsynced_;    // by seq
  std::exception_ptr sync_error_;    // a failed sync: every later answer is this error
  bool writer_done_ = false;
  int wal_fd_ = -1;
  ino_t wal_inode_ = 0;
  dev_t wal_device_ = 0;
  std::vector<int> wal_fds_;
  std::vector<std::thread> syncers_;
};

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const std::string& path, const StoreOptions& options) {
  return std::make_unique<SqliteStore>(path, options);
}

}  // namespace zeus::batch_size
