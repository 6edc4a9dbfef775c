// `zeus proxy serve` and `zeus proxy bench` as programs: flags, a 502 for a
// server that is down, the summary and exit 0 on SIGTERM, usage errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_helpers.h"
#include "http/server.h"
#include "zeus/http/client.h"

namespace zeus::testing {
namespace {

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "zeus_proxy_cli_XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp");
  return t;
}

TEST(ProxyCli, ServesAnswers502ForADownServerAndSummarizesOnSigterm) {
  const std::string dir = temp_dir();
  int dead_port = 0;
  {
    http::Server s(http::Router{});
    dead_port = s.listen_tcp("127.0.0.1", 0);
  }
  BackgroundProgram proxy(
      {bin("zeus"), "proxy", "serve", "--upstream", "http://127.0.0.1:" + std::to_string(dead_port),
       "--port", "0", "--port-file", dir + "/port", "--log", dir + "/records.jsonl"},
      {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=1"});
  ASSERT_TRUE(proxy.wait_for_stderr("zeus proxy: http://")) << proxy.err();
  int port = 0;
  std::ifstream(dir + "/port") >> port;
  ASSERT_GT(port, 0);
  http::Client c("http://127.0.0.1:" + std::to_string(port));
  const auto r = c.post_json("/v1/chat/completions", R"({"model":"m","messages":[]})");
  EXPECT_EQ(r.status, 502);
  EXPECT_TRUE(nlohmann::json::parse(r.body).contains("message"));
  EXPECT_EQ(c.get("/zeus/metrics").status, 200);
  proxy.signal(SIGTERM);
  const auto done = proxy.finish();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_NE(done.err.find("1 requests (0 cancelled, 1 failed)"), std::string::npos) << done.err;
  std::ifstream log(dir + "/records.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(log, line));
  EXPECT_EQ(nlohmann::json::parse(line)["status"], 502);
  std::filesystem::remove_all(dir);
}

TEST(ProxyCli, UsageErrorsExitTwo) {
  auto r = run_program({bin("zeus"), "proxy", "serve", "--port", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--upstream"), std::string::npos) << r.err;
  r = run_program({bin("zeus"), "proxy", "serve", "--upstream", "ftp://x", "--port", "0"},
                  {"ZEUS_GPU_BACKEND=sim"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("http://"), std::string::npos) << r.err;
  r = run_program({bin("zeus"), "proxy", "bench", "--prompts", "/nonexistent/prompts.txt"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_program({bin("zeus"), "proxy", "bench", "--prompts", "x", "--concurrency", "0"});
  EXPECT_EQ(r.exit_code, 2);
  // A prompt file of invalid UTF-8: a clear error naming the line, no abort.
  const std::string dir = temp_dir();
  std::ofstream(dir + "/prompts.txt") << "hello\n\xff\xfe\n";
  r = run_program({bin("zeus"), "proxy", "bench", "--prompts", dir + "/prompts.txt", "--url",
                   "http://127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("line 2 is not valid UTF-8"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
  r = run_program({bin("zeus"), "proxy", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("bench"), std::string::npos);
}

}  // namespace
}  // namespace zeus::testing
