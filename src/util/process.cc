#include "util/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "zeus/util/error.h"
#include "zeus/util/signals.h"

namespace zeus {

pid_t spawn_process(const std::vector<std::string>& argv, bool quiet) {
  if (argv.empty()) throw_error(ErrorCode::kInvalidArgument, "no command given to run");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    throw_error(ErrorCode::kIo, fmt::format("cannot start '{}': {}", argv[0], errno_text(errno)));
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
    // After fork only async-signal-safe calls: no allocation, a static text.
    std::fprintf(stderr, "zeus: cannot run '%s': %s\n", args[0], ::strerrordesc_np(errno));
    _exit(127);
  }
  return pid;
}

int wait_for_child(pid_t child) {
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(child, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      throw_error(ErrorCode::kIo,
                  fmt::format("waiting for the child failed: {}", errno_text(errno)));
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  }
}

int run_forwarding_signals(const std::vector<std::string>& argv) {
  // Subscribed before the child exists, so no signal in between ends this
  // process; one that comes before the child is started is forwarded after.
  std::mutex mutex;  // guards child and pending
  pid_t child = 0;
  int pending = 0;
  SignalSubscription forward(SignalSubscription::Kind::kHandle, [&](int sig) {
    std::lock_guard lock(mutex);
    if (child > 0) {
      ::kill(child, sig);
    } else {
      pending = sig;
    }
  });
  pid_t pid;
  {
    std::lock_guard lock(mutex);
    pid = child = spawn_process(argv);
    if (pending != 0) ::kill(child, pending);
  }
  return wait_for_child(pid);
}

}  // namespace zeus
