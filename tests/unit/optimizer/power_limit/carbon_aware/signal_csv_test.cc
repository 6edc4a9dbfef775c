#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "util/iso8601.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;

const std::string kData = std::string(ZEUS_SOURCE_DIR) + "/data/grid-signals/";

// The message of the Error `f` throws ("" if none), and its code.
template <class F>
std::pair<ErrorCode, std::string> error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ErrorCode::kUnknown, ""};
}

TEST(SignalCsv, GbCarbonYearIsConvertedFromKgToGrams) {
  const carbon_aware::GridSignal s =
      carbon_aware::read_signal_csv(kData + "gb-carbon-intensity-2022-hourly.csv");
  EXPECT_EQ(s.kind(), carbon_aware::SignalKind::kCarbon);
  EXPECT_EQ(s.unit(), "gCO2/kWh");
  EXPECT_EQ(s.size(), 8760u);
  EXPECT_EQ(s.resolution_s(), 3600);
  EXPECT_EQ(s.start_utc(), parse_iso8601("2022-01-01T00:00:00Z", "t"));
  EXPECT_DOUBLE_EQ(s.value(0), 72.0);  // 0.072 kg/kWh in the file
  const auto [lo, hi] = std::minmax_element(s.values().begin(), s.values().end());
  EXPECT_NEAR(*lo, 35.0, 1e-9);
  EXPECT_NEAR(*hi, 322.0, 1e-9);
}

TEST(SignalCsv, GbAgilePriceKeepsNegativeHours) {
  const carbon_aware::GridSignal s =
      carbon_aware::read_signal_csv(kData + "gb-agile-octopus-price-2022-hourly.csv");
  EXPECT_EQ(s.kind(), carbon_aware::SignalKind::kPrice);
  EXPECT_EQ(s.unit(), "GBP/kWh");
  EXPECT_EQ(s.size(), 8760u);
  EXPECT_DOUBLE_EQ(s.value(0), 0.1654);
  EXPECT_LT(*std::min_element(s.values().begin(), s.values().end()), 0.0);
}

TEST(SignalCsv, ChaseMisoTraceUsesHistAt30Minutes) {
  const carbon_aware::GridSignal s =
      carbon_aware::read_signal_csv(kData + "miso-carbon-intensity-2022-10-chase.csv");
  EXPECT_EQ(s.kind(), carbon_aware::SignalKind::kCarbon);
  EXPECT_EQ(s.size(), 167u);
  EXPECT_EQ(s.resolution_s(), 1800);
  EXPECT_EQ(format_iso8601(s.start_utc()), "2022-10-20T06:20:00Z");
  EXPECT_NEAR(s.value(0), 619.2291837783333, 1e-9);
}

TEST(SignalCsv, ElectricityMapsExportsBothColumnSets) {
  const std::string old_cols =
      "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO\xe2\x82\x82"
      "eq/kWh (direct),Carbon Intensity gCO\xe2\x82\x82"
      "eq/kWh (LCA),Low Carbon Percentage\n"
      "2023-01-01 00:00:00,DE,Germany,DE,300,400,50\n"
      "2023-01-01 01:00:00,DE,Germany,DE,310,410,50\n";
  const carbon_aware::GridSignal lca = carbon_aware::parse_signal_csv(old_cols, "em.csv");
  EXPECT_DOUBLE_EQ(lca.value(1), 410.0);
  carbon_aware::SignalCsvOptions direct;
  direct.emission_factor = "direct";
  EXPECT_DOUBLE_EQ(carbon_aware::parse_signal_csv(old_cols, "em.csv", direct).value(1), 310.0);
  const std::string new_cols =
      "Datetime (UTC),Country,Zone name,Zone id,Carbon intensity gCO\xe2\x82\x82"
      "eq/kWh (direct),Carbon intensity gCO\xe2\x82\x82"
      "eq/kWh (Life cycle),Carbon-free energy percentage (CFE%)\n"
      "2024-01-01T00:00:00.000Z,FR,France,FR,20,40,90\n"
      "2024-01-01T01:00:00.000Z,FR,France,FR,21,41,90\n";
  EXPECT_DOUBLE_EQ(carbon_aware::parse_signal_csv(new_cols, "em.csv").value(0), 40.0);
}

