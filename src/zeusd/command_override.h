// GPU command overrides: an operator may replace any of zeusd's seven GPU
// control operations by external commands (vendor tools, a wrapper that
// logs), as the upstream daemon allows. The file is TOML:
//
//   [set_power_limit]
//   commands = [["nvidia-smi", "-i", "{gpu_id}", "-pl", "{power_limit_w}"]]
//   error_pattern = "(?i)error"   # optional; a match in a line of stdout or stderr
//                                 # (its first 1 KiB) fails
//   timeout_s = 60                # optional, per command; default 60
//
// Tables: set_persistence_mode, set_power_limit, set_gpu_locked_clocks,
// reset_gpu_locked_clocks, set_mem_locked_clocks, reset_mem_locked_clocks,
// reset_locked_clocks. Placeholders: {gpu_id} everywhere; {power_limit_mw} and
// {power_limit_w} (set_power_limit); {min_clock_mhz} and {max_clock_mhz} (the
// two set_*_locked_clocks); {enabled} as 1 or 0 (set_persistence_mode). A
// placeholder an operation does not have is refused when the file is loaded.
//
// We read a documented subset of TOML ourselves (tables, key = value, basic
// and literal strings, integers, arrays across lines, comments); anything
// else is a clear error naming the line.
//
// Commands run in order, without a shell, each in its own process group with
// the daemon's signal mask cleared; the first failure (exit status not 0,
// killed, the error pattern matched, or the timeout passed, after which the
// whole process group is killed) stops the sequence.
#pragma once

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::zeusd {

enum class GpuOp {
  kSetPersistenceMode,
  kSetPowerLimit,
  kSetGpuLockedClocks,
  kResetGpuLockedClocks,
  kSetMemLockedClocks,
  kResetMemLockedClocks,
  kResetLockedClocks,
};
inline constexpr GpuOp kAllGpuOps[] = {GpuOp::kSetPersistenceMode, GpuOp::kSetPowerLimit,
                                       GpuOp::kSetGpuLockedClocks, GpuOp::kResetGpuLockedClocks,
                                       GpuOp::kSetMemLockedClocks, GpuOp::kResetMemLockedClocks,
                                       GpuOp::kResetLockedClocks};
const char* gpu_op_name(GpuOp op);  // "set_power_limit", ... (the endpoint names)

// The arguments of one control operation on one GPU.
struct GpuCommandArgs {
  int gpu_id = 0;
  std::int64_t power_limit_mw = 0;
  bool enabled = false;
  std::int64_t min_clock_mhz = 0;
  std::int64_t max_clock_mhz = 0;
};

struct OverrideSpec {
  std::vector<std::vector<std::string>> commands;  // argv templates
  std::optional<std::regex> error_pattern;
  std::string error_pattern_text;
  Seconds timeout{60.0};
};

// Immutable after loading; run() may be called from any thread.
class CommandOverrides {
 public:
  CommandOverrides() = default;

  // Checks that only root or the daemon's user can change the file (see
  // require_only_trusted_writers: kNoPermission otherwise), then parses it.
  static CommandOverrides load(const std::string& path);
  // kParse naming `source` and the line for anything outside the subset,
  // an unknown table or key, or a placeholder the operation does not have.
  static CommandOverrides parse(const std::string& text, const std::string& source);

  bool empty() const { return specs_.empty(); }
  bool has(GpuOp op) const { return specs_.count(op) != 0; }
  std::vector<std::string> operation_names() const;
  const OverrideSpec* spec(GpuOp op) const;

  // Runs the commands of `op`; throws Error(kInternal) with what failed
  // (command, status, the end of its output) on the first failure.
  void run(GpuOp op, const GpuCommandArgs& args) const;

 private:
  std::map<GpuOp, OverrideSpec> specs_;
};

// The result of one command: exit status (or 128 + signal), output, timeout.
struct CommandResult {
  int status = 0;
  bool timed_out = false;
  std::string stdout_text;
  std::string stderr_text;
};
// Runs argv (argv[0] searched in PATH) without a shell in a new process
// group; kills the group after `timeout`. Output is kept up to 64 KiB each.
// kInvalidArgument for an empty argv; kIo if it cannot be started.
CommandResult run_command(const std::vector<std::string>& argv, Seconds timeout);

}  // namespace zeus::zeusd
