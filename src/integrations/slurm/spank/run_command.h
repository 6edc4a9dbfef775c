// Runs a program without a shell and with a deadline: the plugin's calls to
// scontrol (AdminComment) from slurmstepd, which must never hang a step.
#pragma once

#include <string>
#include <vector>

namespace zeus::slurm_internal {

struct CommandResult {
  bool exited = false;  // false: could not start, killed, or timed out
  int exit_code = -1;
  std::string output;  // stdout and stderr together, at most 256 KiB
  std::string error;   // why it did not exit normally
};

// posix_spawnp(argv[0]) with stdin from /dev/null; kills it (SIGKILL) after
// `timeout_s`.
CommandResult run_command(const std::vector<std::string>& argv, double timeout_s);

}  // namespace zeus::slurm_internal
