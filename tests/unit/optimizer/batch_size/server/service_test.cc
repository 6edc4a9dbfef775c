// The service end to end over HTTP on loopback with a real SQLite file:
// status codes and bodies of zeus-inventory §4.1, the algorithm of §4.3,
// the deliberate fixes, durability across restarts.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

using http::Method;
using nlohmann::json;
using testing::call;
using ::testing::HasSubstr;
using testing::ServedBso;
using testing::TempDir;
using testing::workload_spec;

std::string sqlite_url(const TempDir& d) { return "sqlite:///" + d.path() + "/bso.db"; }

json report_body(const json& trial, double time, double energy, double metric, int epoch) {
  return {{"job_id", trial["job_id"]},
          {"batch_size", trial["batch_size"]},
          {"trial_number", trial["trial_number"]},
          {"time", time},
          {"energy", energy},
          {"metric", metric},
          {"current_epoch", epoch}};
}

TEST(BatchSizeServiceTest, RegistrationIs201Then200ThenConflict) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  auto body = call(c, Method::kPost, "/jobs", workload_spec(7), &status);
  EXPECT_EQ(status, 201);
  EXPECT_EQ(body["job_id"], "w1-007");
  EXPECT_EQ(body["mab_seed"], 7);
  call(c, Method::kPost, "/jobs", workload_spec(7), &status);
  EXPECT_EQ(status, 200);
  json other = workload_spec(7);
  other["eta_knob"] = 0.9;
  body = call(c, Method::kPost, "/jobs", other, &status);
  EXPECT_EQ(status, 409);
  EXPECT_THAT(body["message"].get<std::string>(), HasSubstr("different spec"));
  // Without a job_id the server makes one from the prefix.
  json anonymous = workload_spec(1);
  anonymous.erase("job_id");
  body = call(c, Method::kPost, "/jobs", anonymous, &status);
  EXPECT_EQ(status, 201);
  EXPECT_THAT(body["job_id"].get<std::string>(), ::testing::MatchesRegex("w1-[0-9a-f]{8}"));
}

TEST(BatchSizeServiceTest, BodiesWorkWithoutContentTypeAndBadOnesAre422) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  auto r = c.request(Method::kPost, "/jobs", workload_spec(2).dump(), [] {
    http::Headers h;
    h.set("Content-Type", "text/plain");
    return h;
  }());
  EXPECT_EQ(r.status, 201);
  for (const std::string bad : {"{", "[]", "{\"job_id_prefix\": 3}", "null", "\"x\""}) {
    r = c.request(Method::kPost, "/jobs", bad);
    EXPECT_EQ(r.status, 422) << bad;
    const auto j = json::parse(r.body);
    EXPECT_TRUE(j["message"].is_string());
    EXPECT_TRUE(j["detail"].is_array());
  }
  r = c.get("/jobs/batch_size?job_id=" + std::string(500, 'x'));
  EXPECT_EQ(r.status, 422);
}

