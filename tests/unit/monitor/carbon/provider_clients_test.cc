// The ElectricityMaps and OpenEI clients against a fake provider server on
// loopback serving recorded shapes of both APIs (fixtures/), through libcurl.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <nlohmann/json.hpp>

#include "fake_provider_server.h"
#include "zeus/monitor/carbon/electricity_maps.h"
#include "zeus/monitor/carbon/openei.h"
#include "zeus/util/error.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kHour = 3600;
constexpr std::int64_t kHistoryStart = 1714485600;  // 2024-04-30T14:00:00Z
constexpr std::int64_t kLatestHour = 1714572000;    // 2024-05-01T14:00:00Z

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

class ElectricityMapsTest : public ::testing::Test {
 protected:
  carbon::ElectricityMapsOptions options(double now = kLatestHour + 900.0) {
    carbon::ElectricityMapsOptions o;
    o.latitude = 37.87;
    o.longitude = -122.26;
    o.base_url = server_.base_url();
    o.api_token = "secret-token";
    o.timeout = Seconds(2.0);
    o.now = [now] { return now; };
    return o;
  }
  FakeProviderServer server_;
};

TEST_F(ElectricityMapsTest, SendsTheUpstreamQueryAndTheTokenHeader) {
  carbon::ElectricityMapsClient client(options());
  EXPECT_EQ(client.latest(), 321);
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].path, "/v3/carbon-intensity/latest");
  EXPECT_EQ(seen[0].query.at("lat"), "37.87");
  EXPECT_EQ(seen[0].query.at("lon"), "-122.26");
  EXPECT_EQ(seen[0].query.at("disableEstimations"), "true");
  EXPECT_EQ(seen[0].query.at("emissionFactorType"), "direct");
  EXPECT_EQ(seen[0].auth_token, "secret-token");
}

TEST_F(ElectricityMapsTest, TokenComesFromTheEnvironment) {
  setenv("ELECTRICITYMAPS_API_TOKEN", "from-env", 1);
  auto o = options();
  o.api_token = std::nullopt;
  carbon::ElectricityMapsClient(o).latest();
  unsetenv("ELECTRICITYMAPS_API_TOKEN");
  auto without = options();
  without.api_token = std::nullopt;
  carbon::ElectricityMapsClient(without).latest();
  const auto seen = server_.seen();
  EXPECT_EQ(seen[0].auth_token, "from-env");
  EXPECT_EQ(seen[1].auth_token, "") << "no key anywhere: no header (upstream sends none)";
}

TEST_F(ElectricityMapsTest, PastHoursComeFromOneHistoryFetchAndTheCurrentHourFromLatest) {
  carbon::ElectricityMapsClient client(options());
  EXPECT_EQ(client.rate(kHistoryStart), 200);
  EXPECT_EQ(client.rate(kHistoryStart + 23 * kHour), 310);  // i = 23 -> 200 + 10 * 11
  EXPECT_EQ(client.rate(kHistoryStart + 2 * kHour), 220);
  EXPECT_EQ(server_.count("/v3/carbon-intensity/history"), 1U) << "cached";
  EXPECT_EQ(client.rate(kLatestHour), 321);
  EXPECT_EQ(server_.count("/v3/carbon-intensity/latest"), 1U);
}

TEST_F(ElectricityMapsTest, HoursWithoutDataOrBeyondTheHistoryAreNotFound) {
  carbon::ElectricityMapsClient client(options());
  auto [code, message] = error_of([&] { client.rate(kHistoryStart + 5 * kHour); });
  EXPECT_EQ(code, ErrorCode::kNotFound);
  EXPECT_THAT(message, HasSubstr("2024-04-30T19:00:00Z"));
  std::tie(code, message) = error_of([&] { client.rate(kHistoryStart - 3 * kHour); });
  EXPECT_EQ(code, ErrorCode::kNotFound);
  EXPECT_THAT(message, HasSubstr("24 hours"));
  EXPECT_EQ(server_.count("/v3/carbon-intensity/history"), 1U)
      << "a history fetched after those hours ended is not fetched again for them";
}

