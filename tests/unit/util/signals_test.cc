// The one SIGINT/SIGTERM mechanism: kHandle keeps the process running,
// kCleanup runs before the signal ends it, and commands run under
// run_forwarding_signals get the signal instead of us. Each case runs in a
// forked child, so signals never reach the test runner.
#include "zeus/util/signals.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <string>

#include "util/process.h"

namespace zeus {
namespace {

struct ChildOutcome {
  int status = 0;
  std::string said;  // what the child wrote to its pipe
};

// Runs `body(fd)` in a child with a pipe to the parent; the child exits 0
// when body returns.
template <class Body>
ChildOutcome in_child(Body body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(20);  // a broken mechanism must not hang the suite
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildOutcome out;
  char buf[64];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  ::waitpid(pid, &out.status, 0);
  return out;
}

void say(int fd, const char* what) {
  [[maybe_unused]] const ssize_t n = ::write(fd, what, std::char_traits<char>::length(what));
}

TEST(Signals, HandleSubscriptionKeepsTheProcessRunning) {
  const auto r = in_child([](int fd) {
    std::atomic<int> seen{0};
    SignalSubscription cleanup(SignalSubscription::Kind::kCleanup, [&](int) { say(fd, "c"); });
    SignalSubscription handle(SignalSubscription::Kind::kHandle, [&](int sig) {
      say(fd, sig == SIGTERM ? "h" : "?");
      seen.store(1);
    });
    ::kill(::getpid(), SIGTERM);
    while (seen.load() == 0) ::usleep(1000);
    say(fd, "alive");
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << r.status;
  EXPECT_EQ(r.said, "halive") << "kHandle wins: no cleanup, the process survives";
}

TEST(Signals, CleanupRunsThenTheSignalEndsTheProcess) {
  const auto r = in_child([](int fd) {
    SignalSubscription cleanup(SignalSubscription::Kind::kCleanup, [&](int) { say(fd, "c"); });
    ::kill(::getpid(), SIGINT);
    for (;;) ::pause();
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.status;
  EXPECT_EQ(WTERMSIG(r.status), SIGINT);
  EXPECT_EQ(r.said, "c");
}

TEST(Signals, HandlerExistsOnlyWhileSubscribed) {
  auto is_default = [](int sig) {
    struct sigaction sa {};
    ::sigaction(sig, nullptr, &sa);
    return sa.sa_handler == SIG_DFL;
  };
  ASSERT_TRUE(is_default(SIGTERM));
  {
    SignalSubscription s(SignalSubscription::Kind::kCleanup, [](int) {});
    EXPECT_FALSE(is_default(SIGTERM));
    EXPECT_FALSE(is_default(SIGINT));
  }
  EXPECT_TRUE(is_default(SIGTERM));
  EXPECT_TRUE(is_default(SIGINT));
}

// The child command sends SIGTERM to us: we forward it, it dies of it, and we
// report its status (128 + 15) instead of dying.
TEST(Signals, RunForwardingSignalsPassesTheSignalToTheCommand) {
  const auto r = in_child([](int fd) {
    const int code = run_forwarding_signals({"sh", "-c", "kill -TERM $PPID; exec sleep 20"});
    say(fd, std::to_string(code).c_str());
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << r.status;
  EXPECT_EQ(r.said, "143");
}

}  // namespace
}  // namespace zeus
