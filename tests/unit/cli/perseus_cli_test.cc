// End-to-end tests of `zeus perseus solve` and `zeus perseus plan`.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "zeus/util/csv.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;
const std::string kProfile = std::string(ZEUS_SOURCE_DIR) +
                             "/data/perseus-sosp24-emulation/stage_profile/bloom+a100_sxm_bf16.csv";

class PerseusCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "zeus_perseus_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> solve_args(const std::string& out) const {
    return {bin("zeus"), "perseus",     "solve", "--profile",    kProfile, "--microbatches",
            "4",         "--unit-time", "0.001", "--p-blocking", "83.64",  "--out",
            out};
  }
  fs::path dir_;
};

TEST_F(PerseusCli, SolveWritesAMonotoneFrontierAndPlanPicksOneOfItsPoints) {
  const auto out = (dir_ / "sol").string();
  const auto r = run_program(solve_args(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto frontier = CsvTable::read_file(out + "/frontier.csv");
  ASSERT_EQ(frontier.columns(), (std::vector<std::string>{"time", "energy"}));
  ASSERT_GT(frontier.num_rows(), 10u);
  for (std::size_t i = 1; i < frontier.num_rows(); ++i) {
    EXPECT_LT(frontier.as_double(i, 0), frontier.as_double(i - 1, 0));  // one step faster per row
  }
  for (const char* target : {"fastest", "min-energy", "straggler:1.1x"}) {
    const auto plan_path = (dir_ / (std::string("plan_") + target + ".json")).string();
    const auto p = run_program({bin("zeus"), "perseus", "plan", "--solution", out, "--target",
                                target, "--out", plan_path});
    ASSERT_EQ(p.exit_code, 0) << target << ": " << p.err;
    const auto plan = nlohmann::json::parse(read_file(plan_path));
    EXPECT_FALSE(plan.dump().empty());
  }
}

TEST_F(PerseusCli, BadInputIsAUsageErrorWithAMessage) {
  auto args = solve_args((dir_ / "x").string());
  auto with = [&](const std::string& flag, const std::string& value) {
    auto a = args;
    for (std::size_t i = 0; i + 1 < a.size(); ++i) {
      if (a[i] == flag) a[i + 1] = value;
    }
    return run_program(a);
  };
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--microbatches", "0"},
                                                        {"--unit-time", "0"},
                                                        {"--unit-time", "-1"},
                                                        {"--profile", "/nonexistent.csv"}}) {
    const auto r = with(flag, value);
    EXPECT_EQ(r.exit_code, 2) << flag << "=" << value << ": " << r.err;
    EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  }
  const auto bad_csv = (dir_ / "bad.csv").string();
  std::ofstream(bad_csv) << "stage,instruction,frequency,time\n0,forward,1410,0.1\n";
  const auto r = with("--profile", bad_csv);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("energy"), std::string::npos) << r.err;
  const auto p =
      run_program({bin("zeus"), "perseus", "plan", "--solution", (dir_ / "none").string(),
                   "--target", "fastest", "--out", (dir_ / "p.json").string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
}

}  // namespace
}  // namespace zeus::testing
