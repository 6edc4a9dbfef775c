// Child processes and signals for commands that wrap another program
// (`zeus monitor energy -- CMD`). POSIX only.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <optional>
#include <string>
#include <vector>

#include "zeus/util/units.h"

namespace zeus {

// Blocks SIGINT, SIGTERM and SIGCHLD in the calling thread for its lifetime, so
// they can be waited for synchronously. Create it before starting any thread:
// threads inherit the mask, so the signals reach only wait() calls.
class SignalCatcher {
 public:
  SignalCatcher();
  ~SignalCatcher();
  SignalCatcher(const SignalCatcher&) = delete;
  SignalCatcher& operator=(const SignalCatcher&) = delete;

  // Waits up to `timeout` (forever when nullopt) for SIGINT, SIGTERM or
  // SIGCHLD. Returns the signal number, or 0 when the timeout passed.
  int wait(std::optional<Seconds> timeout = std::nullopt);

 private:
  sigset_t old_mask_;
};

// Starts argv[0] (searched in PATH) with the signal mask and dispositions
// restored. kInvalidArgument for an empty argv. If exec fails, the child
// prints why and exits with 127, as shells do. `quiet` sends the child's
// stdout and stderr to /dev/null.
pid_t spawn_process(const std::vector<std::string>& argv, bool quiet = false);

// Runs a spawned child to completion while `catcher` forwards SIGINT and
// SIGTERM to it. Returns its exit status, or 128 + the signal that killed it.
int wait_forwarding_signals(pid_t child, SignalCatcher& catcher);

}  // namespace zeus
