#include "cli_test_helpers.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace zeus::testing {

std::string bin(const std::string& name) { return std::string(ZEUS_BINARY_DIR) + "/bin/" + name; }

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_file(const char* pattern) {
  std::string path = pattern;
  const int fd = mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file " + path);
  close(fd);
  return path;
}

// Starts argv with stdout and stderr redirected to the two files.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_TRUNC, 0);
  std::vector<std::string> env_strings;
  // An entry given here replaces an inherited one of the same name (getenv
  // would find the inherited one first).
  const auto overridden = [&](std::string_view inherited) {
    for (const auto& e : env) {
      const auto name = e.substr(0, e.find('=') + 1);
      if (inherited.starts_with(name)) return true;
    }
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!overridden(*e)) env_strings.emplace_back(*e);
  }
  for (const auto& e : env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  // A child of a test starts with default signal dispositions, whatever the
  // test runner inherited (a background job of a shell ignores SIGINT).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argp[0], &actions, &attr, argp.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  BackgroundProgram program(argv, env);
  return program.finish(std::chrono::minutes(5));
}

BackgroundProgram::BackgroundProgram(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env)
    : out_path_(temp_file("/tmp/zeus_cli_outXXXXXX")),
      err_path_(temp_file("/tmp/zeus_cli_errXXXXXX")) {
  pid_ = spawn(argv, env, out_path_, err_path_);
}

BackgroundProgram::~BackgroundProgram() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

bool BackgroundProgram::exited_now() {
  if (reaped_) return true;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return reaped_;
}

bool BackgroundProgram::wait_for_stderr(const std::string& text,
                                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // Read before checking for exit, so a line written just before exiting counts.
    if (err().find(text) != std::string::npos) return true;
    if (exited_now()) return err().find(text) != std::string::npos;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling the file
  }
}

void BackgroundProgram::signal(int sig) {
  if (!reaped_) ::kill(pid_, sig);
}

RunResult BackgroundProgram::finish(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exited_now()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return RunResult{exit_code_of(status_), slurp(out_path_), slurp(err_path_)};
}

std::string BackgroundProgram::err() const { return slurp(err_path_); }

}  // namespace zeus::testing
