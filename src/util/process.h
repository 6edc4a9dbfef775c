// Child processes and signals for commands that wrap another program
// (`zeus monitor energy -- CMD`). POSIX only.
#pragma once

#include <sys/types.h>
#include <string>
#include <vector>

namespace zeus {

// Starts argv[0] (searched in PATH) with the signal mask and dispositions
// restored. kInvalidArgument for an empty argv. If exec fails, the child
// prints why and exits with 127, as shells do. `quiet` sends the child's
// stdout and stderr to /dev/null.
pid_t spawn_process(const std::vector<std::string>& argv, bool quiet = false);

// Starts argv (as spawn_process) and waits for it while SIGINT and SIGTERM
// are forwarded to it (a kHandle subscription of zeus/util/signals.h, so this
// process survives them and reports). Returns the child's exit status, or
// 128 + the signal that killed it.
int run_forwarding_signals(const std::vector<std::string>& argv);

// Waits for a child started with spawn_process; the same status as above.
int wait_for_child(pid_t child);

}  // namespace zeus
