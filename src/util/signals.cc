#include "zeus/util/signals.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "zeus/util/error.h"

namespace zeus {

struct SignalRegistryAccess {
  static SignalSubscription::Kind kind(const SignalSubscription& s) { return s.kind_; }
  static void call(const SignalSubscription& s, int sig) { s.callback_(sig); }
};

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr int kMaxSignal = 64;

// Everything the signal handler touches: plain data and lock-free atomics.
// The write end of the dispatch pipe; -1 when this process has no dispatch
// thread (e.g. right after fork), in which case the handler re-raises itself.
std::atomic<int> g_pipe_write_fd{-1};
// Dispositions in place before ours, per signal number (read by the handler's
// fallback path, written under the registry mutex before the handler is set).
struct sigaction g_old_action[kMaxSignal + 1];

// The process-wide list of subscriptions. Leaked on purpose: the dispatch
// thread may run after static destructors would have destroyed it.
struct Registry {
  std::mutex mutex;  // guards every field; held while callbacks run
  std::vector<SignalSubscription*> subscriptions;
  pid_t thread_pid = 0;  // process whose dispatch thread exists
  int pipe_read_fd = -1;
  bool installed[kMaxSignal + 1] = {};
  bool fork_hook = false;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

extern "C" void zeus_signal_handler(int sig) {
  const int saved_errno = errno;
  const int fd = g_pipe_write_fd.load();
  bool queued = false;
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(sig);
    queued = ::write(fd, &byte, 1) == 1;
  }
  if (!queued && sig > 0 && sig <= kMaxSignal) {
    // No dispatch thread in this process: do not swallow the signal.
    ::sigaction(sig, &g_old_action[sig], nullptr);
    ::raise(sig);
  }
  errno = saved_errno;
}

bool handler_is_ours(int sig) {
  struct sigaction current {};
  ::sigaction(sig, nullptr, &current);
  return (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == &zeus_signal_handler;
}

// Requires the registry mutex.
void uninstall_locked(Registry& r, int sig) {
  if (!r.installed[sig]) return;
  // Someone may have installed a handler after us; theirs stays.
  if (handler_is_ours(sig)) ::sigaction(sig, &g_old_action[sig], nullptr);
  r.installed[sig] = false;
}

void dispatch(int sig) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto handles = [](const SignalSubscription* s) {
    return SignalRegistryAccess::kind(*s) == SignalSubscription::Kind::kHandle;
  };
  const bool handled = std::any_of(r.subscriptions.begin(), r.subscriptions.end(), handles);
  for (const SignalSubscription* s : r.subscriptions) {
    if (handles(s) == handled) SignalRegistryAccess::call(*s, sig);
  }
  if (handled) return;
  uninstall_locked(r, sig);
  // Process-directed, so a thread blocking the signal (or sigwait) is honored.
  ::kill(::getpid(), sig);
}

void dispatch_thread_main(int read_fd, std::shared_ptr<std::atomic<bool>> started) {
  started->store(true);
  started.reset();
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = ::read(read_fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    dispatch(byte);
  }
}

// Requires the registry mutex. Starts this process's dispatch thread if it has
// none (first subscription, or first one after a fork).
void ensure_dispatch_thread_locked(Registry& r) {
  const pid_t pid = ::getpid();
  if (r.thread_pid == pid) return;
  if (r.thread_pid != 0) {
    // A forked child: the parent's subscriptions and pipe are not ours to use.
    r.subscriptions.clear();
    if (r.pipe_read_fd >= 0) ::close(r.pipe_read_fd);
    r.pipe_read_fd = -1;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw_error(ErrorCode::kIo,
                "cannot create the pipe for handling SIGINT/SIGTERM: " + errno_text(errno));
  }
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);  // a signal flood must never block the handler
  const int old_write = g_pipe_write_fd.exchange(fds[1]);
  if (old_write >= 0) ::close(old_write);
  r.pipe_read_fd = fds[0];
  r.thread_pid = pid;
  // Wait until the thread runs: from then on it only sits in read(), holding no
  // allocator or runtime lock, so a later fork() cannot copy one held (a
  // child would deadlock on it, as sanitizer runtimes do).
  auto started = std::make_shared<std::atomic<bool>>(false);
  std::thread(dispatch_thread_main, fds[0], started).detach();
  while (!started->load()) std::this_thread::yield();
}

bool any_handle_locked(const Registry& r) {
  return std::any_of(r.subscriptions.begin(), r.subscriptions.end(), [](const auto* s) {
    return SignalRegistryAccess::kind(*s) == SignalSubscription::Kind::kHandle;
  });
}

bool was_ignored(int sig) {
  return (g_old_action[sig].sa_flags & SA_SIGINFO) == 0 && g_old_action[sig].sa_handler == SIG_IGN;
}

// `handle`: a kHandle subscriber is (or is about to be) live. It takes even a
// signal the process inherited as ignored (a background job's SIGINT), as a
// program waiting for Ctrl-C must; cleanup alone leaves an ignored signal be.
void install_locked(Registry& r, bool handle) {
  if (!r.fork_hook) {
    ::pthread_atfork(nullptr, nullptr, [] { g_pipe_write_fd.store(-1); });
    r.fork_hook = true;
  }
  ensure_dispatch_thread_locked(r);
  for (int sig : kSignals) {
    if (r.installed[sig]) continue;
    struct sigaction current {};
    ::sigaction(sig, nullptr, &current);
    if (!handle && (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) continue;
    struct sigaction ours {};
    ours.sa_handler = &zeus_signal_handler;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    g_old_action[sig] = current;
    ::sigaction(sig, &ours, nullptr);
    r.installed[sig] = true;
  }
}

}  // namespace

SignalSubscription::SignalSubscription(Kind kind, std::function<void(int)> callback)
    : kind_(kind), callback_(std::move(callback)) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  install_locked(r, kind == Kind::kHandle || any_handle_locked(r));
  r.subscriptions.push_back(this);
}

SignalSubscription::~SignalSubscription() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase(r.subscriptions, this);
  const bool handle = any_handle_locked(r);
  for (int sig : kSignals) {
    // Back to "ignored" once nobody handles a signal the process ignored.
    if (r.subscriptions.empty() || (!handle && r.installed[sig] && was_ignored(sig))) {
      uninstall_locked(r, sig);
    }
  }
}

std::size_t SignalSubscription::live_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.subscriptions.size();
}

}  // namespace zeus
