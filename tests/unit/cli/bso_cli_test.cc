// `zeus bso serve` as a process: serves, drains on SIGTERM and exits 0;
// configuration from the upstream environment names; bad configuration exits 2.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli_test_helpers.h"
#include "zeus/http/client.h"

extern char** environ;

namespace zeus::testing {
namespace {

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "zeus_bso_cli_XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp");
  return t;
}

TEST(BsoCli, ServesFromTheEnvironmentAndExitsZeroOnSigterm) {
  const std::string dir = temp_dir();
  const std::string port_file = dir + "/port";
  std::vector<std::string> args = {bin("zeus"), "bso",         "serve",  "--port",
                                   "0",         "--port-file", port_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = {"ZEUS_BSO_DATABASE_URL=sqlite:///" + dir + "/env.db",
                                          "ZEUS_BSO_LOG_LEVEL=WARNING"};
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()), 0);
  int port = 0;
  for (int i = 0; i < 500 && port == 0; ++i) {
    std::ifstream(port_file) >> port;
    if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(port, 0);
  http::Client c("http://127.0.0.1:" + std::to_string(port));
  const auto r = c.get("/jobs/batch_size?job_id=none");
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(std::filesystem::exists(dir + "/env.db"));  // ZEUS_BSO_DATABASE_URL was used
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(dir);
}

TEST(BsoCli, BadConfigurationExitsTwo) {
  auto r = run_program({bin("zeus"), "bso", "serve", "--database-url", "mysql://db/x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("postgresql://"), std::string::npos) << r.err;
  r = run_program({bin("zeus"), "bso", "serve", "--log-level", "loud", "--database-url",
                   "sqlite:///unused.db"});
  EXPECT_EQ(r.exit_code, 2);
  const std::string dir = temp_dir();
  r = run_program({bin("zeus"), "bso", "serve", "--host", "not-an-address", "--database-url",
                   "sqlite:///" + dir + "/x.db"});
  EXPECT_EQ(r.exit_code, 2);
  std::filesystem::remove_all(dir);
}

// Issue 20: configurations under which a supervisor would wait forever are
// refused before anything starts (no server left running, no database made).
TEST(BsoCli, NoListenerOrAnUnwritablePortFileExitsTwo) {
  const std::string dir = temp_dir();
  const std::string db = "sqlite:///" + dir + "/x.db";
  auto r = run_program({bin("zeus"), "bso", "serve", "--port", "-1", "--database-url", db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no listener"), std::string::npos) << r.err;
  r = run_program({bin("zeus"), "bso", "serve", "--port", "0", "--port-file", dir + "/missing/port",
                   "--database-url", db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = run_program({bin("zeus"), "bso", "serve", "--port", "-1", "--unix-socket", dir + "/s.sock",
                   "--port-file", dir + "/port", "--database-url", db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--port-file needs a TCP listener"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.db"));
  r = run_program(
      {bin("zeus"), "perseus", "serve", "--port", "0", "--port-file", dir + "/missing/port"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::testing
