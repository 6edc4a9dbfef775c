#include "zeus/util/log.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace zeus::log {
namespace {

TEST(Log, CapturingSinkSeesLinesAtOrAboveTheLevel) {
  auto capture = std::make_shared<CapturingSink>();
  {
    ScopedSink scoped(capture, Level::kInfo);
    debug("hidden {}", 1);
    info("shown {}", 2);
    warn("careful {}", 3);
  }
  EXPECT_EQ(capture->count(Level::kDebug, "hidden"), 0u);
  EXPECT_EQ(capture->count(Level::kInfo, "shown 2"), 1u);
  EXPECT_EQ(capture->count(Level::kWarn, "careful 3"), 1u);
  // After the scope the previous sink is back: nothing more is captured.
  warn("after");
  EXPECT_EQ(capture->count(Level::kWarn, "after"), 0u);
}

TEST(Log, SinkSerializesConcurrentWriters) {
  auto capture = std::make_shared<CapturingSink>();
  ScopedSink scoped(capture, Level::kInfo);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 250; ++i) info("line");
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(capture->count(Level::kInfo, "line"), 1000u);
}

TEST(Log, ParseLevel) {
  EXPECT_EQ(parse_level("warning"), Level::kWarn);
  EXPECT_EQ(parse_level("off"), Level::kOff);
  EXPECT_FALSE(parse_level("verbose").has_value());
  EXPECT_STREQ(level_name(Level::kError), "error");
}

}  // namespace
}  // namespace zeus::log
