#include "zeus/optimizer/gpu_settings_guard.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr int kMaxSignal = 64;

// Everything the signal handler touches: plain data and lock-free atomics.
// The write end of the restore pipe; -1 when this process has no restore
// thread (e.g. right after fork), in which case the handler re-raises itself.
std::atomic<int> g_pipe_write_fd{-1};
// Dispositions in place before ours, per signal number (read by the handler's
// fallback path, written under the registry mutex before the handler is set).
struct sigaction g_old_action[kMaxSignal + 1];

// The process-wide list of live guards and the signal machinery state. Leaked
// on purpose: atexit handlers and the restore thread may run after static
// destructors would have destroyed it.
struct Registry {
  std::mutex mutex;  // guards every field
  std::vector<GpuSettingsGuard*> guards;
  pid_t thread_pid = 0;  // process whose restore thread exists
  int pipe_read_fd = -1;
  bool installed[kMaxSignal + 1] = {};
  bool process_hooks = false;  // atexit and pthread_atfork registered
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

extern "C" void zeus_guard_signal_handler(int sig) {
  const int saved_errno = errno;
  const int fd = g_pipe_write_fd.load();
  bool queued = false;
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(sig);
    queued = ::write(fd, &byte, 1) == 1;
  }
  if (!queued && sig > 0 && sig <= kMaxSignal) {
    // No restore thread in this process: do not swallow the signal.
    ::sigaction(sig, &g_old_action[sig], nullptr);
    ::raise(sig);
  }
  errno = saved_errno;
}

bool handler_is_ours(int sig) {
  struct sigaction current {};
  ::sigaction(sig, nullptr, &current);
  return (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == &zeus_guard_signal_handler;
}

// Requires the registry mutex.
void uninstall_locked(Registry& r, int sig) {
  if (!r.installed[sig]) return;
  // Someone may have installed a handler after us; theirs stays.
  if (handler_is_ours(sig)) ::sigaction(sig, &g_old_action[sig], nullptr);
  r.installed[sig] = false;
}

void restore_thread_main(int read_fd, std::shared_ptr<std::atomic<bool>> started) {
  started->store(true);
  started.reset();
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = ::read(read_fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    const int sig = byte;
    log::warn("caught signal {}; restoring GPU settings before exiting", sig);
    GpuSettingsGuard::restore_all();
    {
      Registry& r = registry();
      std::lock_guard lock(r.mutex);
      uninstall_locked(r, sig);
    }
    // Process-directed, so a thread blocking the signal (or sigwait) is honored.
    ::kill(::getpid(), sig);
  }
}

// Requires the registry mutex. Starts this process's restore thread if it has
// none (first guard, or first guard after a fork).
void ensure_restore_thread_locked(Registry& r) {
  const pid_t pid = ::getpid();
  if (r.thread_pid == pid) return;
  if (r.thread_pid != 0) {
    // A forked child: the parent's guards and pipe are not ours to use.
    r.guards.clear();
    if (r.pipe_read_fd >= 0) ::close(r.pipe_read_fd);
    r.pipe_read_fd = -1;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw_error(ErrorCode::kIo, "cannot create the pipe for restoring GPU settings on signals");
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
  std::thread(restore_thread_main, fds[0], started).detach();
  while (!started->load()) std::this_thread::yield();
}

void install_locked(Registry& r) {
  if (!r.process_hooks) {
    std::atexit([] { GpuSettingsGuard::restore_all(); });
    ::pthread_atfork(nullptr, nullptr, [] { g_pipe_write_fd.store(-1); });
    r.process_hooks = true;
  }
  ensure_restore_thread_locked(r);
  for (int sig : kSignals) {
    if (r.installed[sig]) continue;
    struct sigaction current {};
    ::sigaction(sig, nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) continue;
    struct sigaction ours {};
    ours.sa_handler = &zeus_guard_signal_handler;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    g_old_action[sig] = current;
    ::sigaction(sig, &ours, nullptr);
    r.installed[sig] = true;
  }
}

void register_guard(GpuSettingsGuard* guard) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  install_locked(r);
  r.guards.push_back(guard);
}

void unregister_guard(GpuSettingsGuard* guard) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase(r.guards, guard);
  if (r.guards.empty()) {
    for (int sig : kSignals) uninstall_locked(r, sig);
  }
}

}  // namespace

GpuSettingsGuard::GpuSettingsGuard(std::vector<std::shared_ptr<Gpu>> gpus)
    : gpus_(std::move(gpus)) {
  for (const auto& gpu : gpus_) {
    original_limits_.push_back(gpu->power_limit());
    original_persistence_.push_back(gpu->persistence_mode());
  }
  current_ = original_limits_;
  limit_changed_.assign(gpus_.size(), false);
  persistence_changed_.assign(gpus_.size(), false);
  register_guard(this);
}

GpuSettingsGuard::~GpuSettingsGuard() {
  restore();
  unregister_guard(this);
}

bool GpuSettingsGuard::set_power_limit(Milliwatts limit) {
  std::lock_guard lock(mutex_);
  if (restored_) return false;
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (current_[k] == limit) continue;
    limit_changed_[k] = true;  // before the call: a half-done set is restored too
    gpus_[k]->set_power_limit(limit);
    current_[k] = limit;
  }
  return true;
}

bool GpuSettingsGuard::set_persistence_mode(bool enabled) {
  std::lock_guard lock(mutex_);
  if (restored_) return false;
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (original_persistence_[k] == enabled && !persistence_changed_[k]) continue;
    persistence_changed_[k] = true;
    gpus_[k]->set_persistence_mode(enabled);
  }
  return true;
}

void GpuSettingsGuard::restore() noexcept {
  std::lock_guard lock(mutex_);
  if (restored_) return;
  restored_ = true;
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (limit_changed_[k]) {
      try {
        gpus_[k]->set_power_limit(original_limits_[k]);
        current_[k] = original_limits_[k];
      } catch (const std::exception& e) {
        log::error("could not restore the power limit of GPU {} to {} W: {}", k,
                   to_watts(original_limits_[k]).value(), e.what());
      }
    }
    if (persistence_changed_[k]) {
      try {
        gpus_[k]->set_persistence_mode(original_persistence_[k]);
      } catch (const std::exception& e) {
        log::error("could not restore the persistence mode of GPU {}: {}", k, e.what());
      }
    }
  }
}

bool GpuSettingsGuard::restored() const {
  std::lock_guard lock(mutex_);
  return restored_;
}

void GpuSettingsGuard::restore_all() noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (GpuSettingsGuard* g : r.guards) g->restore();
}

std::size_t GpuSettingsGuard::live_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.guards.size();
}

}  // namespace zeus
