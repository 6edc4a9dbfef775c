#include "zeusd/command_override.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <chrono>

#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeusd/toml_subset.h"
#include "zeusd/trusted_file.h"

extern char** environ;

namespace zeus::zeusd {
namespace {

constexpr std::size_t kMaxOutputBytes = 64 << 10;
// libstdc++'s regex engine recurses about once per character of the text it
// searches, so one long line of output could overflow the stack of a daemon
// running as root. Each line is searched on its first kMaxMatchedLineBytes.
constexpr std::size_t kMaxMatchedLineBytes = 1024;

// Whether `pattern` matches within a line of `text` (see kMaxMatchedLineBytes).
bool matches_a_line(const std::regex& pattern, std::string_view text) {
  std::size_t start = 0;
  for (;;) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, std::min(end - start, kMaxMatchedLineBytes));
    if (std::regex_search(line.begin(), line.end(), pattern)) return true;
    if (end >= text.size()) return false;
    start = end + 1;
  }
}

std::vector<std::string> allowed_placeholders(GpuOp op) {
  switch (op) {
    case GpuOp::kSetPersistenceMode:
      return {"gpu_id", "enabled"};
    case GpuOp::kSetPowerLimit:
      return {"gpu_id", "power_limit_mw", "power_limit_w"};
    case GpuOp::kSetGpuLockedClocks:
    case GpuOp::kSetMemLockedClocks:
      return {"gpu_id", "min_clock_mhz", "max_clock_mhz"};
    case GpuOp::kResetGpuLockedClocks:
    case GpuOp::kResetMemLockedClocks:
    case GpuOp::kResetLockedClocks:
      return {"gpu_id"};
  }
  return {};
}

// Calls `visit(name)` for every {identifier} in `text`.
template <class F>
void for_each_placeholder(const std::string& text, F visit) {
  std::size_t i = 0;
  while ((i = text.find('{', i)) != std::string::npos) {
    const auto close = text.find('}', i + 1);
    if (close == std::string::npos) return;
    const std::string name = text.substr(i + 1, close - i - 1);
    const bool ident =
        !name.empty() &&
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") == std::string::npos;
    if (ident) visit(name, i, close + 1);
    i = ident ? close + 1 : i + 1;
  }
}

std::string value_of(const std::string& name, const GpuCommandArgs& a) {
  if (name == "gpu_id") return std::to_string(a.gpu_id);
  if (name == "power_limit_mw") return std::to_string(a.power_limit_mw);
  if (name == "power_limit_w") return std::to_string(a.power_limit_mw / 1000);
  if (name == "min_clock_mhz") return std::to_string(a.min_clock_mhz);
  if (name == "max_clock_mhz") return std::to_string(a.max_clock_mhz);
  if (name == "enabled") return a.enabled ? "1" : "0";
  return "{" + name + "}";
}

std::string substitute(const std::string& text, const GpuCommandArgs& args) {
  std::string out;
  std::size_t last = 0;
  for_each_placeholder(text, [&](const std::string& name, std::size_t b, std::size_t e) {
    out.append(text, last, b - last);
    out += value_of(name, args);
    last = e;
  });
  out.append(text, last, std::string::npos);
  return out;
}

std::string tail(const std::string& s) {
  const std::string t = s.size() > 400 ? "..." + s.substr(s.size() - 400) : s;
  return printable(t, 420);
}