TEST(SignalCsv, PlainFileNeedsItsUnit) {
  const std::string plain = "timestamp,value\n2024-01-01T00:00Z,0.2\n2024-01-01T01:00Z,0.3\n";
  const auto [code, msg] = error_of([&] { carbon_aware::parse_signal_csv(plain, "p.csv"); });
  EXPECT_EQ(code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(msg, HasSubstr("does not state its unit"));
  carbon_aware::SignalCsvOptions kg;
  kg.unit = "kg/kWh";
  EXPECT_DOUBLE_EQ(carbon_aware::parse_signal_csv(plain, "p.csv", kg).value(1), 300.0);
  carbon_aware::SignalCsvOptions usd;
  usd.unit = "USD/kWh";
  const carbon_aware::GridSignal price = carbon_aware::parse_signal_csv(plain, "p.csv", usd);
  EXPECT_EQ(price.kind(), carbon_aware::SignalKind::kPrice);
  EXPECT_DOUBLE_EQ(price.value(1), 0.3);
}

TEST(SignalCsv, StatedUnitConflictingWithTheGivenOneIsRefused) {
  carbon_aware::SignalCsvOptions g;
  g.unit = "g/kWh";
  const auto [code, msg] = error_of(
      [&] { carbon_aware::read_signal_csv(kData + "gb-carbon-intensity-2022-hourly.csv", g); });
  EXPECT_EQ(code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(msg, HasSubstr("not the unit given"));
}

struct Bad {
  const char* name;
  std::string body;
  const char* message;
  const char* line;
};

TEST(SignalCsv, BadRowsNameFileAndLine) {
  const std::string head = "time,ci [g/kWh]\n";
  const Bad cases[] = {
      {"gap", head + "2024-01-01 00:00,1\n2024-01-01 01:00,2\n2024-01-01 03:00,3\n", "a gap",
       "s.csv:4"},
      {"duplicate", head + "2024-01-01 00:00,1\n2024-01-01 01:00,2\n2024-01-01 01:00,3\n",
       "duplicate", "s.csv:4"},
      {"unsorted", head + "2024-01-01 01:00,1\n2024-01-01 02:00,2\n2024-01-01 00:00,3\n",
       "sort the file", "s.csv:4"},
      {"nan", head + "2024-01-01 00:00,1\n2024-01-01 01:00,nan\n", "not a finite number",
       "s.csv:3"},
      {"negative", head + "2024-01-01 00:00,1\n2024-01-01 01:00,-4\n", "negative", "s.csv:3"},
      {"mixed offsets",
       head + "2024-03-31T00:00:00+00:00,1\n2024-03-31T01:00:00+00:00,2\n"
              "2024-03-31T03:00:00+01:00,3\n",
       "mixed offsets", "s.csv:4"},
      {"naive after offset", head + "2024-01-01T00:00Z,1\n2024-01-01 01:00,2\n", "mixed offsets",
       "s.csv:3"},
      {"bad time", head + "2024-01-01 00:00,1\nyesterday,2\n", "not a time", "s.csv:3"},
      {"one row", head + "2024-01-01 00:00,1\n", "at least two", "s.csv"},
  };
  for (const auto& c : cases) {
    const auto [code, msg] = error_of([&] { carbon_aware::parse_signal_csv(c.body, "s.csv"); });
    EXPECT_EQ(code, ErrorCode::kParse) << c.name << ": " << msg;
    EXPECT_THAT(msg, HasSubstr(c.message)) << c.name;
    EXPECT_THAT(msg, HasSubstr(c.line)) << c.name;
  }
}

TEST(SignalCsv, NegativePriceIsValid) {
  const std::string body = "time,price [GBP/kWh]\n2024-01-01 00:00,0.1\n2024-01-01 01:00,-0.05\n";
  EXPECT_DOUBLE_EQ(carbon_aware::parse_signal_csv(body, "p.csv").value(1), -0.05);
}

TEST(SignalCsv, OffsetsAreApplied) {
  std::string off;
  EXPECT_EQ(parse_iso8601("2024-01-01T01:00:00+01:00", "t", &off),
            parse_iso8601("2024-01-01T00:00:00Z", "t"));
  EXPECT_EQ(off, "+01:00");
  EXPECT_THROW(parse_iso8601("2024-02-31 00:00", "t"), Error);
}

TEST(GridSignal, IndexingNeverWraps) {
  const carbon_aware::GridSignal s(carbon_aware::SignalKind::kCarbon, "gCO2/kWh", 3600, 1800,
                                   {1, 2, 3, 4}, "x");
  EXPECT_EQ(s.index_at(3600), 0u);
  EXPECT_EQ(s.index_at(3600 + 1800 * 4 - 1), 3u);
  EXPECT_THROW(s.index_at(3600 + 1800 * 4), Error);
  EXPECT_THROW(s.index_at(3599), Error);
  const carbon_aware::GridSignal hourly = s.coarsened(2);
  EXPECT_EQ(hourly.resolution_s(), 3600);
  EXPECT_DOUBLE_EQ(hourly.value(1), 3.5);
  EXPECT_THROW(s.coarsened(3), Error);  // 4 samples are not whole groups of 3
  const carbon_aware::GridSignal w = s.periodic_extension();
  EXPECT_EQ(w.size(), 12u);
  EXPECT_EQ(w.start_utc(), 3600 - 4 * 1800);
  EXPECT_DOUBLE_EQ(w.value(w.index_at(3600)), 1.0);
}

}  // namespace
}  // namespace zeus
