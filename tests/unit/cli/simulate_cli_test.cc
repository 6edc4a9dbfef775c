// End-to-end tests of `zeus simulate` on the project's copy of the traces.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli_test_helpers.h"
#include "util/csv.h"

namespace zeus::testing {
namespace {

TEST(SimulateCli, CsvHasARowPerRunWithTheDocumentedColumns) {
  const auto r = run_program({bin("zeus"), "simulate", "--gpu", "v100", "--workload",
                              "librispeech/deepspeech2", "--seeds", "1-2", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = CsvTable::parse(r.out, "stdout");
  t.require_columns({"gpu", "workload", "eta", "beta", "seed", "strategy", "b0", "num_recurrence",
                     "opt_bs", "opt_pl", "eta_norm", "tta_norm", "cum_regret", "cum_regret_rel",
                     "final_bs", "final_pl"});
  EXPECT_EQ(t.num_rows(), 2u * 3u);  // 2 seeds x (zeus, default, grid)
  EXPECT_EQ(t.cell(0, t.column("workload")), "librispeech/deepspeech2");
  EXPECT_EQ(t.as_int(0, t.column("num_recurrence")), 210);
}

TEST(SimulateCli, BadInputSaysWhatAndExitsWithTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--eta", "1.5"}, "eta"},
      {{"--beta", "0"}, "beta"},
      {{"--gpu", "h100"}, "h100"},
      {{"--workload", "foo/bar"}, "foo/bar"},
      {{"--traces", "/nonexistent"}, "/nonexistent"},
      {{"--seeds", "5-1"}, "seeds"},
      {{"--format", "xml"}, "format"},
  };
  for (const auto& [flags, needle] : cases) {
    std::vector<std::string> args = {bin("zeus"), "simulate"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_program(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace zeus::testing

namespace zeus::testing {
namespace {

TEST(SimulateCli, RepeatsRangesAndFlagsThatDoNotApplyAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--seeds", "1,1"}, "seeds"},
      {{"--seeds", "0-99999999999"}, "seeds"},
      {{"--seeds", "-1"}, "seeds"},
      {{"--gpu", "v100,v100"}, "v100"},
      {{"--eta", "0.5,0.5"}, "eta"},
      {{"--eta", "nan"}, "eta"},
      {{"--beta", "1e308"}, "beta"},
      {{"--overlap", "1e308"}, "overlap"},
      {{"--threads", "100000"}, "threads"},
      {{"--strategy", "zeus,zeus"}, "zeus"},
      {{"--policy", "random"}, "random"},
      {{"--drift", "--gpu", "v100"}, "--drift"},
      {{"--drift", "--traces", "/tmp"}, "--drift"},
  };
  for (const auto& [flags, needle] : cases) {
    std::vector<std::string> args = {bin("zeus"), "simulate"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_program(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "ran before refusing: " << flags[0];
  }
  const auto note = run_program({bin("zeus"), "simulate", "--gpu", "v100", "--workload",
                                 "squad/bert_base_uncased", "--strategy", "default",
                                 "--window-size", "5", "--format", "csv"});
  EXPECT_EQ(note.exit_code, 0) << note.err;
  EXPECT_NE(note.err.find("--window-size only affects the zeus strategy"), std::string::npos)
      << note.err;
}

TEST(SimulateCli, OutIsCheckedFirstAndAFailedWriteKeepsStdout) {
  char tmpl[] = "/tmp/zeus_simulate_cli_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string file = dir + "/file";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    std::fclose(f);
  }
  const std::vector<std::string> base = {bin("zeus"), "simulate",   "--gpu",
                                         "v100",      "--workload", "squad/bert_base_uncased",
                                         "--format",  "csv"};
  auto args = base;
  args.insert(args.end(), {"--out", file + "/sub"});
  const auto r = run_program(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  // results.csv is a link to a full disk: the write fails, the rows are on stdout.
  ::symlink("/dev/full", (dir + "/results.csv").c_str());
  args = base;
  args.insert(args.end(), {"--out", dir});
  const auto full = run_program(args);
  EXPECT_NE(full.exit_code, 0);
  EXPECT_NE(full.err.find("error"), std::string::npos) << full.err;
  EXPECT_NE(full.out.find("squad/bert_base_uncased"), std::string::npos) << full.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::testing