// A started command: its process and the read ends of its stdout and stderr.
struct SpawnedCommand {
  pid_t pid = 0;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// Starts argv in its own process group, stdin /dev/null, with the default
// signal dispositions and an empty signal mask.
SpawnedCommand spawn_command(const std::vector<std::string>& argv) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw_error(ErrorCode::kIo, "pipe: " + errno_text(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw_error(ErrorCode::kIo, "pipe: " + errno_text(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw_error(ErrorCode::kIo,
                fmt::format("cannot run `{}`: {}", printable(argv[0]), errno_text(rc)));
  }
  return {pid, out_pipe[0], err_pipe[0]};
}

// Reads the command's stdout and stderr (each up to kMaxOutputBytes) until
// both close or the deadline passes (then result.timed_out); closes both.
void read_output_until(const SpawnedCommand& command,
                       std::chrono::steady_clock::time_point deadline, CommandResult& result) {
  pollfd fds[2] = {{command.stdout_fd, POLLIN, 0}, {command.stderr_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.stdout_text, &result.stderr_text};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[4096];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        if (sinks[i]->size() < kMaxOutputBytes) {
          sinks[i]->append(buf, std::min<std::size_t>(static_cast<std::size_t>(got),
                                                      kMaxOutputBytes - sinks[i]->size()));
        }
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
}

// Reaps the command (killing its process group past the deadline) and sets
// result.status.
void wait_for_exit(pid_t pid, std::chrono::steady_clock::time_point deadline,
                   CommandResult& result) {
  // The output closed; the command may still run (it closed its stdout).
  int status = 0;
  while (!result.timed_out) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      break;
    }
    ::usleep(5000);
  }
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);  // the whole group: helpers it started too
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (result.timed_out) {
    result.status = 128 + SIGKILL;
  } else if (WIFEXITED(status)) {
    result.status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.status = 128 + WTERMSIG(status);
  }
}

}  // namespace

const char* gpu_op_name(GpuOp op) {
  switch (op) {
    case GpuOp::kSetPersistenceMode:
      return "set_persistence_mode";
    case GpuOp::kSetPowerLimit:
      return "set_power_limit";
    case GpuOp::kSetGpuLockedClocks:
      return "set_gpu_locked_clocks";
    case GpuOp::kResetGpuLockedClocks:
      return "reset_gpu_locked_clocks";
    case GpuOp::kSetMemLockedClocks:
      return "set_mem_locked_clocks";
    case GpuOp::kResetMemLockedClocks:
      return "reset_mem_locked_clocks";
    case GpuOp::kResetLockedClocks:
      return "reset_locked_clocks";
  }
  return "?";
}

CommandOverrides CommandOverrides::load(const std::string& path) {
  require_only_trusted_writers(path, "GPU command override file");
  return parse(read_file(path, 1 << 20), path);
}

CommandOverrides CommandOverrides::parse(const std::string& text, const std::string& source) {
  const TomlDocument doc = parse_toml_subset(text, source);
  CommandOverrides out;
  for (const auto& [table, entries] : doc.tables) {
    std::optional<GpuOp> op;
    for (GpuOp o : kAllGpuOps) {
      if (table.name == gpu_op_name(o)) op = o;
    }
    const auto fail = [&](int line, const std::string& why) {
      throw_error(ErrorCode::kParse, fmt::format("{}:{}: {}", source, line, why));
    };
    if (!op) {
      fail(table.line, fmt::format("unknown table [{}]; the operations are set_persistence_mode, "
                                   "set_power_limit, set_gpu_locked_clocks, "
                                   "reset_gpu_locked_clocks, set_mem_locked_clocks, "
                                   "reset_mem_locked_clocks and reset_locked_clocks",
                                   printable(table.name)));
    }
    OverrideSpec spec;
    bool have_commands = false;
    for (const auto& [key, value] : entries) {
      if (key.name == "commands") {
        have_commands = true;
        if (!value.is_array() || value.array.empty()) {
          fail(key.line,
               "commands must be a non-empty array of commands, each an array of "
               "strings: commands = [[\"tool\", \"arg\"]]");
        }
        for (const auto& cmd : value.array) {
          if (!cmd.is_array() || cmd.array.empty()) {
            fail(key.line, "each command must be a non-empty array of strings (no shell is used)");
          }
          std::vector<std::string> argv;
          for (const auto& arg : cmd.array) {
            if (!arg.is_string()) fail(key.line, "command arguments must be strings");
            // Named copies: clang before 16 cannot capture structured bindings.
            const int key_line = key.line;
            const std::string& table_name = table.name;
            for_each_placeholder(arg.text, [&](const std::string& name, std::size_t, std::size_t) {
              const auto allowed = allowed_placeholders(*op);
              if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
                std::string list;
                for (const auto& a : allowed) list += (list.empty() ? "{" : ", {") + a + "}";
                fail(key_line, fmt::format("placeholder {{{}}} is not available in {}; it has {}",
                                           printable(name), table_name, list));
              }
            });
            argv.push_back(arg.text);
          }
          spec.commands.push_back(std::move(argv));
        }
      } else if (key.name == "error_pattern") {
        if (!value.is_string()) fail(key.line, "error_pattern must be a string");
        std::string pattern = value.text;
        auto flags = std::regex::ECMAScript;
        if (pattern.starts_with("(?i)")) {  // the inline flag upstream's regex crate knows
          pattern = pattern.substr(4);
          flags |= std::regex::icase;
        }
        try {
          spec.error_pattern.emplace(pattern, flags);
        } catch (const std::regex_error& e) {
          fail(key.line,
               fmt::format("error_pattern is not a valid regular expression: {}", e.what()));
        }
        spec.error_pattern_text = value.text;
      } else if (key.name == "timeout_s") {
        if (!value.is_integer() || value.integer <= 0 || value.integer > 86400) {
          fail(key.line, "timeout_s must be a whole number of seconds from 1 to 86400");
        }
        spec.timeout = Seconds(static_cast<double>(value.integer));
      } else {
        fail(key.line, fmt::format("unknown key '{}' in [{}]; use commands, error_pattern, "
                                   "timeout_s",
                                   printable(key.name), table.name));
      }
    }
    if (!have_commands) fail(table.line, fmt::format("[{}] has no commands", table.name));
    out.specs_[*op] = std::move(spec);
  }
  return out;
}

