// End-to-end tests of `zeus perseus serve`: upstream's environment variables,
// the API on loopback, SIGTERM, and bad configuration (exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_helpers.h"
#include "zeus/http/client.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using json = nlohmann::json;

const std::string kProfile = std::string(ZEUS_SOURCE_DIR) +
                             "/data/perseus-sosp24-emulation/stage_profile/bloom+a100_sxm_bf16.csv";

class PerseusServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "zeus_perseus_serve_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    const auto r = run_program({bin("zeus"), "perseus", "solve", "--profile", kProfile,
                                "--microbatches", "2", "--unit-time", "0.001", "--p-blocking",
                                "83.64", "--out", (dir_ / "sol").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Waits for the port file the server writes once it listens.
  int wait_for_port(const fs::path& file) {
    for (int i = 0; i < 600; ++i) {
      std::error_code ec;
      if (fs::exists(file, ec) && fs::file_size(file, ec) > 0) {
        return std::stoi(read_file(file.string()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }
  fs::path dir_;
};

TEST_F(PerseusServeCli, ServesUpstreamsApiFromItsEnvironmentAndStopsOnSigterm) {
  const auto port_file = dir_ / "port";
  // Configured the upstream way: the scheduler and its arguments in ZEUS_PFO_*.
  BackgroundProgram server(
      {bin("zeus"), "perseus", "serve", "--port", "0", "--port-file", port_file.string()},
      {"ZEUS_PFO_SCHEDULER=StragglerAware3D",
       "ZEUS_PFO_SCHEDULER_ARGS={\"solution_path\": \"" + (dir_ / "sol").string() +
           "\", \"target\": \"min-energy\"}",
       "ZEUS_PFO_DUMP_DIR=" + (dir_ / "dump").string(), "ZEUS_PFO_LOG_LEVEL=DEBUG"});
  const int port = wait_for_port(port_file);
  ASSERT_GT(port, 0) << server.err();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  http::Client c(url);
  auto r = c.post_json("/register_job", R"({"job_id": "", "pp_degree": 8, "dp_degree": 2,
      "tp_degree": 1, "world_size": 16, "job_metadata": null})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string id = json::parse(r.body).get<std::string>();
  EXPECT_THAT(id, HasSubstr("+dp2+pp8+tp1+StragglerAware3D"));
  r = c.post_json("/register_job", R"({"pp_degree": 4, "dp_degree": 1, "tp_degree": 1,
      "world_size": 4})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr("is for 8 stages but the job has 4 ranks"));

  json freqs = json::array();
  for (int f = 1410; f >= 210; f -= 15) freqs.push_back(f);
  for (int rank = 0; rank < 16; ++rank) {
    r = c.post_json("/register_rank/" + id, json{{"rank", rank},
                                                 {"dp_rank", rank % 2},
                                                 {"pp_rank", rank / 2},
                                                 {"tp_rank", 0},
                                                 {"available_frequencies", freqs}}
                                                .dump());
    ASSERT_EQ(r.status, 200) << r.body;
  }
  std::vector<std::future<json>> answers;
  for (int rank = 0; rank < 16; ++rank) {
    answers.push_back(std::async(std::launch::async, [&url, &id, rank] {
      http::Client rc(url);
      return json::parse(rc.get("/schedule/" + id + "?rank=" + std::to_string(rank)).body);
    }));
  }
  std::vector<json> got;
  for (auto& a : answers) got.push_back(a.get());
  EXPECT_EQ(got[4]["rank"], 4);
  EXPECT_EQ(got[4]["frequencies"], got[5]["frequencies"]);  // replicas of stage 2
  EXPECT_EQ(got[4]["frequencies"].size(), 4u);              // 2 microbatches x (F, B)
  EXPECT_TRUE(fs::exists(dir_ / "dump" / id / "ranks.json"));

  // A rank still waiting when the server stops gets an answer, not a reset.
  for (int rank = 0; rank < 16; ++rank) {
    ASSERT_EQ(c.post_json("/result/" + id,
                          json{{"rank", rank}, {"iter_time", {1.0}}, {"iter_energy", {1.0}}}.dump())
                  .status,
              200);
  }
  auto waiting = std::async(std::launch::async, [&url, &id] {
    http::Client rc(url);
    return rc.get("/schedule/" + id + "?rank=3");
  });
  // Only rank 3 asks for a second schedule: once the server says it waits, stop it.
  ASSERT_TRUE(server.wait_for_stderr("waits for schedule 1 (")) << server.err();
  server.signal(SIGTERM);
  const auto stopped = server.finish();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  const auto last = waiting.get();
  EXPECT_EQ(last.status, 409);
  EXPECT_THAT(last.body, HasSubstr("stopping"));
  EXPECT_THAT(stopped.err, HasSubstr("stopped"));
  EXPECT_TRUE(fs::exists(dir_ / "dump" / id / "0.prof.json"));
}

TEST_F(PerseusServeCli, BadConfigurationIsExit2WithAMessage) {
  auto r = run_program({bin("zeus"), "perseus", "serve", "--port", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no solution to serve"));
  r = run_program(
      {bin("zeus"), "perseus", "serve", "--port", "0", "--solution", (dir_ / "sol").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("choose one with --target"));
  r = run_program(
      {bin("zeus"), "perseus", "serve", "--port", "0", "--solution", (dir_ / "nope.py").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not found"));
  write_file_atomically((dir_ / "evil.py").string(), "__import__('os').system('false')\n");
  r = run_program(
      {bin("zeus"), "perseus", "serve", "--port", "0", "--solution", (dir_ / "evil.py").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("evil.py:1:1: unexpected '_'"));
  r = run_program({bin("zeus"), "perseus", "serve", "--port", "0"},
                  {"ZEUS_PFO_SCHEDULER=Nope", "ZEUS_PFO_SCHEDULER_ARGS={\"solution_path\": \"" +
                                                  (dir_ / "sol").string() + "\"}"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown scheduler 'Nope'"));
  r = run_program({bin("zeus"), "perseus", "serve", "--port", "0"},
                  {"ZEUS_PFO_SCHEDULER_ARGS={\"solution_path\": 5}"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_program({bin("zeus"), "perseus", "serve", "--port", "0", "--solution",
                   (dir_ / "sol").string(), "--target", "fastest"},
                  {"ZEUS_PFO_DUMP_DATA=maybe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("ZEUS_PFO_DUMP_DATA='maybe' is not a boolean"));
}

}  // namespace
}  // namespace zeus::testing
