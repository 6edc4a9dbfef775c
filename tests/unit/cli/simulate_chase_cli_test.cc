// End-to-end tests of `zeus simulate chase` on the project's grid signals and traces.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_helpers.h"
#include "util/csv.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;
const std::string kSignals = std::string(ZEUS_SOURCE_DIR) + "/data/grid-signals/";

std::string temp_dir(const std::string& tag) {
  const fs::path p =
      fs::temp_directory_path() / ("zeus_chase_cli_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

TEST(SimulateChaseCli, MisoWritesReportDecisionsAndSweep) {
  const std::string out = temp_dir("miso");
  const auto r =
      run_program({bin("zeus"), "simulate", "chase", "--signal",
                   kSignals + "miso-carbon-intensity-2022-10-chase.csv", "--epochs", "4",
                   "--signal-max", "750", "--policy", "max,limit:225,chase:0.25", "--pareto-etas",
                   "0.25,0.3", "--target=-13.6,2.5", "--no-plots", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("chase:0.25"), std::string::npos) << r.out;
  for (const char* f : {"report.md", "summary.csv", "starts.csv", "pareto.csv", "headline.csv"}) {
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  }
  const auto d = CsvTable::read_file(out + "/decisions.csv");
  d.require_columns({"start_utc", "signal", "forecast", "eta_eff", "power_limit_w", "time_s",
                     "energy_j", "emissions"});
  // 4 epochs of ~1.04 h at 250 W: whole 30-min periods plus a partial one.
  ASSERT_GE(d.num_rows(), 8u);
  double time = 0;
  for (std::size_t i = 0; i < d.num_rows(); ++i) time += d.as_double(i, d.column("time_s"));
  EXPECT_GT(time, 4 * 3739.5);
  // The first period starts on the trace's :20/:50 grid.
  EXPECT_NE(d.cell(0, 0).find(":20:00Z"), std::string::npos) << d.cell(0, 0);
  const auto s = CsvTable::read_file(out + "/summary.csv");
  EXPECT_EQ(s.cell(0, 0), "max");
  EXPECT_EQ(s.num_rows(), 3u);
  const std::string report = read_file(out + "/report.md");
  EXPECT_NE(report.find("nearest the target"), std::string::npos);
  fs::remove_all(out);
}

TEST(SimulateChaseCli, PriceSignalChargesCost) {
  const std::string out = temp_dir("price");
  const auto r = run_program({bin("zeus"), "simulate", "chase", "--signal",
                              kSignals + "gb-agile-octopus-price-2022-hourly.csv", "--epochs", "2",
                              "--policy", "max,chase:0.25", "--pareto-etas", "", "--start-step",
                              "86400", "--no-plots", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto d = CsvTable::read_file(out + "/decisions.csv");
  EXPECT_TRUE(d.has_column("cost"));
  EXPECT_FALSE(d.has_column("emissions"));
  // Without --wrap the first day has no history and late jobs would outlast: skipped, counted.
  const std::string report = read_file(out + "/report.md");
  EXPECT_NE(report.find("Starts: 364"), std::string::npos) << report.substr(0, 900);
  fs::remove_all(out);
}

TEST(SimulateChaseCli, BadSignalFilesExitTwoNamingFileAndLine) {
  const std::string dir = temp_dir("bad");
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir + "/" + name) << body;
    return dir + "/" + name;
  };
  const std::string gap = write("gap.csv",
                                "time,ci [g/kWh]\n2024-01-01 00:00,1\n2024-01-01 "
                                "01:00,2\n2024-01-01 05:00,3\n");
  const std::string plain =
      write("plain.csv", "time,value\n2024-01-01 00:00,1\n2024-01-01 01:00,2\n");
  const std::string neg =
      write("neg.csv", "time,ci [g/kWh]\n2024-01-01 00:00,1\n2024-01-01 01:00,-2\n");
  // Finite but absurd values: the emissions overflow, which the report would
  // print as "-nan %" with exit 0.
  std::string huge_rows = "time,ci [g/kWh]\n";
  for (int h = 0; h < 24 * 4; ++h) {
    huge_rows +=
        fmt::format("2024-01-{:02d} {:02d}:00,{}\n", 1 + h / 24, h % 24, h % 2 ? "1e306" : "9e307");
  }
  const std::string huge = write("huge.csv", huge_rows);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--signal", huge, "--epochs", "1"}, "out of range"},
      {{"--signal", gap}, "gap.csv:4"},
      {{"--signal", plain}, "--unit"},
      {{"--signal", neg}, "neg.csv:3"},
      {{"--signal", dir + "/missing.csv"}, "missing.csv"},
      {{"--signal", kSignals + "miso-carbon-intensity-2022-10-chase.csv", "--period", "2700"},
       "multiple"},
      {{"--signal", kSignals + "miso-carbon-intensity-2022-10-chase.csv", "--epochs", "80"},
       "no start leaves the job inside the series"},
      {{"--signal", kSignals + "gb-carbon-intensity-2022-hourly.csv", "--unit", "g/kWh"},
       "not the unit given"},
      {{"--signal", kSignals + "gb-carbon-intensity-2022-hourly.csv", "--policy", "chase:2"},
       "chase eta"},
  };
  for (const auto& [flags, needle] : cases) {
    std::vector<std::string> args = {bin("zeus"),     "simulate", "chase", "--no-plots",
                                     "--pareto-etas", "",         "--out", dir + "/out"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_program(args);
    EXPECT_EQ(r.exit_code, 2) << needle << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing printed as if valid";
    EXPECT_FALSE(fs::exists(dir + "/out/report.md"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::testing
