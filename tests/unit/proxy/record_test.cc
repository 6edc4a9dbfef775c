// The proxy's exit summary and metrics print names clients chose: escaped,
// so a model name cannot forge lines or reach a terminal as escapes.
#include "zeus/proxy/record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace zeus::proxy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProxySummaryText, ClientChosenModelNamesArePrintedEscaped) {
  ProxySummary s;
  s.requests = 2;
  const std::string forged = "m\nzeus proxy: 999 requests (0 cancelled, 0 failed)\x1b[2J\r\x07";
  s.models[forged] = ModelTotals{1, 1, 1, Joules(2.0)};
  s.models["plain-model"] = ModelTotals{1, 1, 1, Joules(3.0)};
  const std::string text = format_summary(s);
  // One header line, one line per model: nothing the client sent adds a line.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
  for (char raw : {'\x1b', '\r', '\x07'}) EXPECT_EQ(text.find(raw), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("m\\nzeus proxy: 999 requests"));
  EXPECT_THAT(text, HasSubstr("\\x1b[2J"));
  EXPECT_THAT(text, HasSubstr("  plain-model: 1 requests"));
  // The Prometheus label is escaped by its own rules: no raw newline either.
  const std::string metrics = render_metrics(s, 0, std::nullopt);
  EXPECT_THAT(metrics, Not(HasSubstr("m\nzeus")));
}

}  // namespace
}  // namespace zeus::proxy
