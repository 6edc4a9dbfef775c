// Runs a built program and captures its exit code, stdout and stderr, either
// to completion (run_program) or beside the test (BackgroundProgram), so a
// test can synchronize on what the program says rather than on sleeps.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace zeus::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) with extra environment entries "NAME=value"
// (replacing inherited ones of the same name).
RunResult run_program(const std::vector<std::string>& argv,
                      const std::vector<std::string>& env = {});

// A program started beside the test; its stdout and stderr go to temporary
// files. Destroying it kills (SIGKILL) and reaps the program if it still runs.
class BackgroundProgram {
 public:
  BackgroundProgram(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
  ~BackgroundProgram();
  BackgroundProgram(const BackgroundProgram&) = delete;
  BackgroundProgram& operator=(const BackgroundProgram&) = delete;

  // Waits until `text` appears on the program's stderr. False when the
  // program exits first or `timeout` passes (a hang fails fast, not at
  // ctest's limit).
  bool wait_for_stderr(const std::string& text,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Sends a signal to the program.
  void signal(int sig);
  // Waits for the program to exit (SIGKILL after `timeout`) and returns its
  // exit code (128 + signal when a signal ended it) and output.
  RunResult finish(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // What the program has written to stderr so far.
  std::string err() const;

 private:
  bool exited_now();

  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  std::string out_path_;
  std::string err_path_;
};

// Path of a program in the build's bin directory.
std::string bin(const std::string& name);

}  // namespace zeus::testing
