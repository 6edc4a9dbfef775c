// End-to-end tests of `zeus chase run` (the live Chase optimizer) on simulated GPUs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli_test_helpers.h"
#include "util/csv.h"
#include "util/iso8601.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;
const std::string kGb =
    std::string(ZEUS_SOURCE_DIR) + "/data/grid-signals/gb-carbon-intensity-2022-hourly.csv";

TEST(ChaseCli, SimulatedRunDecidesEveryHourFromTheSignal) {
  const std::string decisions =
      (fs::temp_directory_path() / ("zeus_chase_run_" + std::to_string(::getpid()) + ".csv"))
          .string();
  // 100 units/s at the top limit: 36,000 units is about 6 simulated minutes a step.
  const auto r = run_program({bin("zeus"),
                              "chase",
                              "run",
                              "--signal",
                              kGb,
                              "--sim-start",
                              "2022-03-15T00:00:00Z",
                              "--steps",
                              "60",
                              "--work-per-step",
                              "36000",
                              "--warmup-steps",
                              "1",
                              "--profile-steps",
                              "2",
                              "--pl-step",
                              "100",
                              "--eta",
                              "0.5",
                              "--decisions",
                              decisions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(decisions), r.out);
  const auto t = CsvTable::parse(r.out, "stdout");
  t.require_columns({"period_start_utc", "signal_seen", "forecast", "eta_eff", "power_limit_w"});
  ASSERT_GE(t.num_rows(), 3u) << r.out;
  const carbon_aware::GridSignal gb = carbon_aware::read_signal_csv(kGb);
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < t.num_rows(); ++i) {
    const std::int64_t period = parse_iso8601(t.cell(i, 0), "period");
    EXPECT_EQ(period % 3600, 0) << "periods start on UTC hours";
    if (i > 0) {
      EXPECT_EQ(period, previous + 3600) << "one decision per hour";
    }
    previous = period;
    // Persistence: the signal seen (and forecast) is the previous hour's, in g/kWh.
    const double seen = gb.value(gb.index_at(period - 3600));
    EXPECT_NEAR(t.as_double(i, 1), seen, 1e-3 * seen);
    EXPECT_NEAR(t.as_double(i, 2), seen, 1e-3 * seen);
  }
  EXPECT_NE(r.err.find("0 period(s) without a signal"), std::string::npos) << r.err;
  fs::remove(decisions);
}

TEST(ChaseCli, BadInputExitsTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--signal", "/nonexistent.csv"}, "/nonexistent.csv"},
      {{"--signal", kGb, "--eta", "3"}, "eta"},
      {{"--signal", kGb, "--", "true"}, "--gpu-backend nvml"},
      {{"--signal", kGb, "--forecaster", "oracle"}, "simulator only"},
      {{"--signal", kGb, "--period", "5400"}, "period"},
      {{"--signal", kGb, "--refit-periods", "-1"}, "refit_periods"},
  };
  for (const auto& [flags, needle] : cases) {
    std::vector<std::string> args = {bin("zeus"), "chase", "run", "--steps", "5"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_program(args);
    EXPECT_EQ(r.exit_code, 2) << needle << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace zeus::testing