TEST(BatchSizeServiceTest, TrialLifecycleFollowsTheReportRules) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  call(c, Method::kPost, "/jobs", workload_spec(0), &status);
  const auto t1 = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-000", nullptr, &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(t1["batch_size"], 256);  // the default first
  EXPECT_EQ(t1["trial_number"], 1);
  auto r = call(c, Method::kPost, "/report", report_body(t1, 100, 20000, 0.2, 1), &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(r, (json{{"stop_train", false},
                     {"converged", false},
                     {"message", "Stop condition not met, keep training"}}));
  r = call(c, Method::kPost, "/report", report_body(t1, 300, 60000, 0.5, 3), &status);
  EXPECT_EQ(r["stop_train"], true);
  EXPECT_EQ(r["converged"], true);
  EXPECT_EQ(r["message"], "Train succeeded");
  // A late report of another rank: the stored outcome.
  r = call(c, Method::kPost, "/report", report_body(t1, 400, 80000, 0.1, 4), &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(r["stop_train"], true);
  EXPECT_EQ(r["converged"], true);
  EXPECT_THAT(r["message"].get<std::string>(), HasSubstr("already reported"));
  // min_cost = 0.5*60000 + 0.5*300*300 = 75000; beta 2 -> bound 150000.
  const auto t2 = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-000", nullptr, &status);
  EXPECT_EQ(t2["batch_size"], 128);  // walking down
  r = call(c, Method::kPost, "/report", report_body(t2, 500, 100000, 0.1, 2), &status);
  EXPECT_EQ(r["stop_train"], false);  // 125000 J <= 150000 J
  r = call(c, Method::kPost, "/report", report_body(t2, 800, 150000, 0.6, 3), &status);
  EXPECT_EQ(r["stop_train"], true);  // 195000 J > 150000 J, although the target was reached
  EXPECT_EQ(r["converged"], false);
  EXPECT_THAT(r["message"].get<std::string>(), HasSubstr("cost upper bound"));
  // Unknown trials and jobs.
  json unknown = report_body(t2, 1, 1, 1, 1);
  unknown["trial_number"] = 99;
  call(c, Method::kPost, "/report", unknown, &status);
  EXPECT_EQ(status, 400);
  call(c, Method::kGet, "/jobs/batch_size?job_id=nope", nullptr, &status);
  EXPECT_EQ(status, 400);  // upstream's ZeusBSOValueError
}

TEST(BatchSizeServiceTest, FailedTrialIsExploredAgainAndRefusesReports) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  call(c, Method::kPost, "/jobs", workload_spec(3), &status);
  const auto t1 = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-003", nullptr, &status);
  json id = {{"job_id", "w1-003"}, {"batch_size", t1["batch_size"]}, {"trial_number", 1}};
  call(c, Method::kPatch, "/trials", id, &status);
  EXPECT_EQ(status, 200);
  call(c, Method::kPatch, "/trials", id, &status);  // again: nothing to do
  EXPECT_EQ(status, 200);
  const auto r = call(c, Method::kPost, "/report", report_body(t1, 1, 1, 1, 1), &status);
  EXPECT_EQ(status, 400);
  EXPECT_THAT(r["message"].get<std::string>(), HasSubstr("marked failed"));
  const auto t2 = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-003", nullptr, &status);
  EXPECT_EQ(t2["batch_size"], t1["batch_size"]);  // explored again
  EXPECT_EQ(t2["trial_number"], 2);
  id["trial_number"] = 77;
  call(c, Method::kPatch, "/trials", id, &status);
  EXPECT_EQ(status, 404);
}

TEST(BatchSizeServiceTest, IdempotencyKeyReturnsTheSameTrial) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  call(c, Method::kPost, "/jobs", workload_spec(4), &status);
  http::Headers h;
  h.set("Idempotency-Key", "client-1-attempt-1");
  const auto a = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-004", nullptr, &status, h);
  const auto b = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-004", nullptr, &status, h);
  EXPECT_EQ(a, b);
  const auto q =
      call(c, Method::kGet, "/jobs/batch_size?job_id=w1-004&idempotency_key=client-1-attempt-1",
           nullptr, &status);
  EXPECT_EQ(q, a);
  const auto other = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-004", nullptr, &status);
  EXPECT_EQ(other["trial_number"], 2);
}

