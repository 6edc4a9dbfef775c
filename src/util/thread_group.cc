#include "util/thread_group.h"

#include <fmt/format.h>

#include <exception>
#include <mutex>
#include <system_error>
#include <vector>

#include "zeus/util/error.h"

namespace zeus {
namespace {

std::thread start_std_thread(std::function<void()> body) { return std::thread(std::move(body)); }

// The first exception any thread threw (later ones are dropped: one cause is
// enough to report, and they usually share it).
class FirstError {
 public:
  void keep(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!first_) first_ = std::move(e);
  }
  void rethrow() {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace

void run_on_threads(std::size_t count, const std::function<void(std::size_t)>& body,
                    const std::function<void()>& stop, const ThreadStarter& start) {
  const ThreadStarter& starter = start ? start : ThreadStarter(start_std_thread);
  FirstError error;
  std::vector<std::thread> threads;
  threads.reserve(count);
  std::string start_failure;
  for (std::size_t i = 0; i < count; ++i) {
    try {
      threads.push_back(starter([&body, &error, i] {
        try {
          body(i);
        } catch (...) {
          error.keep(std::current_exception());
        }
      }));
    } catch (const std::system_error& e) {
      start_failure = e.what();
      break;
    }
  }
  if (!start_failure.empty()) stop();
  for (auto& t : threads) t.join();
  if (!start_failure.empty()) {
    throw_error(ErrorCode::kResourceExhausted,
                fmt::format("could only start {} of {} threads ({}); ask for fewer", threads.size(),
                            count, start_failure));
  }
  error.rethrow();
}

}  // namespace zeus
