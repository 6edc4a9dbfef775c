// End-to-end tests of `zeus perseus solve` and `zeus perseus plan`.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <csignal>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cli_test_helpers.h"
#include "util/csv.h"
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

TEST_F(PerseusCli, SolveWritesAMonotoneFrontierAndPlanPicksTheRightPoints) {
  const auto out = (dir_ / "sol").string();
  const auto r = run_program(solve_args(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto frontier = CsvTable::read_file(out + "/frontier.csv");
  ASSERT_EQ(frontier.columns(), (std::vector<std::string>{"time", "energy"}));
  ASSERT_GT(frontier.num_rows(), 10u);
  double min_energy = frontier.as_double(0, 1);
  for (std::size_t i = 1; i < frontier.num_rows(); ++i) {
    EXPECT_LT(frontier.as_double(i, 0), frontier.as_double(i - 1, 0));  // one step faster per row
    min_energy = std::min(min_energy, frontier.as_double(i, 1));
  }
  const double fastest_time = frontier.as_double(frontier.num_rows() - 1, 0);
  auto plan = [&](const std::string& target) {
    const auto plan_path = (dir_ / ("plan_" + target + ".json")).string();
    const auto p = run_program({bin("zeus"), "perseus", "plan", "--solution", out, "--target",
                                target, "--out", plan_path});
    EXPECT_EQ(p.exit_code, 0) << target << ": " << p.err;
    return nlohmann::json::parse(read_file(plan_path));
  };
  const auto fastest = plan("fastest");
  EXPECT_DOUBLE_EQ(fastest.at("time_s").get<double>(), fastest_time);
  EXPECT_DOUBLE_EQ(plan("min-energy").at("energy_j").get<double>(), min_energy);
  // A straggler 10% slower than T_min gets the slowest plan within 1.1 T_min.
  const double straggler = plan("straggler:1.1x").at("time_s").get<double>();
  EXPECT_LE(straggler, 1.1 * fastest_time + 1e-9);
  EXPECT_GT(straggler, 1.1 * fastest_time - 0.001 - 1e-9);
  // 8 stages, each with its 4 forwards and 4 backwards at profiled frequencies.
  ASSERT_EQ(fastest.at("stages").size(), 8u);
  for (const auto& stage : fastest.at("stages")) {
    ASSERT_EQ(stage.at("frequencies").size(), 8u);
    for (const auto& f : stage.at("frequencies")) {
      EXPECT_GE(f.at(1).get<int>(), 855);
      EXPECT_LE(f.at(1).get<int>(), 1410);
    }
  }
}

std::vector<std::string> with(std::vector<std::string> args, const std::string& flag,
                              const std::string& value) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) {
      args[i + 1] = value;
      return args;
    }
  }
  args.push_back(flag);
  args.push_back(value);
  return args;
}

TEST_F(PerseusCli, BadInputIsAUsageErrorWithAMessage) {
  const auto args = solve_args((dir_ / "x").string());
  const auto dup_csv = (dir_ / "dup.csv").string();
  {
    std::ofstream f(dup_csv);
    f << read_file(kProfile) << "0,forward,1410,0.5,50\n";
  }
  const auto missing_energy = (dir_ / "bad.csv").string();
  std::ofstream(missing_energy) << "stage,instruction,frequency,time,energy\n0,forward,1410,0.1\n";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"--microbatches", "0", "microbatches"},
      {"--microbatches", "-5", "microbatches"},
      {"--unit-time", "0", "unit-time"},
      {"--unit-time", "-1", "unit-time"},
      {"--unit-time", "nan", "unit-time"},
      {"--unit-time", "1e400", "unit-time"},
      {"--p-blocking", "1e308", "p-blocking"},
      {"--p-blocking", "inf", "p-blocking"},
      {"--p-blocking", "-3", "p-blocking"},
      {"--max-hours", "-1", "max-hours"},
      {"--profile", "/nonexistent.csv", "data/perseus-sosp24-emulation/stage_profile"},
      {"--profile", dir_.string(), "directory"},
      {"--profile", "/dev/zero", "/dev/zero"},
      {"--profile", dup_csv, "measured twice"},
      {"--profile", missing_energy, "bad.csv:2"},
  };
  for (const auto& [flag, value, needle] : cases) {
    const auto r = run_program(with(args, flag, value));
    EXPECT_EQ(r.exit_code, 2) << flag << "=" << value << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << flag << "=" << value << ": " << r.err;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
  }
  const auto p =
      run_program({bin("zeus"), "perseus", "plan", "--solution", (dir_ / "none").string(),
                   "--target", "fastest", "--out", (dir_ / "p.json").string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
}

TEST_F(PerseusCli, AnImpossibleSolveIsRefusedAtOnceWithItsEstimate) {
  auto args = with(solve_args((dir_ / "x").string()), "--microbatches", "30000");
  args = with(args, "--unit-time", "1e-9");
  const auto r = run_program(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const char* needle : {"refusing to solve", "480000 ops", "steps", "memory"}) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
  const auto e =
      run_program({bin("zeus"), "perseus", "solve", "--profile", kProfile, "--microbatches", "96",
                   "--unit-time", "0.001", "--p-blocking", "83.64", "--estimate-only"});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("3496 steps"), std::string::npos) << e.out;
  auto both = with(solve_args((dir_ / "y").string()), "--estimate-only", "");
  both.pop_back();
  EXPECT_EQ(run_program(both).exit_code, 2);
}

