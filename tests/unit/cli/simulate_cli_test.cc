// End-to-end tests of `zeus simulate` on the project's copy of the traces.
#include <gtest/gtest.h>

#include "cli_test_helpers.h"
#include "zeus/util/csv.h"

namespace zeus::testing {
namespace {

TEST(SimulateCli, CsvHasARowPerRunWithTheDocumentedColumns) {
  const auto r = run_program({bin("zeus"), "simulate", "--gpu", "v100", "--workload",
                              "librispeech/deepspeech2", "--seeds", "1-2", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = CsvTable::parse(r.out, "stdout");
  t.require_columns({"gpu", "workload", "eta", "beta", "seed", "policy", "b0", "num_recurrence",
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
