// run_on_threads: no exception escapes a thread, and a thread that cannot be
// started ends the run with an error instead of std::terminate.
#include "util/thread_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <system_error>

#include "zeus/util/error.h"

namespace zeus {
namespace {

TEST(RunOnThreads, RunsEveryBodyAndJoinsThem) {
  std::atomic<int> sum{0};
  run_on_threads(
      8, [&](std::size_t i) { sum += static_cast<int>(i); }, [] {});
  EXPECT_EQ(sum.load(), 28);
}

TEST(RunOnThreads, AnExceptionInAThreadIsRethrownAfterAllAreJoined) {
  std::atomic<int> finished{0};
  try {
    run_on_threads(
        4,
        [&](std::size_t i) {
          if (i == 2) throw std::runtime_error("boom in 2");
          ++finished;
        },
        [] {});
    FAIL() << "the thread's exception was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom in 2");
  }
  EXPECT_EQ(finished.load(), 3);  // the others ran to the end and were joined
}

TEST(RunOnThreads, AThreadThatCannotStartStopsTheOthersAndIsAnError) {
  std::atomic<bool> stopped{false};
  std::atomic<int> started{0};
  const ThreadStarter fails_third = [&](std::function<void()> body) {
    if (started++ == 2) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    }
    return std::thread(std::move(body));
  };
  try {
    run_on_threads(
        5,
        [&](std::size_t) {
          while (!stopped) std::this_thread::yield();  // runs until told to stop
        },
        [&] { stopped = true; }, fails_third);
    FAIL() << "a thread that could not start went unreported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(std::string(e.what()).find("could only start 2 of 5 threads"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(stopped.load());
}

}  // namespace
}  // namespace zeus