TEST_F(ElectricityMapsTest, EmptyHistory) {
  server_.script("/v3/carbon-intensity/history",
                 {200, carbon_fixture("electricitymaps_history_empty.json"), {}});
  carbon::ElectricityMapsClient client(options());
  EXPECT_EQ(error_of([&] { client.rate(kHistoryStart); }).first, ErrorCode::kNotFound);
}

TEST_F(ElectricityMapsTest, HttpErrorsSayWhatToDo) {
  carbon::ElectricityMapsClient client(options());
  server_.script("/v3/carbon-intensity/latest", {401, R"({"message":"Invalid token"})", {}});
  auto [code, message] = error_of([&] { client.latest(); });
  EXPECT_EQ(code, ErrorCode::kNoPermission);
  EXPECT_THAT(message, HasSubstr("HTTP 401: Invalid token"));
  EXPECT_THAT(message, HasSubstr("ELECTRICITYMAPS_API_TOKEN"));

  server_.script("/v3/carbon-intensity/latest",
                 {404, carbon_fixture("electricitymaps_404.json"), {}});
  std::tie(code, message) = error_of([&] { client.latest(); });
  EXPECT_EQ(code, ErrorCode::kNotFound);
  EXPECT_THAT(message, HasSubstr("No recent data"));

  server_.script("/v3/carbon-intensity/latest", {503, "upstream down", {}});
  EXPECT_EQ(error_of([&] { client.latest(); }).first, ErrorCode::kIo);
  server_.script("/v3/carbon-intensity/latest", {429, "{}", {}});
  EXPECT_EQ(error_of([&] { client.latest(); }).first, ErrorCode::kFailedPrecondition);
  server_.script("/v3/carbon-intensity/latest", {200, "<html>not json</html>", {}});
  EXPECT_EQ(error_of([&] { client.latest(); }).first, ErrorCode::kParse);
}

TEST_F(ElectricityMapsTest, SlowProviderTimesOut) {
  auto o = options();
  o.timeout = Seconds(0.2);
  server_.script("/v3/carbon-intensity/latest", {200, "", std::chrono::milliseconds(1500)});
  EXPECT_EQ(error_of([&] { carbon::ElectricityMapsClient(o).latest(); }).first,
            ErrorCode::kTimeout);
}

TEST_F(ElectricityMapsTest, UnreachableProviderIsAnIoError) {
  auto o = options();
  o.base_url = "http://127.0.0.1:1";  // nothing listens on port 1
  const auto [code, message] = error_of([&] { carbon::ElectricityMapsClient(o).latest(); });
  EXPECT_EQ(code, ErrorCode::kIo);
  EXPECT_THAT(message, HasSubstr("127.0.0.1:1"));
}

TEST_F(ElectricityMapsTest, RefreshFetchesAtMostOncePerUpdatePeriod) {
  carbon::ElectricityMapsClient client(options());
  client.refresh(kLatestHour);
  client.refresh(kLatestHour + 1800);
  EXPECT_EQ(server_.count("/v3/carbon-intensity/history"), 1U);
  client.refresh(kLatestHour + 3600);
  EXPECT_EQ(server_.count("/v3/carbon-intensity/history"), 2U);
}

TEST(ElectricityMapsOptionsCheck, RejectsBadLocationsAndFactorTypes) {
  carbon::ElectricityMapsOptions o;
  o.latitude = 91;
  EXPECT_EQ(error_of([&] { carbon::ElectricityMapsClient{o}; }).first, ErrorCode::kInvalidArgument);
  o.latitude = 0;
  o.emission_factor_type = "total";
  EXPECT_EQ(error_of([&] { carbon::ElectricityMapsClient{o}; }).first, ErrorCode::kInvalidArgument);
}

class OpenEiTest : public ::testing::Test {
 protected:
  carbon::OpenEiOptions options() {
    carbon::OpenEiOptions o;
    o.latitude = 37.87;
    o.longitude = -122.26;
    o.label = "5a1b2c3d4e5f60718293a4b5";
    o.base_url = server_.base_url();
    o.api_key = "openei-key";
    o.utc_offset_hours = -7;  // PDT
    o.timeout = Seconds(2.0);
    return o;
  }
  FakeProviderServer server_;
};

