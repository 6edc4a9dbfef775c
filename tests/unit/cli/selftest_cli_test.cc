// `zeus selftest` end to end: the verdict table, --json, a wrapped command as
// the window, and the exit code when a check fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "fakes/nvml/fake_nvml_control.h"

namespace zeus::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::vector<std::string> kSim = {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=1",
                                       "ZEUS_POWERCAP_ROOT=/nonexistent"};

std::string verdict_of(const json& j, const std::string& device, const std::string& check) {
  for (const auto& c : j["checks"]) {
    if (c["device"] == device && c["check"] == check) return c["verdict"].get<std::string>();
  }
  return "(missing)";
}

TEST(SelftestCli, TableOfVerdictsOnASimulatedGpu) {
  const auto r =
      run_program({bin("zeus"), "selftest", "--window", "0.2", "--repetitions", "5"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("SIMULATED"));
  EXPECT_THAT(r.out, HasSubstr("energy counter moves"));
  EXPECT_THAT(r.out, HasSubstr("PASS"));
  EXPECT_THAT(r.out, HasSubstr("0 fail"));
}

TEST(SelftestCli, JsonAndTheCommandAsTheWindow) {
  const auto r = run_program({bin("zeus"), "selftest", "--json", "--repetitions", "5", "--",
                              "/bin/sh", "-c", "sleep 0.3; exit 4"},
                             kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["workload_exit_code"], 4);
  EXPECT_EQ(verdict_of(j, "host", "your command"), "warn");
  EXPECT_GE(j["window_s"].get<double>(), 0.3);
  EXPECT_EQ(verdict_of(j, "GPU 0", "energy counter moves"), "pass");
  EXPECT_EQ(verdict_of(j, "GPU 0", "counter vs integrated power"), "pass");
  EXPECT_EQ(j["failed"], false);
}

TEST(SelftestCli, AStuckCounterExitsOne) {
  FakeNvml fake;
  fake.reset();
  const auto r =
      run_program({bin("zeus"), "selftest", "--json", "--window", "0.2", "--repetitions", "5"},
                  {"ZEUS_GPU_BACKEND=nvml", "ZEUS_NVML_LIBRARY=" + fake.path(),
                   "ZEUS_POWERCAP_ROOT=/nonexistent"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(verdict_of(j, "GPU 1", "energy counter moves"), "fail");
  EXPECT_EQ(j["failed"], true);
}

TEST(SelftestCli, BadFlagsAreUsageErrors) {
  EXPECT_EQ(run_program({bin("zeus"), "selftest", "--window", "0"}, kSim).exit_code, 2);
  EXPECT_EQ(run_program({bin("zeus"), "selftest", "--repetitions", "-3"}, kSim).exit_code, 2);
}

}  // namespace
}  // namespace zeus::testing
