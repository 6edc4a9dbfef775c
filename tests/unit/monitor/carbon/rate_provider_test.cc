// UTC hours, the constant and CSV providers.
#include "zeus/monitor/carbon/rate_provider.h"

#include "zeus/monitor/carbon/provider_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "util/iso8601.h"
#include "zeus/util/error.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kMay1Noon = 1714564800;  // 2024-05-01T12:00:00Z

std::string write_temp(const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("zeus_rates_" + std::to_string(getpid()) + "_XXXXXX"))
                         .string();
  const int fd = mkstemp(path.data());
  close(fd);
  std::ofstream(path) << text;
  return path;
}

template <class F>
std::pair<ErrorCode, std::string> error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  ADD_FAILURE() << "no zeus::Error";
  return {ErrorCode::kInternal, ""};
}

TEST(UtcTime, ParsesTheFormatsProvidersSend) {
  EXPECT_EQ(carbon::parse_utc_time("2024-05-01T12:00:00Z", "t"), kMay1Noon);
  EXPECT_EQ(carbon::parse_utc_time("2024-05-01T12:00:00.000Z", "t"), kMay1Noon);
  EXPECT_EQ(carbon::parse_utc_time("2024-05-01T12:00:00+00:00", "t"), kMay1Noon);
  EXPECT_EQ(carbon::parse_utc_time("2024-05-01 12:00", "t"), kMay1Noon);
  EXPECT_EQ(carbon::parse_utc_time("1714564800", "t"), kMay1Noon);
  EXPECT_EQ(format_iso8601(kMay1Noon + 59), "2024-05-01T12:00:59Z");
  EXPECT_EQ(carbon::utc_hour_of(kMay1Noon + 3599.9), kMay1Noon);
  EXPECT_EQ(carbon::utc_hour_of(kMay1Noon - 0.5), kMay1Noon - 3600);
  for (const char* bad : {"yesterday", "2024-13-01T00:00Z", "2024-05-01T12:00:00+02:00", ""}) {
    EXPECT_EQ(error_of([&] { carbon::parse_utc_time(bad, "row 3"); }).first, ErrorCode::kParse)
        << bad;
  }
}

TEST(ConstantRate, SameValueEveryHourAndRejectsNonsense) {
  carbon::ConstantRate c(250, carbon::kCarbonIntensityUnit);
  EXPECT_EQ(c.rate(kMay1Noon), 250);
  EXPECT_EQ(c.rate(0), 250);
  EXPECT_THAT(c.description(), HasSubstr("250 gCO2eq/kWh"));
  EXPECT_EQ(error_of([] { carbon::ConstantRate(-1, carbon::kPriceUnit); }).first,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([] { carbon::ConstantRate(std::nan(""), carbon::kPriceUnit); }).first,
            ErrorCode::kInvalidArgument);
}

TEST(CsvHourlyRates, ValuesByHour) {
  const std::string path = write_temp(
      "time,value\n2024-05-01T12:00:00Z,100\n2024-05-01T13:30:00Z,200.5\n1714572000,300\n");
  carbon::CsvHourlyRates rates(path, carbon::kCarbonIntensityUnit);
  EXPECT_EQ(rates.hours(), 3U);
  EXPECT_EQ(rates.rate(kMay1Noon), 100);
  EXPECT_EQ(rates.rate(kMay1Noon + 3600), 200.5) << "13:30 is floored to its hour";
  EXPECT_EQ(rates.rate(kMay1Noon + 7200), 300);
  const auto [code, message] = error_of([&] { rates.rate(kMay1Noon + 4 * 3600); });
  EXPECT_EQ(code, ErrorCode::kNotFound);
  EXPECT_THAT(message, HasSubstr("2024-05-01T16:00:00Z"));
  EXPECT_THAT(message, HasSubstr(path));
  std::filesystem::remove(path);
}

