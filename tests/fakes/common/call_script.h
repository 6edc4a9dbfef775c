// What the fake driver libraries (fake NVML, fake AMD SMI) script the same
// way: per entry point a call count, a one-shot failure, a standing failure
// and a delay; and a gauge of how many entry points run at once.
//
// CallScript is not locked itself: a fake keeps it in its state and calls it
// with its own mutex held, as its entry points do. Lookups by an entry
// point's name allocate nothing once that name has been seen, so a steady
// read path through a fake allocates nothing, like the real driver (the
// zeusd scrape benchmark counts allocations).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>

namespace zeus::testing {

// `Status` is the library's return type; a value-initialized Status is success.
template <class Status>
class CallScript {
 public:
  // Counts a call of `function`, spends its delay, and returns the failure
  // scripted for it (a one-shot failure first), or success.
  Status enter(std::string_view function) {
    if (auto it = calls_.find(function); it != calls_.end()) {
      ++it->second;
    } else {
      calls_.emplace(std::string(function), 1U);
    }
    if (auto it = delays_.find(function); it != delays_.end()) {
      std::this_thread::sleep_for(it->second);  // a slow driver call, with the fake's lock held
    }
    if (auto it = fail_next_.find(function); it != fail_next_.end()) {
      const Status status = it->second;
      fail_next_.erase(it);
      return status;
    }
    if (auto it = fail_always_.find(function); it != fail_always_.end()) return it->second;
    return Status{};
  }

  // The next call of `function` answers `status`.
  void fail_next(std::string_view function, Status status) {
    fail_next_.insert_or_assign(std::string(function), status);
  }
  // Every call of `function` answers `status`; success clears it.
  void fail_always(std::string_view function, Status status) {
    set_or_clear(fail_always_, function, status, Status{});
  }
  // Every call of `function` first sleeps `delay`; zero clears it.
  void set_delay(std::string_view function, std::chrono::microseconds delay) {
    set_or_clear(delays_, function, delay, std::chrono::microseconds::zero());
  }
  unsigned count(std::string_view function) const {
    auto it = calls_.find(function);
    return it == calls_.end() ? 0 : it->second;
  }
  // Forgets counts, failures and delays.
  void clear() {
    calls_.clear();
    fail_next_.clear();
    fail_always_.clear();
    delays_.clear();
  }

 private:
  template <class Value>
  static void set_or_clear(std::map<std::string, Value, std::less<>>& map,
                           std::string_view function, Value value, Value none) {
    if (value == none) {
      if (auto it = map.find(function); it != map.end()) map.erase(it);
    } else {
      map.insert_or_assign(std::string(function), value);
    }
  }

  std::map<std::string, unsigned, std::less<>> calls_;
  std::map<std::string, Status, std::less<>> fail_next_;
  std::map<std::string, Status, std::less<>> fail_always_;
  std::map<std::string, std::chrono::microseconds, std::less<>> delays_;
};

// How many entry points run at once, and the most since reset(): a test
// checks with it that a backend serializes its driver calls. Lock-free, so a
// fake can enter it before taking its mutex and see callers overlap.
class InFlightGauge {
 public:
  class Scope {
   public:
    explicit Scope(InFlightGauge& gauge) : gauge_(gauge) {
      const int now = ++gauge_.now_;
      int most = gauge_.most_.load();
      while (now > most && !gauge_.most_.compare_exchange_weak(most, now)) {
      }
    }
    ~Scope() { --gauge_.now_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    InFlightGauge& gauge_;
  };

  int most() const { return most_.load(); }
  void reset() { most_ = 0; }

 private:
  std::atomic<int> now_{0};
  std::atomic<int> most_{0};
};

}  // namespace zeus::testing
