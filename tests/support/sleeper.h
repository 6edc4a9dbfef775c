// A child process that sleeps until killed: a real process with a real /proc
// entry, for tests that need a pid a fake device can name. Killed and reaped
// when destroyed.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace zeus::testing {

class Sleeper {
 public:
  Sleeper() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~Sleeper() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
  unsigned pid() const { return static_cast<unsigned>(pid_); }

 private:
  pid_t pid_ = -1;
};

}  // namespace zeus::testing