TEST(BatchSizeServiceTest, RoundWithoutSurvivorIs409AndTheJobStaysUsable) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  json spec = workload_spec(5);
  spec["batch_sizes"] = {128, 256};
  spec["default_batch_size"] = 256;
  call(c, Method::kPost, "/jobs", spec, &status);
  // Round 1 walks down from 256, which fails, and nothing lies above it.
  const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-005", nullptr, &status);
  EXPECT_EQ(t["batch_size"], 256);
  call(c, Method::kPost, "/report", report_body(t, 100, 100, 0.1, 20), &status);
  const auto r = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-005", nullptr, &status);
  EXPECT_EQ(status, 409) << r.dump();
  EXPECT_THAT(r["message"].get<std::string>(), HasSubstr("new job_id"));
  call(c, Method::kDelete, "/jobs?job_id=w1-005", nullptr, &status);
  EXPECT_EQ(status, 200);
  call(c, Method::kDelete, "/jobs?job_id=w1-005", nullptr, &status);
  EXPECT_EQ(status, 404);
}

TEST(BatchSizeServiceTest, ZeroPruningRoundsSamplesEveryBatchSize) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  json spec = workload_spec(6);
  spec["num_pruning_rounds"] = 0;
  call(c, Method::kPost, "/jobs", spec, &status);
  std::set<int> seen;
  for (int i = 0; i < 16; ++i) {
    const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-006", nullptr, &status);
    ASSERT_EQ(status, 200);
    seen.insert(t["batch_size"].get<int>());
    call(c, Method::kPost, "/report", report_body(t, 100, 100, 0.9, 1), &status);
  }
  EXPECT_EQ(seen.size(), 8u);  // every arm explored twice
}

// Everything the clients were told survives a restart; decisions continue
// exactly as if the server had never stopped.
TEST(BatchSizeServiceTest, RestartContinuesWhereItStopped) {
  TempDir d1, d2;
  auto drive = [](http::Client& c, int from, int to, std::vector<int>& sizes) {
    int status = 0;
    for (int i = from; i < to; ++i) {
      const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-009", nullptr, &status);
      const int b = t["batch_size"];
      sizes.push_back(b);
      const double metric = (b == 16 || b == 2048) ? 0.3 : 0.6;
      call(c, Method::kPost, "/report",
           report_body(t, 100.0 * b / 64 + i, 20000.0 * (1 + (b % 7)), metric, 20), &status);
    }
  };
  std::vector<int> straight, restarted;
  {
    ServedBso s(sqlite_url(d1));
    auto c = s.client();
    int status = 0;
    call(c, Method::kPost, "/jobs", workload_spec(9), &status);
    drive(c, 0, 40, straight);
  }
  {
    auto s = std::make_unique<ServedBso>(sqlite_url(d2));
    auto c = s->client();
    int status = 0;
    call(c, Method::kPost, "/jobs", workload_spec(9), &status);
    drive(c, 0, 17, restarted);
    s.reset();
    s = std::make_unique<ServedBso>(sqlite_url(d2));
    auto c2 = s->client();
    call(c2, Method::kPost, "/jobs", workload_spec(9), &status);
    EXPECT_EQ(status, 200);
    drive(c2, 17, 40, restarted);
  }
  EXPECT_EQ(straight, restarted);
}

// Only recent finished trials stay in memory; older ones come from the file,
// before and after a restart.
TEST(BatchSizeServiceTest, OldTrialsAreAnsweredFromTheFile) {
  TempDir d;
  auto s = std::make_unique<ServedBso>(sqlite_url(d));
  auto c = s->client();
  int status = 0;
  call(c, Method::kPost, "/jobs", workload_spec(8), &status);
  json first;
  for (int i = 0; i < 45; ++i) {
    http::Headers h;
    h.set("Idempotency-Key", "key-" + std::to_string(i));
    const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status, h);
    if (i == 0) first = t;
    call(c, Method::kPost, "/report", report_body(t, 100, 100, 0.9, 20), &status);
  }
  for (int round = 0; round < 2; ++round) {
    auto cc = s->client();
    const auto r = call(cc, Method::kPost, "/report", report_body(first, 5, 5, 0.1, 1), &status);
    EXPECT_EQ(status, 200);
    EXPECT_THAT(r["message"].get<std::string>(), HasSubstr("already reported"));
    EXPECT_EQ(r["converged"], true);
    http::Headers h;
    h.set("Idempotency-Key", "key-0");
    EXPECT_EQ(call(cc, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status, h), first);
    json unknown = report_body(first, 5, 5, 0.1, 1);
    unknown["trial_number"] = 1000;
    call(cc, Method::kPost, "/report", unknown, &status);
    EXPECT_EQ(status, 400);
    s.reset();
    s = std::make_unique<ServedBso>(sqlite_url(d));  // the same from a fresh cache
  }
  // A deleted job's old trials do not come back with a new registration.
  auto c2 = s->client();
  call(c2, Method::kDelete, "/jobs?job_id=w1-008", nullptr, &status);
  EXPECT_EQ(status, 200);
  call(c2, Method::kPost, "/jobs", workload_spec(8), &status);
  EXPECT_EQ(status, 201);
  call(c2, Method::kPost, "/report", report_body(first, 5, 5, 0.1, 1), &status);
  EXPECT_EQ(status, 400);
  const auto t = call(c2, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status);
  EXPECT_EQ(t["trial_number"], 1);
}

