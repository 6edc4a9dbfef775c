// Runs a built program and captures its exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace zeus::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) with extra environment entries "NAME=value".
RunResult run_program(const std::vector<std::string>& argv,
                      const std::vector<std::string>& env = {});

// Path of a program in the build's bin directory.
std::string bin(const std::string& name);

}  // namespace zeus::testing
