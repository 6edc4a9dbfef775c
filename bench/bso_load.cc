// bso_load: the recurring-jobs load test `bso-w1` (docs/bso-service.md,
// "Load test") against a batch-size optimizer server: steady and cold modes
// with N closed-loop keep-alive clients, and the crash mode that kill -9s the
// server under load and checks the database against the clients' journal.
// It starts `zeus bso serve` itself (pinned to one core, clients to another)
// or drives a server at --url, and prints the table row of the workload page.
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "workloads/batch_size_w1.h"
#include "zeus/http/client.h"
#include "zeus/util/error.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;
using std::chrono::steady_clock;
using zeus::batch_size::w1::job_id;
using zeus::batch_size::w1::workload_spec;

constexpr int kJobs = 64;
constexpr int kMaxReports = 25;

// ---- The synthetic training model of the workload page (exact integer arithmetic).

int ilog2(std::int64_t b) {
  int l = 0;
  while ((std::int64_t{1} << l) < b) ++l;
  return l;
}
double tau(int b) { return 100.0 * std::sqrt(256.0 / b); }
double power(int b) { return 100.0 + 25.0 * std::log2(b / 16.0); }
std::int64_t noise(std::int64_t j, std::int64_t b, std::int64_t k) {
  std::int64_t h = (j * 1000003 + b * 7919 + k * 104729) % 2147483647;
  h = (h * 48271) % 2147483647;
  return h % 3 - 1;
}
std::int64_t b_opt(std::int64_t j) { return std::array<std::int64_t, 4>{64, 128, 256, 512}[j % 4]; }
std::int64_t epochs_to_target(std::int64_t j, std::int64_t b, std::int64_t k) {
  return std::max<std::int64_t>(2, 4 + 2 * std::abs(ilog2(b) - ilog2(b_opt(j))) + noise(j, b, k));
}
bool diverges(std::uint64_t j, std::uint64_t b, std::uint64_t k) {
  return k >= 16 &&
         ((j * 2654435761ULL + b * 40503ULL + k * 2246822519ULL) % 4294967291ULL) % 10 == 0;
}
double metric(int j, int b, int e, std::int64_t k) {
  if (b == 16 || b == 2048 || diverges(j, b, static_cast<std::uint64_t>(k))) {
    return 0.4 * std::min(1.0, e / 10.0);
  }
  return 0.5 * e / static_cast<double>(epochs_to_target(j, b, k));
}

// ---- Options and shared counters.

struct Options {
  std::string mode = "steady";
  int clients = 32;
  double duration = 60.0;
  int warmup_clients = 8;
  int warmup_trials = 30;
  int k_offset = -1;  // -1: 30 in steady mode, 0 otherwise
  std::string url;
  std::string server_bin;
  std::string dir;
  int server_cpu = 0;
  int client_cpu = 1;
  bool pin = true;
  std::vector<double> kill_at = {20, 40, 60};
  double restart_delay = 2.0;
  std::string journal;
  bool keys = true;
};

struct Stats {
  std::mutex mutex;  // guards the vectors
  std::vector<double> get_ms, report_ms;
  std::atomic<long> requests{0}, trials{0}, server_errors{0}, transport_errors{0}, other_errors{0};
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// ---- The server under test, when bso_load starts it.

class ServerProcess {
 public:
  ServerProcess(const Options& o, std::string db_url) : o_(o), db_url_(std::move(db_url)) {}
  ~ServerProcess() { stop(SIGTERM); }