TEST(BatchSizeServiceTest, OneServerPerSqliteFileAndNewerSchemasAreRefused) {
  TempDir d;
  {
    ServedBso s(sqlite_url(d));
    try {
      ServedBso second(sqlite_url(d));
      ADD_FAILURE() << "two servers on one SQLite file";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("PostgreSQL"));
    }
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((d.path() + "/bso.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO zeus_bso_schema VALUES (99)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    ServedBso s(sqlite_url(d));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    EXPECT_THAT(e.what(), HasSubstr("schema version 99"));
  }
  EXPECT_THROW(open_store("mysql://x"), Error);
}

// The class: unbounded resources per client. A client looping on GET
// /jobs/batch_size without reporting would grow the job's state and the
// trials table forever; past kMaxTrialsInFlight it gets 429 + Retry-After,
// and a finished trial makes room again.
TEST(BatchSizeServiceTest, TrialsInFlightPerJobAreBounded) {
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  call(c, Method::kPost, "/jobs", workload_spec(8), &status);
  ASSERT_EQ(status, 201);
  json first;
  for (std::size_t i = 0; i < kMaxTrialsInFlight; ++i) {
    const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status);
    ASSERT_EQ(status, 200) << i << ": " << t.dump();
    if (i == 0) first = t;
  }
  const auto r = c.request(Method::kGet, "/jobs/batch_size?job_id=w1-008", {}, {});
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(r.headers.get("Retry-After").value_or(""), "60");
  EXPECT_THAT(r.body, HasSubstr("64 trials handed out and not finished"));
  const json id = {{"job_id", "w1-008"},
                   {"batch_size", first["batch_size"]},
                   {"trial_number", first["trial_number"]}};
  call(c, Method::kPatch, "/trials", id, &status);  // one ends (its client died)
  ASSERT_EQ(status, 200);
  call(c, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status);
  EXPECT_EQ(status, 200);
}

// The class: jobs uncapped. Registrations beyond the limit get 503 with
// Retry-After; the count survives a restart (it is the store's), and a
// deleted job makes room.
TEST(BatchSizeServiceTest, RegisteredJobsAreCapped) {
  TempDir d;
  ServiceLimits limits;
  limits.max_jobs = 2;
  auto s = std::make_unique<ServedBso>(sqlite_url(d), limits);
  int status = 0;
  {
    auto c = s->client();
    call(c, Method::kPost, "/jobs", workload_spec(1), &status);
    ASSERT_EQ(status, 201);
    call(c, Method::kPost, "/jobs", workload_spec(2), &status);
    ASSERT_EQ(status, 201);
    call(c, Method::kPost, "/jobs", workload_spec(2), &status);
    EXPECT_EQ(status, 200) << "re-registering a job takes no new slot";
  }
  s.reset();                                               // one server per SQLite file
  s = std::make_unique<ServedBso>(sqlite_url(d), limits);  // counted from the file
  auto c = s->client();
  const auto r = c.request(Method::kPost, "/jobs", workload_spec(3).dump(), {});
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_TRUE(r.headers.get("Retry-After").has_value());
  EXPECT_THAT(r.body, HasSubstr("holds 2 jobs, its limit"));
  call(c, Method::kDelete, "/jobs?job_id=w1-001", nullptr, &status);
  ASSERT_EQ(status, 200);
  call(c, Method::kPost, "/jobs", workload_spec(3), &status);
  EXPECT_EQ(status, 201);
}