TEST_F(OpenEiTest, PricesFollowTheScheduleByMonthDayTypeAndHour) {
  carbon::OpenEiClient client(options());
  // 2024-05-01 is a Wednesday. 23:00Z = 16:00 PDT: peak tier 1.
  EXPECT_DOUBLE_EQ(client.rate(1714604400), 0.49);
  EXPECT_DOUBLE_EQ(client.rate(1714604400 - 3600), 0.31) << "15:00 PDT: off-peak (rate, not adj)";
  // 2024-05-04 is a Saturday: the weekend schedule has no peak.
  EXPECT_DOUBLE_EQ(client.rate(1714604400 + 3 * 86400), 0.31);
  // 2024-07-03 (Wednesday) 18:00 PDT = 01:00Z on 07-04: summer super-peak, first tier's rate.
  EXPECT_DOUBLE_EQ(client.rate(1720054800), 0.61);
  EXPECT_EQ(server_.count("/utility_rates"), 1U) << "the tariff is fetched once";
  const auto q = server_.seen()[0].query;
  EXPECT_EQ(q.at("version"), "latest");
  EXPECT_EQ(q.at("format"), "json");
  EXPECT_EQ(q.at("detail"), "full");
  EXPECT_EQ(q.at("sector"), "Residential");
  EXPECT_EQ(q.at("api_key"), "openei-key");
  EXPECT_EQ(q.at("radius"), "0");
}

TEST_F(OpenEiTest, UnknownLabelAndDemandOnlyTariffs) {
  auto o = options();
  o.label = "nope";
  auto [code, message] = error_of([&] { carbon::OpenEiClient(o).rate(0); });
  EXPECT_EQ(code, ErrorCode::kNotFound);
  EXPECT_THAT(message, HasSubstr("'nope'"));
  o.label = "60ffeeddccbbaa9988776655";
  std::tie(code, message) = error_of([&] { carbon::OpenEiClient(o).rate(0); });
  EXPECT_EQ(code, ErrorCode::kParse);
  EXPECT_THAT(message, HasSubstr("energyratestructure"));
}

TEST_F(OpenEiTest, KeyFromTheEnvironmentOrAClearError) {
  auto o = options();
  o.api_key = std::nullopt;
  unsetenv("OPENEI_API_KEY");
  auto [code, message] = error_of([&] { carbon::OpenEiClient(o).rate(0); });
  EXPECT_EQ(code, ErrorCode::kNoPermission);
  EXPECT_THAT(message, HasSubstr("OPENEI_API_KEY"));
  EXPECT_EQ(server_.count("/utility_rates"), 0U) << "no request without a key";
  setenv("OPENEI_API_KEY", "env-key", 1);
  carbon::OpenEiClient(o).rate(1714604400);
  unsetenv("OPENEI_API_KEY");
  EXPECT_EQ(server_.seen().back().query.at("api_key"), "env-key");

  server_.script("/utility_rates", {403, carbon_fixture("openei_403.json"), {}});
  std::tie(code, message) = error_of([&] { carbon::OpenEiClient(options()).rate(0); });
  EXPECT_EQ(code, ErrorCode::kNoPermission);
  EXPECT_THAT(message, HasSubstr("invalid api_key"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("openei-key"))) << "keys never end up in messages";
}

TEST(OpenEiTariff, MalformedSchedulesAreRejected) {
  const std::string body = R"({"items":[{"label":"x","energyratestructure":[[{"rate":0.2}]],
    "energyweekdayschedule":[[0]],"energyweekendschedule":[]}]})";
  EXPECT_EQ(error_of([&] { carbon::parse_openei_tariff(body, "x"); }).first, ErrorCode::kParse);
  const std::string tier =
      R"({"label":"y","energyratestructure":[[{"rate":0.2}]],
    "energyweekdayschedule":)" +
      nlohmann::json(std::vector<std::vector<int>>(12, std::vector<int>(24, 1))).dump() +
      R"(,"energyweekendschedule":[]})";
  const auto [code, message] = error_of([&] { carbon::parse_openei_tariff(tier, "y"); });
  EXPECT_THAT(message, HasSubstr("tier 1"));
}

}  // namespace
}  // namespace zeus::testing