TEST_F(PerseusCli, OutputPathsAreCheckedBeforeSolving) {
  const auto file = (dir_ / "a_file").string();
  std::ofstream(file) << "x";
  for (const auto& out : {file, file + "/sub"}) {
    const auto r = run_program(solve_args(out));
    EXPECT_EQ(r.exit_code, 2) << out << ": " << r.err;
    EXPECT_NE(r.err.find("directory"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("frontier:"), std::string::npos) << "solved before failing: " << r.out;
  }
  std::filesystem::create_directories(dir_ / "d" / "plans.json");
  const auto r = run_program(solve_args((dir_ / "d").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out.find("frontier:"), std::string::npos) << r.out;
  const auto p = run_program({bin("zeus"), "perseus", "plan", "--solution", dir_.string(),
                              "--target", "fastest", "--out", dir_.string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("directory"), std::string::npos) << p.err;
}

TEST_F(PerseusCli, AFailedFinalWriteIsAnErrorAndTheResultsReachStdout) {
  const auto out = dir_ / "full";
  std::filesystem::create_directories(out);
  std::filesystem::create_symlink("/dev/full", out / "frontier.csv");
  const auto r = run_program(solve_args(out.string()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("time,energy\n"), std::string::npos) << r.out;
  EXPECT_GT(std::count(r.out.begin(), r.out.end(), '\n'), 10);

  const auto good = (dir_ / "good").string();
  ASSERT_EQ(run_program(solve_args(good)).exit_code, 0);
  const auto p = run_program({bin("zeus"), "perseus", "plan", "--solution", good, "--target",
                              "fastest", "--out", "/dev/full"});
  EXPECT_NE(p.exit_code, 0);
  EXPECT_NE(p.out.find("\"stages\""), std::string::npos) << p.out;
}

// Long work says what it will cost even when stderr is a log file: a solve
// estimated at 10 s or more prints its estimate at once (the test stops it
// there rather than wait for it).
TEST_F(PerseusCli, ALongSolvePrintsItsEstimateWithoutATerminal) {
  BackgroundProgram solve({bin("zeus"), "perseus", "solve", "--profile", kProfile, "--microbatches",
                           "64", "--unit-time", "0.00001", "--p-blocking", "83.64", "--out",
                           (dir_ / "long").string()});
  EXPECT_TRUE(solve.wait_for_stderr("of solver time")) << solve.err();
  EXPECT_EQ(solve.err().find("perseus: step"), std::string::npos) << "no progress line in a log";
  solve.signal(SIGKILL);
  solve.finish();
}

TEST_F(PerseusCli, ProgressGoesToStderrOnlyWhenAsked) {
  const auto quiet = run_program(solve_args((dir_ / "q").string()));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  auto args = solve_args((dir_ / "p").string());
  args.push_back("--progress");
  const auto loud = run_program(args);
  ASSERT_EQ(loud.exit_code, 0) << loud.err;
  EXPECT_NE(loud.err.find("steps of 0.001 s"), std::string::npos) << loud.err;
  EXPECT_NE(loud.err.find("perseus: step"), std::string::npos) << loud.err;
  EXPECT_EQ(loud.out,
            quiet.out.substr(0, quiet.out.find("wrote")) + loud.out.substr(loud.out.find("wrote")));
}

}  // namespace
}  // namespace zeus::testing
