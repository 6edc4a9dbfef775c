// The plugin's plugstack.conf arguments (`key=value` after the plugin's path):
// socket=, records=, on_error=warn|fail, timeout=, scontrol=. Parsed without
// Slurm so the unit tests see the same code the plugin runs.
#pragma once

#include <string>
#include <vector>

namespace zeus::slurm_internal {

struct PluginOptions {
  std::string socket = "/run/zeusd/zeusd.sock";
  std::string records = "/var/lib/zeus/slurm";
  // warn: a zeusd that cannot be reached is logged and recorded, the job runs
  // on; fail: the step fails instead (for sites that bill by these numbers).
  bool fail_on_error = false;
  // Per call to zeusd; a step's start waits at most this long per task.
  double timeout_s = 5.0;
  // Where AdminComment is written through (PATH is searched for a bare name).
  std::string scontrol = "scontrol";
};

// Reads the arguments; each argument it cannot use leaves the default in
// place and adds a message to `errors` (the plugin logs them).
PluginOptions parse_options(int argc, const char* const* argv, std::vector<std::string>& errors);

}  // namespace zeus::slurm_internal
