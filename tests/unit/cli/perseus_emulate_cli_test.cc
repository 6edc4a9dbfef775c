// End-to-end tests of `zeus perseus emulate`: one process per stage (the
// hidden `perseus emulate-stage`), a server on loopback, the report.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cli_test_helpers.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;
const std::string kProfile = std::string(ZEUS_SOURCE_DIR) +
                             "/data/perseus-sosp24-emulation/stage_profile/bloom+a100_sxm_bf16.csv";

class PerseusEmulateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "zeus_perseus_emulate_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> args() const {
    return {bin("zeus"),
            "perseus",
            "emulate",
            "--profile",
            kProfile,
            "--microbatches",
            "3",
            "--iterations",
            "1",
            "--out",
            (dir_ / "out").string()};
  }
  fs::path dir_;
};

TEST_F(PerseusEmulateCli, StageProcessesReproduceThePredictedSavings) {
  const auto r = run_program(args());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("minimum energy (T*)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[ ok ] every computation ran at the frequency its schedule set"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  const auto report = nlohmann::json::parse(read_file((dir_ / "out/report.json").string()));
  ASSERT_EQ(report.at("scenarios").size(), 6u);
  EXPECT_EQ(report.at("num_stages"), 8);
  for (const auto& s : report.at("scenarios")) {
    EXPECT_TRUE(s.at("followed_schedule").get<bool>()) << s.dump();
    EXPECT_TRUE(s.at("clocks_restored").get<bool>()) << s.dump();
    EXPECT_NEAR(s.at("measured_saving").get<double>(), s.at("predicted_saving").get<double>(), 0.02)
        << s.dump();
  }
  EXPECT_GT(report["scenarios"][2]["measured_saving"].get<double>(), 0.05);  // T*
  // The server's dumps of every scenario's job are kept.
  EXPECT_TRUE(fs::is_directory(dir_ / "out/dumps/0"));
  EXPECT_TRUE(fs::exists(dir_ / "out/solution/plans.json"));
}

TEST_F(PerseusEmulateCli, BadInputExitsWithTwoAndSaysWhy) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"--unit-time", "nan", "unit-time"},
      {"--p-blocking", "-1", "p-blocking"},
      {"--straggler", "0.5", "straggler slowdown"},
      {"--profile", "/nonexistent.csv", "no such file"},
      {"--microbatches", "0", "microbatches"},
  };
  for (const auto& [flag, value, needle] : cases) {
    auto a = args();
    for (std::size_t i = 0; i + 1 < a.size(); ++i) {
      if (a[i] == flag) a[i + 1] = value;
    }
    if (std::find(a.begin(), a.end(), flag) == a.end()) a.insert(a.end(), {flag, value});
    const auto r = run_program(a);
    EXPECT_EQ(r.exit_code, 2) << flag << "=" << value << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << flag << "=" << value << ": " << r.err;
  }
  const auto plot =
      run_program({bin("zeus"), "perseus", "emulate", "--profile", kProfile, "--plot"});
  EXPECT_EQ(plot.exit_code, 2);
  EXPECT_NE(plot.err.find("--plot needs --out DIR"), std::string::npos) << plot.err;
}

}  // namespace
}  // namespace zeus::testing
