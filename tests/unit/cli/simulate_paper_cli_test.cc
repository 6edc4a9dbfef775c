// End-to-end tests of `zeus simulate paper` on the project's copy of the
// traces: the report and its CSVs, and the refusals that come before any work.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_test_helpers.h"
#include "util/csv.h"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;

class PaperDir {
 public:
  PaperDir() {
    std::string t = (fs::temp_directory_path() / "zeus_paper_cli_XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = t;
  }
  ~PaperDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RunResult paper(std::vector<std::string> flags) {
  std::vector<std::string> args = {bin("zeus"), "simulate", "paper"};
  args.insert(args.end(), flags.begin(), flags.end());
  return run_program(args);
}

TEST(SimulatePaperCli, WritesEverySelectedSectionWithItsCsvs) {
  PaperDir dir;
  const std::string out = dir.path() + "/report";
  const auto r = paper({"--out", out, "--figures", "1,12,2", "--seeds", "1-3", "--no-plots"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = slurp(out + "/report.md");
  for (const char* heading : {"## Figure 1 / 15", "## Figure 2 / 16", "## Figure 12"}) {
    EXPECT_NE(md.find(heading), std::string::npos) << heading << "\n" << md;
  }
  EXPECT_EQ(md.find("## Figure 13"), std::string::npos) << "not selected, but written";
  EXPECT_NE(md.find("Figure 9"), std::string::npos) << "the report says Figure 9 is left out";

  // Figure 1: every GPU x workload, joint tuning never worse than one knob,
  // and nothing worse than the default.
  const auto opp = CsvTable::parse(slurp(out + "/csv/fig01-opportunity.csv"), "fig01");
  EXPECT_EQ(opp.num_rows(), 4u * 6u);
  for (std::size_t i = 0; i < opp.num_rows(); ++i) {
    const double nb = opp.as_double(i, opp.column("norm_bs"));
    const double np = opp.as_double(i, opp.column("norm_pl"));
    const double nj = opp.as_double(i, opp.column("norm_joint"));
    EXPECT_LE(nb, 1.0);
    EXPECT_LE(np, 1.0);
    EXPECT_LE(nj, std::min(nb, np) + 1e-12) << opp.cell(i, opp.column("workload"));
  }
  // Figure 12: relative to beta = 2 on the same seed, so beta = 2 is exactly 1.
  const auto beta = CsvTable::parse(slurp(out + "/csv/fig12-beta.csv"), "fig12");
  int at_two = 0;
  for (std::size_t i = 0; i < beta.num_rows(); ++i) {
    if (beta.as_double(i, beta.column("beta")) != 2.0) continue;
    EXPECT_EQ(beta.as_double(i, beta.column("ratio_mean")), 1.0);
    ++at_two;
  }
  EXPECT_EQ(at_two, 7);  // six workloads and their geometric mean
  // --no-plots: the scripts are written but not run.
  EXPECT_TRUE(fs::exists(out + "/figures/fig12-beta.gp"));
  EXPECT_FALSE(fs::exists(out + "/figures/fig12-beta.png"));
}

TEST(SimulatePaperCli, AnOutThatIsAFileOrUnwritableIsRefusedBeforeTheWork) {
  PaperDir dir;
  const std::string file = dir.path() + "/a-file";
  { std::ofstream(file) << "keep me"; }
  for (const std::string& out : {file, file + "/sub"}) {
    const auto r = paper({"--out", out, "--figures", "13"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("simulations"), std::string::npos) << "worked before refusing";
  }
  EXPECT_EQ(slurp(file), "keep me");

  // A directory where report.md would go is refused too.
  fs::create_directories(dir.path() + "/r/report.md");
  const auto taken = paper({"--out", dir.path() + "/r", "--figures", "1", "--no-plots"});
  EXPECT_EQ(taken.exit_code, 2) << taken.err;
  EXPECT_NE(taken.err.find("report.md"), std::string::npos) << taken.err;

  if (::geteuid() != 0) {  // root writes anywhere
    const std::string locked = dir.path() + "/locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    const auto r = paper({"--out", locked + "/report", "--figures", "1", "--no-plots"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
    fs::permissions(locked, fs::perms::owner_all);
    EXPECT_FALSE(fs::exists(locked + "/report"));
  }
}

TEST(SimulatePaperCli, BadFiguresSeedsAndTracesExitTwoWithAMessage) {
  PaperDir dir;
  // A train trace without its target_metric column.
  const std::string traces = dir.path() + "/traces";
  fs::create_directory(traces);
  const std::string src = std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces";
  for (const auto& e : fs::directory_iterator(src)) {
    if (e.path().extension() == ".csv")
      fs::copy_file(e.path(), traces + "/" + e.path().filename().string());
  }
  std::ofstream(traces + "/summary_train.csv", std::ios::trunc) << "wrong_header_only\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--figures", "9"}, "Alibaba"},
      {{"--figures", "4"}, "unknown figure"},
      {{"--figures", "11,11"}, "twice"},
      {{"--seeds", "3-1"}, "seeds"},
      {{"--threads", "5000"}, "threads"},
      {{"--traces", dir.path() + "/missing"}, "missing"},
      {{"--traces", traces}, "summary_train.csv"},
      {{"--gpu", "v100"}, ""},  // a flag of `zeus simulate`, not of paper
  };
  for (const auto& [flags, needle] : cases) {
    std::vector<std::string> args = {"--out", dir.path() + "/out"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = paper(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() + "/out/report.md")) << flags[0];
  }
}

}  // namespace
}  // namespace zeus::testing