  void start(int port) {
    const std::string port_file = o_.dir + "/port";
    fs::remove(port_file);
    pid_ = fork();
    if (pid_ == 0) {
      if (o_.pin) pin_to(o_.server_cpu);
      const std::string p = std::to_string(port);
      const std::string log = o_.dir + "/server.log";
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      execl(o_.server_bin.c_str(), o_.server_bin.c_str(), "bso", "serve", "--port", p.c_str(),
            "--port-file", port_file.c_str(), "--database-url", db_url_.c_str(), "--log-level",
            "warning", static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 1000; ++i) {
      std::ifstream in(port_file);
      if (in >> port_ && port_ > 0) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("the server exited at start; see " + o_.dir + "/server.log");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("the server did not start listening");
  }

  // SIGTERM (graceful) or SIGKILL; returns the exit status.
  int stop(int sig) {
    if (pid_ <= 0) return 0;
    ::kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // utime + stime in seconds.
  double cpu_seconds() const {
    std::ifstream in(fmt::format("/proc/{}/stat", pid_));
    std::string s((std::istreambuf_iterator<char>(in)), {});
    const auto close = s.rfind(')');
    std::istringstream rest(s.substr(close + 2));
    std::string field;
    double ut = 0, st = 0;
    for (int i = 3; i <= 15; ++i) {
      rest >> field;
      if (i == 14) ut = std::stod(field);
      if (i == 15) st = std::stod(field);
    }
    return (ut + st) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  // "VmRSS" or "VmHWM" in MiB.
  double memory_mib(const char* key) const {
    std::ifstream in(fmt::format("/proc/{}/status", pid_));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(key, 0) == 0) return std::stod(line.substr(line.find(':') + 1)) / 1024.0;
    }
    return 0.0;
  }

 private:
  const Options& o_;
  std::string db_url_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// ---- One client: its jobs, its connection, its trials.

struct Journal {
  std::mutex mutex;  // guards out
  std::ofstream out;
  void write(const std::string& line) {
    std::lock_guard l(mutex);
    out << line << '\n';
    out.flush();
  }
};

class LoadClient {
 public:
  LoadClient(std::string url, Stats& stats, const Options& o, Journal* journal)
      : url_(std::move(url)),
        http_(url_, http_options()),
        stats_(stats),
        o_(o),
        journal_(journal) {}

  static zeus::http::ClientOptions http_options() {
    zeus::http::ClientOptions h;
    h.connect_timeout = zeus::Seconds(2.0);
    h.request_timeout = zeus::Seconds(10.0);
    return h;
  }

  // Sends until answered; a transport error is counted and retried after
  // 0.2 s (the crash mode relies on this). `timed` adds to the window's figures.
  zeus::http::Response send(zeus::http::Method m, const std::string& target,
                            const std::string& body, const zeus::http::Headers& h,
                            std::vector<double>* latency, bool timed) {
    for (;;) {
      const auto t0 = steady_clock::now();
      try {
        auto r = http_.request(m, target, body, h);
        const double ms =
            std::chrono::duration<double, std::milli>(steady_clock::now() - t0).count();
        if (timed) {
          ++stats_.requests;
          if (r.status >= 500) ++stats_.server_errors;
          if (latency != nullptr) latency->push_back(ms);
        }
        return r;
      } catch (const zeus::Error&) {
        ++stats_.transport_errors;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
  }

  bool register_jobs(const std::vector<int>& jobs) {
    for (int j : jobs) {
      const auto r =
          send(zeus::http::Method::kPost, "/jobs", workload_spec(j).dump(), {}, nullptr, false);
      if (r.status != 200 && r.status != 201) {
        fmt::print(stderr, "registering {} failed: {} {}\n", job_id(j), r.status, r.body);
        return false;
      }
    }
    return true;
  }

  // One trial of job j with ordinal k; true when it ended with a final report.
  bool trial(int j, std::int64_t k, bool timed) {
    zeus::http::Headers h;
    if (o_.keys) h.set("Idempotency-Key", fmt::format("{}-{}-{}", job_id(j), k, key_salt_));
    auto r = send(zeus::http::Method::kGet, "/jobs/batch_size?job_id=" + job_id(j), "", h, &get_ms_,
                  timed);
    if (r.status != 200) {
      ++stats_.other_errors;
      return false;
    }
    const auto t = json::parse(r.body);
    const int b = t["batch_size"];
    const std::int64_t n = t["trial_number"];
    if (journal_ != nullptr) journal_->write(fmt::format("GET {} {} {}", job_id(j), n, b));
    for (int e = 1; e <= kMaxReports; ++e) {
      const double time = e * tau(b);
      const double energy = time * power(b);
      const json report = {{"job_id", job_id(j)}, {"batch_size", b},
                           {"trial_number", n},   {"time", time},
                           {"energy", energy},    {"metric", metric(j, b, e, k)},
                           {"current_epoch", e}};
      r = send(zeus::http::Method::kPost, "/report", report.dump(), {}, &report_ms_, timed);
      if (r.status != 200) {
        ++stats_.other_errors;
        return false;
      }
      const auto a = json::parse(r.body);
      if (a["stop_train"].get<bool>()) {
        if (journal_ != nullptr) {
          journal_->write(fmt::format("FINAL {} {} {:.17g} {:.17g} {}", job_id(j), n, time, energy,
                                      a["converged"].get<bool>() ? 1 : 0));
        }
        return true;
      }
    }
    return true;
  }

  void merge_latencies() {
    std::lock_guard l(stats_.mutex);
    stats_.get_ms.insert(stats_.get_ms.end(), get_ms_.begin(), get_ms_.end());
    stats_.report_ms.insert(stats_.report_ms.end(), report_ms_.begin(), report_ms_.end());
  }

 private:
  std::string url_;
  zeus::http::Client http_;
  Stats& stats_;
  const Options& o_;
  Journal* journal_;
  std::vector<double> get_ms_, report_ms_;
  unsigned key_salt_ = std::random_device{}();
};

// Registers every job with N clients, then runs `body(client, jobs)` on each.
template <class Body>
double run_clients(const std::string& url, int n, Stats& stats, const Options& o, Journal* journal,
                   Body body) {
  std::vector<std::unique_ptr<LoadClient>> clients;
  std::vector<std::vector<int>> jobs(static_cast<std::size_t>(n));
  for (int j = 0; j < kJobs; ++j) jobs[static_cast<std::size_t>(j % n)].push_back(j);
  for (int c = 0; c < n; ++c)
    clients.push_back(std::make_unique<LoadClient>(url, stats, o, journal));
  std::atomic<int> registered{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  SteadyTime start;
  std::mutex start_mutex;
  std::condition_variable start_cv;
  bool go = false;
  for (int c = 0; c < n; ++c) {
    threads.emplace_back([&, c] {
      auto& client = *clients[static_cast<std::size_t>(c)];
      if (!client.register_jobs(jobs[static_cast<std::size_t>(c)])) failed = true;
      {
        std::unique_lock l(start_mutex);
        if (++registered == n) {
          start = steady_clock::now();  // the window opens when all 64 are registered
          go = true;
          start_cv.notify_all();
        }
        start_cv.wait(l, [&] { return go; });
      }
      body(client, jobs[static_cast<std::size_t>(c)], start);
      client.merge_latencies();
    });
  }
  for (auto& t : threads) t.join();
  if (failed) throw std::runtime_error("registration failed");
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

// Cycles through the client's jobs until `duration` after `start`; k per job from k0.
auto timed_loop(double duration, std::int64_t k0, Stats& stats) {
  return [duration, k0, &stats](LoadClient& c, const std::vector<int>& jobs, SteadyTime start) {
    std::map<int, std::int64_t> k;
    for (int j : jobs) k[j] = k0;
    const auto end = start + std::chrono::duration_cast<steady_clock::duration>(
                                 std::chrono::duration<double>(duration));
    for (std::size_t i = 0; steady_clock::now() < end; ++i) {
      const int j = jobs[i % jobs.size()];
      if (c.trial(j, k[j]++, true)) ++stats.trials;
    }
  };
}

void print_row(const Options& o, const Stats& s, double elapsed, const ServerProcess* server,
               double cpu_before, double cpu_after) {
  const double rps = static_cast<double>(s.requests.load()) / elapsed;
  fmt::print("| mode, clients | req/s | p50 / p99 GET (ms) | p50 / p99 report (ms) | 5xx |\n");
  fmt::print("|---|---|---|---|---|\n");
  fmt::print("| {}, {} | {:.0f} | {:.2f} / {:.2f} | {:.2f} / {:.2f} | {} |\n", o.mode, o.clients,
             rps, percentile(s.get_ms, 50), percentile(s.get_ms, 99), percentile(s.report_ms, 50),
             percentile(s.report_ms, 99), s.server_errors.load());
  fmt::print(
      "elapsed {:.1f} s, {} requests, trials/s {:.1f}; GET p90 {:.2f} max {:.2f} ms; report p90 "
      "{:.2f} max {:.2f} ms; transport errors {}, other errors {}\n",
      elapsed, s.requests.load(), static_cast<double>(s.trials.load()) / elapsed,
      percentile(s.get_ms, 90), percentile(s.get_ms, 100), percentile(s.report_ms, 90),
      percentile(s.report_ms, 100), s.transport_errors.load(), s.other_errors.load());
  if (server != nullptr) {
    fmt::print("server CPU {:.0f}% of one core; RSS {:.1f} MiB (peak {:.1f} MiB)\n",
               100.0 * (cpu_after - cpu_before) / elapsed, server->memory_mib("VmRSS"),
               server->memory_mib("VmHWM"));
  }
}

// ---- Crash mode: verify the journal against the SQLite file.

struct Acked {
  std::map<std::pair<std::string, std::int64_t>, int> trials;  // -> batch size
  std::map<std::pair<std::string, std::int64_t>, std::tuple<double, double, int>> finals;
};

Acked read_journal(const std::string& path) {
  Acked a;
  std::ifstream in(path);
  std::string kind, id;
  std::int64_t n;
  while (in >> kind >> id >> n) {
    if (kind == "GET") {
      int b;
      in >> b;
      a.trials[{id, n}] = b;
    } else {
      double t, e;
      int c;
      in >> t >> e >> c;
      a.finals[{id, n}] = {t, e, c};
    }
  }
  return a;
}

int verify(const std::string& db_path, const std::string& journal) {
  const Acked acked = read_journal(journal);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    fmt::print(stderr, "cannot open {}\n", db_path);
    return 1;
  }
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT job_id, trial_number, batch_size, status, time, energy, converged "
                     "FROM trials",
                     -1, &st, nullptr);
  std::map<std::pair<std::string, std::int64_t>, std::tuple<int, std::string, double, double, int>>
      stored;
  while (sqlite3_step(st) == SQLITE_ROW) {
    stored[{reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
            sqlite3_column_int64(st, 1)}] = {
        sqlite3_column_int(st, 2), reinterpret_cast<const char*>(sqlite3_column_text(st, 3)),
        sqlite3_column_double(st, 4), sqlite3_column_double(st, 5), sqlite3_column_int(st, 6)};
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  int lost_trials = 0, lost_finals = 0, orphans = 0;
  for (const auto& [key, b] : acked.trials) {
    const auto it = stored.find(key);
    if (it == stored.end() || std::get<0>(it->second) != b) ++lost_trials;
  }
  for (const auto& [key, v] : acked.finals) {
    const auto it = stored.find(key);
    if (it == stored.end() || std::get<1>(it->second) != "Succeeded" ||
        std::get<2>(it->second) != std::get<0>(v) || std::get<3>(it->second) != std::get<1>(v) ||
        std::get<4>(it->second) != std::get<2>(v)) {
      ++lost_finals;
    }
  }
  for (const auto& [key, row] : stored) {
    if (!acked.trials.count(key)) ++orphans;  // a trial no client was told about
  }
  fmt::print(
      "crash check: {} acknowledged trials, {} acknowledged final reports, {} stored trials; "
      "lost trials {}, lost or changed final reports {}, orphan trials {}\n",
      acked.trials.size(), acked.finals.size(), stored.size(), lost_trials, lost_finals, orphans);
  return lost_trials == 0 && lost_finals == 0 && orphans == 0 ? 0 : 1;
}

int run_in_dir(Options& o);

// Runs in o.dir, or in a temporary directory that is removed unless the run failed.
int run(Options& o) {
  if (!o.dir.empty()) return run_in_dir(o);
  std::string t = (fs::temp_directory_path() / "bso_load_XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  o.dir = t;
  const int rc = run_in_dir(o);
  if (rc == 0) {
    fs::remove_all(t);
  } else {
    fmt::print(stderr, "bso_load: kept {} (database, journal, server log)\n", t);
  }
  return rc;
}

int run_in_dir(Options& o) {
  const bool spawn = o.url.empty();
  if (o.dir.empty()) {
    std::string t = (fs::temp_directory_path() / "bso_load_XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    o.dir = t;
  }
  const std::string db_path = o.dir + "/bso.db";
  if (spawn) fs::remove(db_path);
  ServerProcess server(o, "sqlite:///" + db_path);
  std::string url = o.url;
  if (spawn) {
    server.start(0);
    url = fmt::format("http://127.0.0.1:{}", server.port());
  }
  if (o.pin) pin_to(o.client_cpu);
  Stats stats;
  if (o.mode == "steady" || o.mode == "cold") {
    const std::int64_t k0 =
        o.k_offset >= 0 ? o.k_offset : (o.mode == "steady" ? o.warmup_trials : 0);
    if (o.mode == "steady") {
      Stats warm;
      const double t = run_clients(url, o.warmup_clients, warm, o, nullptr,
                                   [&](LoadClient& c, const std::vector<int>& jobs, SteadyTime) {
                                     for (int k = 0; k < o.warmup_trials; ++k) {
                                       for (int j : jobs) c.trial(j, k, false);
                                     }
                                   });
      fmt::print("warm-up: {} trials per job with {} clients in {:.1f} s\n", o.warmup_trials,
                 o.warmup_clients, t);
    }
    const double cpu0 = spawn ? server.cpu_seconds() : 0.0;
    const double elapsed =
        run_clients(url, o.clients, stats, o, nullptr, timed_loop(o.duration, k0, stats));
    const double cpu1 = spawn ? server.cpu_seconds() : 0.0;
    print_row(o, stats, elapsed, spawn ? &server : nullptr, cpu0, cpu1);
    if (spawn) {
      const int status = server.stop(SIGTERM);
      if (o.mode == "steady") {
        sqlite3* db = nullptr;
        sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(
            db, "SELECT kind, count(*) FROM trials WHERE trial_number <= ?1 GROUP BY kind", -1, &st,
            nullptr);
        sqlite3_bind_int(st, 1, o.warmup_trials);
        std::string kinds;
        while (sqlite3_step(st) == SQLITE_ROW) {
          kinds += fmt::format(" {} {}", reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                               sqlite3_column_int(st, 1));
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        fmt::print("warm-up trials by kind:{}\n", kinds);
      }
      fmt::print("server exit status after SIGTERM: {}\n",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return stats.server_errors.load() == 0 ? 0 : 1;
  }
  if (o.mode == "crash") {
    if (!spawn) throw std::runtime_error("crash mode starts the server itself (no --url)");
    Journal journal;
    const std::string journal_path = o.journal.empty() ? o.dir + "/journal" : o.journal;
    journal.out.open(journal_path, std::ios::trunc);
    std::atomic<bool> done{false};
    std::thread killer([&] {
      const auto t0 = steady_clock::now();
      for (double at : o.kill_at) {
        while (!done && std::chrono::duration<double>(steady_clock::now() - t0).count() < at) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (done) return;
        const int port = server.port();
        server.stop(SIGKILL);
        fmt::print("kill -9 at +{:.1f} s\n",
                   std::chrono::duration<double>(steady_clock::now() - t0).count());
        std::this_thread::sleep_for(std::chrono::duration<double>(o.restart_delay));
        server.start(port);
      }
    });
    const double elapsed =
        run_clients(url, o.clients, stats, o, &journal, timed_loop(o.duration, 0, stats));
    done = true;
    killer.join();
    server.stop(SIGTERM);
    journal.out.close();
    fmt::print(
        "crash mode: {} clients, {:.1f} s, {} requests, {} trials, {} transport errors, {} 5xx\n",
        o.clients, elapsed, stats.requests.load(), stats.trials.load(),
        stats.transport_errors.load(), stats.server_errors.load());
    return verify(db_path, journal_path);
  }
  throw std::runtime_error("unknown mode " + o.mode);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bso_load: the bso-w1 recurring-jobs load test (docs/bso-service.md)"};
  app.add_option("--mode", o.mode, "steady, cold or crash")
      ->check(CLI::IsMember({"steady", "cold", "crash"}))
      ->capture_default_str();
  app.add_option("--clients", o.clients, "Closed-loop clients (N)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--duration", o.duration, "Seconds during which new trials start")
      ->capture_default_str();
  app.add_option("--warmup-clients", o.warmup_clients)->capture_default_str();
  app.add_option("--warmup-trials", o.warmup_trials, "Trials per job before a steady run")
      ->capture_default_str();
  app.add_option("--k-offset", o.k_offset, "First trial ordinal (default: 30 steady, 0 otherwise)");
  app.add_option("--url", o.url, "Drive this server instead of starting zeus bso serve");
  app.add_option("--server-bin", o.server_bin, "The zeus binary (default: next to bso_load)");
  app.add_option("--dir", o.dir, "Working directory (database, journal, server log)");
  app.add_option("--server-cpu", o.server_cpu)->capture_default_str();
  app.add_option("--client-cpu", o.client_cpu)->capture_default_str();
  app.add_flag("!--no-pin", o.pin, "Do not pin server and clients to one core each");
  app.add_option("--kill-at", o.kill_at, "Crash mode: seconds at which the server is killed")
      ->delimiter(',');
  app.add_option("--restart-delay", o.restart_delay)->capture_default_str();
  app.add_option("--journal", o.journal, "Crash mode: the clients' journal file");
  app.add_flag("!--no-keys", o.keys, "Send no Idempotency-Key (as the Python client)");
  CLI11_PARSE(app, argc, argv);
  if (o.server_bin.empty()) {
    o.server_bin = (fs::path(argv[0]).parent_path() / "zeus").string();
  }
  if (o.pin && std::thread::hardware_concurrency() < 2) o.pin = false;
  signal(SIGPIPE, SIG_IGN);
  try {
    return run(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bso_load: {}\n", e.what());
    return 1;
  }
}
