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

// Issue 20: a job id with a newline wrote a forged line into a service's log.
TEST(Log, ControlCharactersInMessagesAreEscapedSoEveryEntryIsOneLine) {
  auto capture = std::make_shared<CapturingSink>();
  {
    ScopedSink scoped(capture, Level::kInfo);
    info("bso: registered job {}", "j1\nzeus: error: forged\r\x1b[2J");
    info("plain text, tab\tand UTF-8 \u00e9 stay");
  }
  const auto entries = capture->entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].message, "bso: registered job j1\\nzeus: error: forged\\r\\x1b[2J");
  EXPECT_EQ(entries[0].message.find('\n'), std::string::npos);
  EXPECT_EQ(entries[1].message, "plain text, tab\\tand UTF-8 \u00e9 stay");
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
