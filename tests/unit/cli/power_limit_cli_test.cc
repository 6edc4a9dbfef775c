// `zeus power-limit` end to end (its JSON lets anyone recompute the choice),
// and the example that shows the optimizer in a training loop.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"

namespace zeus::testing {
namespace {

using nlohmann::json;

// eta*E + (1-eta)*MaxPower*T over the measurements; ties to the higher limit.
double recompute_zeus_cost_choice(const json& measurements, double eta) {
  double max_power = 0;
  for (const auto& m : measurements)
    max_power = std::max(max_power, m["power_limit_w"].get<double>());
  double best_cost = 0, best_limit = -1;
  for (const auto& m : measurements) {
    const double cost =
        eta * m["energy_j"].get<double>() + (1 - eta) * max_power * m["time_s"].get<double>();
    const double limit = m["power_limit_w"].get<double>();
    if (best_limit < 0 || cost < best_cost || (cost == best_cost && limit > best_limit)) {
      best_cost = cost;
      best_limit = limit;
    }
  }
  return best_limit;
}

TEST(PowerLimitCommand, JsonChoiceCanBeRecomputedFromTheMeasurements) {
  for (const std::string eta : {"0.2", "0.5", "0.9"}) {
    const auto r =
        run_program({bin("zeus"), "power-limit", "--selector", "zeus-cost:" + eta, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = json::parse(r.out);
    ASSERT_GE(j["measurements"].size(), 5u);
    EXPECT_DOUBLE_EQ(j["chosen_power_limit_w"].get<double>(),
                     recompute_zeus_cost_choice(j["measurements"], std::stod(eta)))
        << "eta " << eta;
  }
}

TEST(PowerLimitCommand, ProfileFileIsReusedOnTheNextRun) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("zeus_plo_profile_" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  const auto first =
      run_program({bin("zeus"), "power-limit", "--profile-path", path.string(), "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(std::filesystem::exists(path));
  const auto second =
      run_program({bin("zeus"), "power-limit", "--profile-path", path.string(), "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto a = json::parse(first.out);
  const auto b = json::parse(second.out);
  EXPECT_FALSE(a["profile_loaded"].get<bool>());
  EXPECT_TRUE(b["profile_loaded"].get<bool>());
  EXPECT_EQ(a["chosen_power_limit_w"], b["chosen_power_limit_w"]);
  std::filesystem::remove(path);
}

TEST(PowerLimitCommand, BadSelectorIsAUsageError) {
  const auto r = run_program({bin("zeus"), "power-limit", "--selector", "max-slowdown:0.5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("factor"), std::string::npos) << r.err;
}

TEST(PowerLimitCommand, FlagsThatDoNotApplyAreUsageErrors) {
  const auto with_command = run_program({bin("zeus"), "power-limit", "--", "true"});
  EXPECT_EQ(with_command.exit_code, 2);
  EXPECT_NE(with_command.err.find("nvml"), std::string::npos) << with_command.err;
  const auto contradiction =
      run_program({bin("zeus"), "power-limit", "--dry-run", "--allow-setting-changes"});
  EXPECT_EQ(contradiction.exit_code, 2) << contradiction.err;
  const auto nan_step = run_program({bin("zeus"), "power-limit", "--pl-step", "nan"});
  EXPECT_EQ(nan_step.exit_code, 2) << nan_step.err;
}

TEST(PowerLimitCommand, ProfilePathIsCheckedBeforeProfiling) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto r = run_program({bin("zeus"), "power-limit", "--profile-path", dir.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("Profiled"), std::string::npos) << "failed before the work: " << r.out;
}

TEST(PowerLimitCommand, ASpecialFileAsProfileIsRefusedBeforeProfiling) {
  const auto r = run_program({bin("zeus"), "power-limit", "--profile-path", "/dev/full"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("Profiled"), std::string::npos) << r.out;
}

TEST(PowerLimitExample, TrainsAndReportsTheChosenLimit) {
  const auto r = run_program({bin("example_power_limit")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("chose"), std::string::npos) << r.out;
  const auto bad = run_program({bin("example_power_limit"), "--gpus", "x"});
  EXPECT_EQ(bad.exit_code, 2) << "CLI11 errors exit 2 like every bad input: " << bad.err;
}

}  // namespace
}  // namespace zeus::testing
