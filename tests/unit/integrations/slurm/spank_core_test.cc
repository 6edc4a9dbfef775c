// The SPANK plugin's core without Slurm: its options, the record and
// AdminComment shapes, the records directory, and its HTTP client against a
// scripted server on a Unix socket.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "integrations/slurm/spank/admin_comment.h"
#include "integrations/slurm/spank/options.h"
#include "integrations/slurm/spank/records_dir.h"
#include "integrations/slurm/spank/step_record.h"
#include "integrations/slurm/spank/unix_http.h"

namespace zeus::slurm_internal {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  char templ[] = "/tmp/zeus_spank_test.XXXXXX";
  return ::mkdtemp(templ);
}

TEST(SpankOptions, DefaultsAndEveryKey) {
  std::vector<std::string> errors;
  const auto d = parse_options(0, nullptr, errors);
  EXPECT_EQ(d.socket, "/run/zeusd/zeusd.sock");
  EXPECT_EQ(d.records, "/var/lib/zeus/slurm");
  EXPECT_FALSE(d.fail_on_error);
  const char* argv[] = {"socket=/tmp/z.sock", "records=/srv/r", "on_error=fail", "timeout=0.5",
                        "scontrol=/opt/slurm/bin/scontrol"};
  const auto o = parse_options(5, argv, errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(o.socket, "/tmp/z.sock");
  EXPECT_EQ(o.records, "/srv/r");
  EXPECT_TRUE(o.fail_on_error);
  EXPECT_DOUBLE_EQ(o.timeout_s, 0.5);
  EXPECT_EQ(o.scontrol, "/opt/slurm/bin/scontrol");
}

TEST(SpankOptions, BadArgumentsKeepDefaultsAndAreNamed) {
  std::vector<std::string> errors;
  const char* argv[] = {"on_error=maybe", "timeout=-1", "sockets=/x", "verbose"};
  const auto o = parse_options(4, argv, errors);
  EXPECT_FALSE(o.fail_on_error);
  EXPECT_DOUBLE_EQ(o.timeout_s, 5.0);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_NE(errors[0].find("on_error=maybe"), std::string::npos);
  EXPECT_NE(errors[1].find("timeout='-1'"), std::string::npos);
  EXPECT_NE(errors[2].find("sockets=/x"), std::string::npos);
  EXPECT_NE(errors[3].find("'verbose'"), std::string::npos);
}

TEST(SpankRecord, StepNamesAndQueries) {
  EXPECT_EQ(step_name(0), "0");
  EXPECT_EQ(step_name(7), "7");
  EXPECT_EQ(step_name(0xfffffffbU), "batch");
  EXPECT_EQ(step_name(0xfffffffcU), "extern");
  EXPECT_EQ(step_name(0xfffffffaU), "interactive");
  StepIdentity id;
  id.job = "42";
  id.step = "batch";
  EXPECT_EQ(start_query(id, {101, 202}, "0,3"), "job=42&step=batch&pids=101,202&gpus=0,3");
  EXPECT_EQ(end_query(id), "job=42&step=batch");
  EXPECT_EQ(query_escape("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
}

TEST(SpankRecord, GpuListAcceptsOnlyIndices) {
  EXPECT_EQ(gpu_list("0"), "0");
  EXPECT_EQ(gpu_list("0,1,7"), "0,1,7");
  EXPECT_EQ(gpu_list(""), "");
  EXPECT_EQ(gpu_list("0,"), "");
  EXPECT_EQ(gpu_list(",1"), "");
  EXPECT_EQ(gpu_list("0-3"), "");
  EXPECT_EQ(gpu_list("GPU-abc"), "");
}

StepOutcome outcome() {
  StepOutcome o;
  o.id.job = "42";
  o.id.step = "0";
  o.id.uid = 1000;
  o.id.user = "alice";
  o.id.node = "n1";
  o.start_s = 100;
  o.end_s = 160;
  return o;
}

TEST(SpankRecord, CopiesZeusdsAnswer) {
  auto o = outcome();
  o.ledger = nlohmann::json::parse(
      R"({"job":"42","step":"0","start":101.5,"end":159.5,"gpu_j":1200.25,"cpu_j":33.5,)"
      R"("idle_j":80,"method":"process_utilization","gpus":["GPU-1"],"missing":["x"]})");
  const auto r = make_record(o);
  EXPECT_EQ(r["job"], "42");
  EXPECT_EQ(r["user"], "alice");
  EXPECT_EQ(r["uid"], 1000);
  EXPECT_DOUBLE_EQ(r["start"].get<double>(), 101.5);
  EXPECT_DOUBLE_EQ(r["gpu_j"].get<double>(), 1200.25);
  EXPECT_DOUBLE_EQ(r["cpu_j"].get<double>(), 33.5);
  EXPECT_DOUBLE_EQ(r["idle_j"].get<double>(), 80);
  EXPECT_EQ(r["method"], "process_utilization");
  EXPECT_EQ(r["gpus"], nlohmann::json::array({"GPU-1"}));
  EXPECT_EQ(r["missing"], nlohmann::json::array({"x"}));
  EXPECT_FALSE(r.contains("error"));
  EXPECT_FALSE(r.contains("array_job"));
}

TEST(SpankRecord, NoAnswerIsNullNeverZero) {
  auto o = outcome();
  o.error = "zeusd unreachable at the step's end: connection refused";
  o.problems = {"task pid 7 not registered with zeusd: connection refused"};
  o.id.array_job = 40;
  o.id.array_task = 2;
  const auto r = make_record(o);
  EXPECT_TRUE(r["gpu_j"].is_null());
  EXPECT_TRUE(r["cpu_j"].is_null());
  EXPECT_TRUE(r["idle_j"].is_null());
  EXPECT_EQ(r["error"], o.error);
  EXPECT_DOUBLE_EQ(r["start"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(r["end"].get<double>(), 160);
  ASSERT_EQ(r["missing"].size(), 2u);
  EXPECT_NE(r["missing"][0].get<std::string>().find("connection refused"), std::string::npos);
  EXPECT_EQ(r["array_job"], 40);
  EXPECT_EQ(r["array_task"], 2);
}

TEST(SpankRecord, AnAnswerWithoutAnEnergyMarksItMissing) {
  auto o = outcome();
  o.ledger = nlohmann::json::parse(R"({"gpu_j":"lots","cpu_j":1,"idle_j":0})");
  const auto r = make_record(o);
  EXPECT_TRUE(r["gpu_j"].is_null());
  EXPECT_EQ(r["missing"][0], "gpu_j: not in zeusd's answer");
}

TEST(SpankRecord, JobSummarySumsMeasuredStepsAndNamesTheOthers) {
  const std::vector<nlohmann::json> steps = {
      nlohmann::json::parse(
          R"({"step":"0","node":"n1","gpu_j":1.0005,"cpu_j":2,"idle_j":3,"method":"cpu_time"})"),
      nlohmann::json::parse(
          R"({"step":"1","node":"n1","gpu_j":10,"cpu_j":20,"idle_j":30,"method":"equal_split"})"),
      nlohmann::json::parse(R"({"step":"batch","node":"n1","gpu_j":null,"cpu_j":null})")};
  const auto s = job_summary(steps);
  EXPECT_DOUBLE_EQ(s["gpu_j"].get<double>(), 11.001);
  EXPECT_DOUBLE_EQ(s["cpu_j"].get<double>(), 22);
  EXPECT_DOUBLE_EQ(s["idle_j"].get<double>(), 33);
  EXPECT_EQ(s["method"], "cpu_time+equal_split");
  EXPECT_EQ(s["steps"], nlohmann::json::array({"0", "1", "batch"}));
  ASSERT_TRUE(s.contains("missing"));
  EXPECT_EQ(s["missing"][0], "step batch: energy missing (see its record)");
  EXPECT_FALSE(job_summary({steps[0]}).contains("missing"));
}

TEST(SpankAdminComment, KeepsOtherKeysAndLeavesTextAlone) {
  const nlohmann::json summary = {{"cpu_j", 5}};
  EXPECT_EQ(merge_admin_comment("", summary), R"({"zeus":{"cpu_j":5}})");
  EXPECT_EQ(merge_admin_comment("  ", summary), R"({"zeus":{"cpu_j":5}})");
  EXPECT_EQ(merge_admin_comment(R"({"site":{"project":"p1"},"zeus":{"old":1}})", summary),
            R"({"site":{"project":"p1"},"zeus":{"cpu_j":5}})");
  EXPECT_EQ(merge_admin_comment("billed to p1", summary), std::nullopt);
  EXPECT_EQ(merge_admin_comment("[1,2]", summary), std::nullopt);
}

TEST(SpankAdminComment, ReadsTheLineOfShowJob) {
  const std::string out =
      "JobId=5 JobName=wrap\n   UserId=root(0) GroupId=root(0)\n   Command=(null)\n"
      "   AdminComment={\"a\":\"x y\",\"zeus\":{}} \n   StdErr=/tmp/o\n";
  EXPECT_EQ(admin_comment_from_show_job(out), R"({"a":"x y","zeus":{}})");
  EXPECT_EQ(admin_comment_from_show_job("JobId=5 JobName=wrap\n   StdErr=/tmp/o\n"), "");
}

TEST(SpankRecordsDir, AtomicFilesReadBackPerJob) {
  const auto dir = temp_dir();
  const std::string records = (dir / "a" / "b").string();
  ensure_directory(records);
  ensure_directory(records);  // idempotent
  write_record_atomically(records, "42.0.json", R"({"job":"42","step":"0"})");
  write_record_atomically(records, "42.batch.json", R"({"job":"42","step":"batch"})");
  write_record_atomically(records, "420.0.json", R"({"job":"420","step":"0"})");
  write_record_atomically(records, "42.0.json", R"({"job":"42","step":"0","cpu_j":1})");
  std::ofstream(records + "/42.1.json") << "not json";
  const auto got = read_job_records(records, "42");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["step"], "0");
  EXPECT_EQ(got[0]["cpu_j"], 1);
  EXPECT_EQ(got[1]["step"], "batch");
  std::size_t temporaries = 0;
  for (const auto& e : fs::directory_iterator(records)) {
    const auto name = e.path().filename().string();
    if (name.starts_with(".") && name != ".lock") ++temporaries;
  }
  EXPECT_EQ(temporaries, 0u);
  EXPECT_EQ(fs::status(records + "/42.0.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  {
    DirectoryLock first(records, 1);
    EXPECT_TRUE(first.held());
    DirectoryLock second(records, 0.1);  // gives up rather than hang
    EXPECT_FALSE(second.held());
  }
  DirectoryLock again(records, 0.1);
  EXPECT_TRUE(again.held());
  fs::remove_all(dir);
}

TEST(SpankRecordsDir, AFileInTheWayIsAnError) {
  const auto dir = temp_dir();
  std::ofstream(dir / "file") << "x";
  EXPECT_THROW(ensure_directory((dir / "file").string()), std::runtime_error);
  EXPECT_THROW(write_record_atomically((dir / "missing").string(), "1.0.json", "{}"),
               std::runtime_error);
  fs::remove_all(dir);
}

// A server on a Unix socket that answers each connection with `reply` (after
// reading the request head), or holds it open without answering.
class ScriptedServer {
 public:
  ScriptedServer(std::string path, std::string reply, bool silent = false)
      : path_(std::move(path)), reply_(std::move(reply)), silent_(silent) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    ::unlink(path_.c_str());
  }
  std::string request() {
    std::lock_guard lock(mutex_);
    return request_;
  }

 private:
  void serve() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buffer[1024];
      while (got.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::read(c, buffer, sizeof(buffer));
        if (n <= 0) break;
        got.append(buffer, static_cast<std::size_t>(n));
      }
      {
        std::lock_guard lock(mutex_);
        request_ = got;
      }
      if (silent_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
      } else {
        EXPECT_EQ(::write(c, reply_.data(), reply_.size()), static_cast<ssize_t>(reply_.size()));
      }
      ::close(c);
    }
  }
  std::string path_;
  std::string reply_;
  bool silent_;
  int fd_ = -1;
  std::mutex mutex_;
  std::string request_;
  std::thread thread_;
};

TEST(SpankHttp, ContentLengthAnswer) {
  const auto dir = temp_dir();
  const std::string sock = (dir / "z.sock").string();
  ScriptedServer server(sock,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                        "11\r\n\r\n{\"pids\":1}\nEXTRA");
  const auto r = http_request(sock, "POST", "/attribution/jobs/start?job=1&step=0&pids=5", 2);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"pids\":1}\n");
  EXPECT_TRUE(server.request().starts_with(
      "POST /attribution/jobs/start?job=1&step=0&pids=5 HTTP/1.1\r\n"));
  EXPECT_NE(server.request().find("Connection: close\r\n"), std::string::npos);
  fs::remove_all(dir);
}

TEST(SpankHttp, ChunkedAndErrorAnswers) {
  const auto dir = temp_dir();
  const std::string sock = (dir / "z.sock").string();
  {
    ScriptedServer server(sock,
                          "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "5\r\n{\"err\r\nB\r\nor\":\"gone\"}\r\n0\r\n\r\n");
    const auto r = http_request(sock, "POST", "/attribution/jobs/end?job=1&step=0", 2);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.body, R"({"error":"gone"})");
  }
  {
    ScriptedServer server(sock, "SSH-2.0-OpenSSH\r\n\r\n");
    EXPECT_THROW(http_request(sock, "GET", "/", 2), HttpFailure);
  }
  {
    ScriptedServer server(sock, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
    EXPECT_THROW(http_request(sock, "GET", "/", 2), HttpFailure);
  }
  fs::remove_all(dir);
}

TEST(SpankHttp, SilentServerTimesOut) {
  const auto dir = temp_dir();
  const std::string sock = (dir / "z.sock").string();
  ScriptedServer server(sock, "", /*silent=*/true);
  const auto start = std::chrono::steady_clock::now();
  try {
    http_request(sock, "GET", "/", 0.2);
    ADD_FAILURE() << "no timeout";
  } catch (const HttpFailure& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(550));
  fs::remove_all(dir);
}

TEST(SpankHttp, NoDaemonIsAFailureNamingTheSocket) {
  const auto dir = temp_dir();
  const std::string sock = (dir / "none.sock").string();
  try {
    http_request(sock, "GET", "/", 1);
    ADD_FAILURE() << "connected to nothing";
  } catch (const HttpFailure& e) {
    EXPECT_NE(std::string(e.what()).find(sock), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::slurm_internal
