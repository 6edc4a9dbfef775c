#include "util/gnuplot.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cerrno>

#include "util/process.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

// Runs gnuplot with `args`; returns its exit status (127: not installed).
int gnuplot_status(const std::vector<std::string>& args, bool quiet) {
  std::vector<std::string> argv = {"gnuplot"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = spawn_process(argv, quiet);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

bool gnuplot_has_terminal(const std::string& terminal) {
  return gnuplot_status({"-e", fmt::format("set terminal {}", terminal)}, /*quiet=*/true) == 0;
}

void run_gnuplot(const std::string& script_path) {
  const int status = gnuplot_status({script_path}, /*quiet=*/false);
  if (status == 127) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("plotting needs gnuplot on PATH (apt-get install gnuplot-nox); the "
                            "script is {}",
                            script_path));
  }
  if (status != 0) {
    throw_error(ErrorCode::kIo,
                fmt::format("gnuplot failed on {} (exit status {}); see its messages above",
                            script_path, status));
  }
}

}  // namespace zeus
