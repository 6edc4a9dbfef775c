// `zeus top`: the ledger's table and JSON, from this machine's devices and
// from a running zeusd; its flags refused with exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "support/temp_dir.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kSim = {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=2",
                                       "ZEUS_POWERCAP_ROOT=/nonexistent"};

TEST(ZeusTop, JsonFromTheLocalDevicesIsTheConservedLedger) {
  const auto r =
      run_program({bin("zeus"), "top", "--once", "--json", "--local", "--interval", "0.3"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto body = nlohmann::json::parse(r.out);
  ASSERT_EQ(body.at("devices").size(), 2u);
  for (const auto& d : body["devices"]) {
    EXPECT_EQ(d.at("kind"), "gpu");
    EXPECT_GT(d.at("power_w").get<double>(), 0.0);  // the simulated GPU draws power
    const auto mj = [&](const char* k) { return std::llround(d.at(k).get<double>() * 1000); };
    EXPECT_EQ(mj("before_start_j") + mj("idle_j") + mj("attributed_j") + mj("unattributed_j"),
              mj("measured_j"));
  }
  EXPECT_TRUE(body.contains("processes"));
}

TEST(ZeusTop, TableNamesEachDeviceItsIdleAndWhatNobodyWeighed) {
  const auto r = run_program({bin("zeus"), "top", "--once", "--local", "--interval", "0.3"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPU 0 "));
  EXPECT_THAT(r.out, HasSubstr("GPU 1 "));
  EXPECT_THAT(r.out, HasSubstr("idle (none)"));
  EXPECT_THAT(r.out, HasSubstr("unattributed"));
  EXPECT_THAT(r.out, HasSubstr("split: none"));
}

TEST(ZeusTop, ReadsARunningZeusdWhenOneIsConfigured) {
  TempDir dir;
  const std::string socket = (dir / "zeusd.sock").string();
  BackgroundProgram zeusd(
      {bin("zeusd"), "serve", "--socket-path", socket, "--gpu-backend", "sim",
       "--attribution-interval", "0.1"},
      {"ZEUS_SIM_GPUS=1", "ZEUS_POWERCAP_ROOT=/nonexistent", "ZEUS_LOG_LEVEL=info"});
  ASSERT_TRUE(zeusd.wait_for_stderr("listening on")) << zeusd.err();
  const auto r = run_program({bin("zeus"), "top", "--once", "--json", "--interval", "0.3"},
                             {"ZEUSD_SOCK_PATH=" + socket, "ZEUS_GPU_BACKEND=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto body = nlohmann::json::parse(r.out);
  ASSERT_EQ(body.at("devices").size(), 1u);  // the daemon's GPU, not this process's (none)
  EXPECT_GT(body.at("polls").get<int>(), 1);
}

TEST(ZeusTop, AMachineWithNothingToAttributeIsAnErrorNotAnEmptyTable) {
  const auto r = run_program({bin("zeus"), "top", "--once", "--local", "--interval", "0.1"},
                             {"ZEUS_GPU_BACKEND=none", "ZEUS_POWERCAP_ROOT=/nonexistent"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("nothing to attribute"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ZeusTop, BadFlagsExitTwoWithTheReason) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--interval", "nan"},
                                                                {"--interval", "0"},
                                                                {"--rows", "0"},
                                                                {"--gpu-idle-power", "0=abc"},
                                                                {"--gpu-idle-power", "0=-5"}}) {
    std::vector<std::string> argv = {bin("zeus"), "top", "--once", "--local"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_program(argv, kSim);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_FALSE(r.err.empty());
  }
}

}  // namespace
}  // namespace zeus::testing