// Wire compatibility: fields a newer client (or upstream's own tests) add
// are accepted and ignored, each named once in the log; known fields are
// still checked strictly.
TEST(BatchSizeServiceTest, UnknownFieldsAreIgnoredAndNamedOnce) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  json spec = workload_spec(4);
  spec["a_field_from_the_future"] = {1, 2, 3};
  call(c, Method::kPost, "/jobs", spec, &status);
  ASSERT_EQ(status, 201);
  const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-004", nullptr, &status);
  for (int i = 0; i < 2; ++i) {
    json report = report_body(t, 1, 1, 0.1, 1 + i);
    report["error"] = false;  // upstream's tests send these two
    report["max_power"] = 300;
    call(c, Method::kPost, "/report", report, &status);
    EXPECT_EQ(status, 200);
  }
  json bad = report_body(t, 1, 1, 0.1, 3);
  bad["energy"] = "a lot";  // a known field of the wrong type still fails
  call(c, Method::kPost, "/report", bad, &status);
  EXPECT_EQ(status, 422);
  EXPECT_EQ(sink->count(log::Level::kWarn, "ignoring unknown field a_field_from_the_future"), 1u);
  EXPECT_EQ(sink->count(log::Level::kWarn, "ignoring unknown field error"), 1u) << "named once";
  EXPECT_EQ(sink->count(log::Level::kWarn, "ignoring unknown field max_power"), 1u);
}

// Database paths that cannot work are named in the user's words (the class:
// database errors that do not say what is wrong), before SQLite's "unable to
// open database file".
TEST(BatchSizeServiceTest, SqlitePathsThatCannotWorkSayWhy) {
  TempDir d;
  const auto refused = [](const std::string& url, const std::string& needle) {
    try {
      open_store(url);
      ADD_FAILURE() << "opened " << url;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_THAT(e.what(), HasSubstr(needle));
    }
  };
  std::filesystem::create_directory(d / "adir");
  refused("sqlite:///" + (d / "adir").string(), "is a directory; name a file in it");
  refused("sqlite:///" + (d / "missing/bso.db").string(), "does not exist");
  if (::geteuid() != 0) {  // root writes anywhere
    ASSERT_EQ(::chmod(d.path().c_str(), 0500), 0);
    refused(sqlite_url(d), "not writable by uid");
    ASSERT_EQ(::chmod(d.path().c_str(), 0700), 0);
  }
  EXPECT_NO_THROW(open_store(sqlite_url(d)));
}

// A PostgreSQL endpoint that accepts connections but never answers (a hung
// server, a wrong port behind a proxy) must not block start-up forever: the
// store gives up after its connect timeout. Without one this test hangs
// until ctest's timeout fails it.
TEST(BatchSizeServiceTest, APostgresEndpointThatNeverAnswersTimesOut) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);  // the kernel accepts; nobody answers
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  StoreOptions options;
  options.connect_timeout = Seconds(2.0);
  try {
    open_store(fmt::format("postgresql://zeus@127.0.0.1:{}/bso", ntohs(addr.sin_port)), options);
    ADD_FAILURE() << "connected to a server that never answers";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_THAT(e.what(), HasSubstr("waited at most 2 s"));
  }
  ::close(listener);
}

}  // namespace
}  // namespace zeus::batch_size