std::vector<std::string> CommandOverrides::operation_names() const {
  std::vector<std::string> out;
  for (GpuOp op : kAllGpuOps) {
    if (has(op)) out.emplace_back(gpu_op_name(op));
  }
  return out;
}

const OverrideSpec* CommandOverrides::spec(GpuOp op) const {
  const auto it = specs_.find(op);
  return it == specs_.end() ? nullptr : &it->second;
}

void CommandOverrides::run(GpuOp op, const GpuCommandArgs& args) const {
  const OverrideSpec* s = spec(op);
  if (s == nullptr) {
    throw_error(ErrorCode::kInternal, fmt::format("no override for {}", gpu_op_name(op)));
  }
  for (const auto& templ : s->commands) {
    std::vector<std::string> argv;
    for (const auto& a : templ) argv.push_back(substitute(a, args));
    std::string shown;
    for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
    const CommandResult r = run_command(argv, s->timeout);
    const auto failed = [&](const std::string& why) {
      throw_error(ErrorCode::kInternal,
                  fmt::format("GPU command override {} for GPU {} failed: `{}` {}", gpu_op_name(op),
                              args.gpu_id, printable(shown, 200), why));
    };
    if (r.timed_out)
      failed(fmt::format("did not finish within {:g} s and was killed", s->timeout.count()));
    if (r.status != 0) {
      failed(fmt::format("exited with status {}: {}", r.status,
                         tail(r.stderr_text.empty() ? r.stdout_text : r.stderr_text)));
    }
    if (s->error_pattern && (matches_a_line(*s->error_pattern, r.stdout_text) ||
                             matches_a_line(*s->error_pattern, r.stderr_text))) {
      failed(fmt::format("printed text matching error_pattern '{}': {}",
                         printable(s->error_pattern_text), tail(r.stdout_text + r.stderr_text)));
    }
  }
}

CommandResult run_command(const std::vector<std::string>& argv, Seconds timeout) {
  if (argv.empty() || argv[0].empty()) {
    throw_error(ErrorCode::kInvalidArgument, "an override command is empty");
  }
  const SpawnedCommand command = spawn_command(argv);
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  read_output_until(command, deadline, result);
  wait_for_exit(command.pid, deadline, result);
  return result;
}

}  // namespace zeus::zeusd
