#include "zeus/util/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "zeus/util/error.h"

namespace zeus {
namespace {

sigset_t caught_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  return set;
}

}  // namespace

SignalCatcher::SignalCatcher() {
  const sigset_t set = caught_signals();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
}

SignalCatcher::~SignalCatcher() { pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }

int SignalCatcher::wait(std::optional<Seconds> timeout) {
  const sigset_t set = caught_signals();
  while (true) {
    int sig;
    if (timeout) {
      const double s = std::max(0.0, timeout->count());
      timespec ts{};
      ts.tv_sec = static_cast<time_t>(s);
      ts.tv_nsec = static_cast<long>((s - std::floor(s)) * 1e9);
      sig = sigtimedwait(&set, nullptr, &ts);
      if (sig < 0 && errno == EAGAIN) return 0;
    } else {
      sig = sigwaitinfo(&set, nullptr);
    }
    if (sig > 0) return sig;
    if (errno != EINTR) {
      throw_error(ErrorCode::kIo,
                  fmt::format("waiting for signals failed: {}", std::strerror(errno)));
    }
  }
}

pid_t spawn_process(const std::vector<std::string>& argv, bool quiet) {
  if (argv.empty()) throw_error(ErrorCode::kInvalidArgument, "no command given to run");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot start '{}': {}", argv[0], std::strerror(errno)));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (quiet) {
      const int null_fd = open("/dev/null", O_WRONLY);
      if (null_fd >= 0) {
        dup2(null_fd, 1);
        dup2(null_fd, 2);
      }
    }
    execvp(args[0], args.data());
    if (quiet) _exit(127);
    std::fprintf(stderr, "zeus: cannot run '%s': %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  return pid;
}

int wait_forwarding_signals(pid_t child, SignalCatcher& catcher) {
  while (true) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      continue;
    }
    if (done < 0 && errno != EINTR) {
      throw_error(ErrorCode::kIo,
                  fmt::format("waiting for the child failed: {}", std::strerror(errno)));
    }
    // SIGCHLD may have been consumed before the child was reaped: poll as a backstop.
    const int sig = catcher.wait(Seconds(0.2));
    if (sig == SIGINT || sig == SIGTERM) kill(child, sig);
  }
}

}  // namespace zeus
