// `zeus gpu show|set`: an operator's lasting settings. Through zeusd they
// take no lease, so they outlive the command (a leased change would be
// restored the moment the command's connection closed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "support/temp_dir.h"

namespace zeus::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::vector<std::string> kSim = {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=2",
                                       "ZEUSD_SOCK_PATH=", "ZEUSD_HOST_PORT="};

TEST(GpuCli, ShowsEachGpusSettings) {
  const auto r = run_program({bin("zeus"), "gpu", "show", "--json"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["index"], 1);
  EXPECT_GT(j[0]["max_power_limit_w"].get<double>(), j[0]["min_power_limit_w"].get<double>());
  EXPECT_EQ(j[0]["power_limit_w"], j[0]["default_power_limit_w"]);
  const auto text = run_program({bin("zeus"), "gpu", "show", "--gpus", "1"}, kSim);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("GPU 1: "));
  EXPECT_THAT(text.out, HasSubstr("persistence mode off"));
}

TEST(GpuCli, BadRequestsAreUsageErrorsThatChangeNothing) {
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {{"set", "--gpus", "all"}, "nothing to set"},
      {{"set", "--gpus", "0,1", "--power-limit", "99999"}, "no GPU was changed"},
      {{"set", "--gpus", "0", "--persistence", "maybe"}, "give on or off"},
      {{"set", "--gpus", "0", "--gpu-clocks", "1410"}, "MIN:MAX"},
      {{"set", "--gpus", "7", "--power-limit", "200"}, "7"},
      {{"set", "--power-limit", "200"}, "--gpus"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {bin("zeus"), "gpu"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = run_program(argv, kSim);
    EXPECT_EQ(r.exit_code, 2) << c.needle << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.needle));
    EXPECT_EQ(r.out, "") << c.needle;
  }
}

TEST(GpuCli, SettingsMadeThroughZeusdOutliveTheCommand) {
  TempDir dir("zeus_gpu_cli");
  const std::string sock = dir.path() + "/zeusd.sock";
  BackgroundProgram zeusd(
      {bin("zeusd"), "serve", "--gpu-backend", "sim", "--socket-path", sock, "--socket-permissions",
       "600"},
      {"ZEUS_SIM_GPUS=2", "ZEUS_LOG_LEVEL=info", "ZEUSD_SOCK_PATH=", "ZEUSD_HOST_PORT="});
  ASSERT_TRUE(zeusd.wait_for_stderr("listening on")) << zeusd.err();
  const std::vector<std::string> through = {"ZEUS_GPU_BACKEND=zeusd", "ZEUSD_SOCK_PATH=" + sock};
  const auto set = run_program(
      {bin("zeus"), "gpu", "set", "--gpus", "0,1", "--power-limit", "200", "--persistence", "on"},
      through);
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr("GPU 1: power limit 300 W -> 200 W"));
  EXPECT_THAT(set.err, HasSubstr("stay until changed again"));
  const auto shown = run_program({bin("zeus"), "gpu", "show", "--json"}, through);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const auto j = json::parse(shown.out);
  for (const auto& gpu : j) {
    EXPECT_EQ(gpu["power_limit_w"], 200.0) << shown.out;
    EXPECT_EQ(gpu["persistence_mode"], true) << shown.out;
  }
  const auto reset =
      run_program({bin("zeus"), "gpu", "set", "--gpus", "all", "--reset-power-limit"}, through);
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_THAT(reset.out, HasSubstr("200 W -> 300 W (the default)"));
}

}  // namespace
}  // namespace zeus::testing
