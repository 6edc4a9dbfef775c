// The one place the project handles SIGINT and SIGTERM. Library parts and
// programs subscribe; nothing else installs a handler for these signals.
//
// While at least one subscription lives, the process has a handler for both
// signals. A signal the process ignored stays ignored for kCleanup
// subscribers; a kHandle subscriber takes it anyway (a program waiting for
// Ctrl-C in a background job, whose SIGINT the shell ignores) and the
// ignored disposition comes back when the last kHandle subscriber goes. The handler only write()s
// the signal number to a pipe (async-signal-safe); a dispatch thread reads it and runs the
// subscribers in ordinary code, where mutexes, allocation and driver calls are fine:
//
// * If any kHandle subscription lives, the process keeps running: every
//   kHandle callback runs (forward the signal to a child, stop a loop).
// * Otherwise every kCleanup callback runs (restore GPU settings), the
//   disposition that was in place before the first subscription comes back,
//   and the signal is raised again, so the process ends (or the earlier
//   handler runs) as if the library had not been there.
//
// After a fork, the child's first subscription starts the child's own
// dispatch thread; the parent's subscriptions are not the child's. Not
// covered: SIGKILL, _exit(), crashes.
#pragma once

#include <functional>

namespace zeus {

// A live interest in SIGINT/SIGTERM; unsubscribes on destruction (after which
// its callback never runs again). Thread-safe. Callbacks run one at a time on
// the dispatch thread and must not create or destroy subscriptions.
class SignalSubscription {
 public:
  enum class Kind {
    kHandle,   // the program handles the signal and keeps running
    kCleanup,  // runs before the signal ends the process
  };
  SignalSubscription(Kind kind, std::function<void(int signal)> callback);
  ~SignalSubscription();
  SignalSubscription(const SignalSubscription&) = delete;
  SignalSubscription& operator=(const SignalSubscription&) = delete;

  // How many subscriptions the process has (tests).
  static std::size_t live_count();

 private:
  Kind kind_;
  std::function<void(int)> callback_;
  friend struct SignalRegistryAccess;
};

}  // namespace zeus