TEST(CsvHourlyRates, BadFilesSayWhereAndWhy) {
  const std::string dup = write_temp("time,value\n2024-05-01T12:00Z,1\n2024-05-01T12:59Z,2\n");
  auto [code, message] = error_of([&] { carbon::CsvHourlyRates(dup, carbon::kPriceUnit); });
  EXPECT_EQ(code, ErrorCode::kParse);
  EXPECT_THAT(message, HasSubstr(dup + ":3"));
  EXPECT_THAT(message, HasSubstr("twice"));

  const std::string negative = write_temp("time,value\n2024-05-01T12:00Z,-3\n");
  EXPECT_EQ(error_of([&] { carbon::CsvHourlyRates(negative, carbon::kPriceUnit); }).first,
            ErrorCode::kParse);
  const std::string bad_time = write_temp("time,value\nnoon,3\n");
  std::tie(code, message) = error_of([&] { carbon::CsvHourlyRates(bad_time, carbon::kPriceUnit); });
  EXPECT_THAT(message, HasSubstr("'noon' is not a time"));
  // A time with another offset is refused here (hourly rates are UTC hours),
  // though the shared parser reads it.
  const std::string offset = write_temp("time,value\n2024-05-01T12:00:00+01:00,3\n");
  std::tie(code, message) = error_of([&] { carbon::CsvHourlyRates(offset, carbon::kPriceUnit); });
  EXPECT_EQ(code, ErrorCode::kParse);
  EXPECT_THAT(message, HasSubstr("is not a UTC time (offset '+01:00')"));
  const std::string no_column = write_temp("hour,price\n1,2\n");
  EXPECT_EQ(error_of([&] { carbon::CsvHourlyRates(no_column, carbon::kPriceUnit); }).first,
            ErrorCode::kParse);
  const std::string empty = write_temp("time,value\n");
  EXPECT_EQ(error_of([&] { carbon::CsvHourlyRates(empty, carbon::kPriceUnit); }).first,
            ErrorCode::kParse);
  // A missing file is a usage error like the other bad files (exit 2), not kIo.
  EXPECT_EQ(
      error_of([] { carbon::CsvHourlyRates("/nonexistent/rates.csv", carbon::kPriceUnit); }).first,
      ErrorCode::kNotFound);
  for (const auto& p : {dup, negative, bad_time, no_column, empty}) std::filesystem::remove(p);
}

TEST(ProviderSpec, BuildsProvidersFromOneLineSpecs) {
  auto carbon = carbon::carbon_provider_from_spec("electricitymaps:37.87,-122.26,lifecycle");
  EXPECT_THAT(carbon->description(), HasSubstr("lat 37.87, lon -122.26, lifecycle"));
  EXPECT_EQ(carbon->unit(), carbon::kCarbonIntensityUnit);
  auto price = carbon::price_provider_from_spec("openei:37.87,-122.26,5a1b2c,Commercial");
  EXPECT_THAT(price->description(), HasSubstr("'5a1b2c'"));
  EXPECT_THAT(price->description(), HasSubstr("Commercial"));
  const std::string csv = write_temp("time,value\n2024-05-01T12:00Z,0.12\n");
  EXPECT_EQ(carbon::price_provider_from_spec("csv:" + csv)->rate(kMay1Noon), 0.12);
  std::filesystem::remove(csv);

  auto [code, message] = error_of([] { carbon::carbon_provider_from_spec("wattmaps:1,2"); });
  EXPECT_EQ(code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("electricitymaps:LAT,LON"));
  EXPECT_EQ(error_of([] { carbon::carbon_provider_from_spec("electricitymaps:95,2"); }).first,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([] { carbon::carbon_provider_from_spec("electricitymaps:1,2,fast"); }).first,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([] { carbon::price_provider_from_spec("openei:1,2"); }).first,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([] { carbon::price_provider_from_spec("openei:1,2,x,Farm"); }).first,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([] { carbon::price_provider_from_spec("csv:/nonexistent/p.csv"); }).first,
            ErrorCode::kNotFound);
}

}  // namespace
}  // namespace zeus::testing
