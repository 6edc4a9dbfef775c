// End-to-end tests of the issue-15 CLI parts: carbon and cost flags of
// `zeus monitor energy`, `zeus monitor temperature`, and the AMD GPUs and the
// energy-counter check of `zeus show-env` (over the fake AMD SMI).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "zeus/util/files.h"

namespace zeus::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kSim = {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=2",
                                       "ZEUS_POWERCAP_ROOT=/nonexistent"};

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("zeus_cli_" + std::to_string(getpid()) + "_" + name))
      .string();
}

TEST(MonitorEnergyCarbon, ConstantIntensityAndPriceInJson) {
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--json", "--carbon-intensity",
                              "400", "--price", "0.2", "--", "/bin/sh", "-c", "sleep 0.2"},
                             kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  const double kwh = j["gpu_energy_j"]["0"].get<double>() / 3.6e6;
  // The hours add up to the window's energy exactly (one reading); the
  // tolerance is the JSON's number formatting.
  EXPECT_NEAR(j["carbon"]["gpu"]["0"].get<double>(), kwh * 400, 1e-9 * kwh * 400);
  EXPECT_EQ(j["carbon"]["unit"], "gCO2eq");
  const double cost = j["gpu_energy_j"]["1"].get<double>() / 3.6e6 * 0.2;
  EXPECT_NEAR(j["cost"]["gpu"]["1"].get<double>(), cost, 1e-9 * cost);
  EXPECT_EQ(j["cost"]["unit"], "$");
  EXPECT_FALSE(j["hours"].empty());
}

TEST(MonitorEnergyCarbon, TextAndCsvLog) {
  const std::string log = temp_path("priced.csv");
  std::filesystem::remove(log);
  for (int k = 0; k < 2; ++k) {
    const auto r = run_program({bin("zeus"), "monitor", "energy", "--carbon-intensity", "250",
                                "--log", log, "--", "/bin/true"},
                               kSim);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Carbon emissions (constant 250 gCO2eq/kWh):"));
    EXPECT_THAT(r.out, HasSubstr("GPU 1: "));
  }
  const std::string text = read_file(log);
  EXPECT_THAT(text, HasSubstr("gpu0_carbon_gco2eq,gpu1_carbon_gco2eq,total_carbon_gco2eq\n"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << "appended, one header";
  std::filesystem::remove(log);
}

TEST(MonitorEnergyCarbon, ProviderFailureKeepsTheEnergyAndExitCode) {
  const std::string rates = temp_path("rates.csv");
  std::ofstream(rates) << "time,value\n2001-01-01T00:00:00Z,100\n";
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--json", "--carbon-provider",
                              "csv:" + rates, "--", "/bin/sh", "-c", "exit 3"},
                             kSim);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_GT(j["gpu_energy_j"]["0"].get<double>(), 0);
  EXPECT_TRUE(j["carbon"]["gpu"].is_null());
  EXPECT_THAT(j["carbon"]["error"].get<std::string>(), HasSubstr("has no value for the hour"));
  std::filesystem::remove(rates);
}

TEST(MonitorEnergyCarbon, BadFlagsExitWithUsageErrors) {
  auto r = run_program(
      {bin("zeus"), "monitor", "energy", "--carbon-provider", "wattmaps:1,2", "--", "/bin/true"},
      kSim);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("electricitymaps:LAT,LON"));
  r = run_program({bin("zeus"), "monitor", "energy", "--carbon-intensity", "1", "--carbon-provider",
                   "csv:x", "--", "/bin/true"},
                  kSim);
  EXPECT_EQ(r.exit_code, 2);
  r = run_program({bin("zeus"), "monitor", "energy", "--price", "-1", "--", "/bin/true"}, kSim);
  EXPECT_EQ(r.exit_code, 2);
}

// Issue 20: rates that overflow the totals, DBL_MAX printed in full, and a
// missing rate file exiting 1 where other bad files exit 2.
TEST(MonitorEnergyCarbon, RatesAreBoundedAndBadRateFilesAreUsageErrors) {
  auto r = run_program(
      {bin("zeus"), "monitor", "energy", "--carbon-intensity", "1e300", "--json", "--", "true"},
      kSim);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--carbon-intensity"));
  EXPECT_THAT(r.err, Not(HasSubstr("1.79769")));
  EXPECT_THAT(r.err, HasSubstr("1e+06"));
  r = run_program({bin("zeus"), "monitor", "energy", "--price", "1e300", "--", "true"}, kSim);
  EXPECT_EQ(r.exit_code, 2);
  r = run_program({bin("zeus"), "monitor", "energy", "--carbon-provider",
                   "csv:/nonexistent/rates.csv", "--", "true"},
                  kSim);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/rates.csv: no such file"));
  const std::string huge = temp_path("huge_rates.csv");
  std::ofstream(huge) << "time,value\n2026-01-01T00:00:00Z,250\n2026-01-01T01:00:00Z,1e300\n";
  r = run_program(
      {bin("zeus"), "monitor", "energy", "--carbon-provider", "csv:" + huge, "--", "true"}, kSim);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(huge + ":3"));
  std::filesystem::remove(huge);
}

TEST(MonitorTemperature, PrintsLinesAndJson) {
  auto r = run_program(
      {bin("zeus"), "monitor", "temperature", "--interval", "0.05", "--duration", "0.1", "--csv"},
      kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("time_s,gpu0_c,gpu1_c\n"));
  r = run_program(
      {bin("zeus"), "monitor", "temperature", "--gpus", "1", "--duration", "0.05", "--json"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto first = json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_DOUBLE_EQ(first["gpu_c"]["1"].get<double>(), 75.0);  // the model's busy temperature
  r = run_program({bin("zeus"), "monitor", "temperature", "--gpus", "5"}, kSim);
  EXPECT_EQ(r.exit_code, 2);
}

// The flags follow `zeus monitor power`: every bad number is a usage error
// naming the flag, never a hang or a busy loop.
TEST(MonitorTemperature, BadNumbersAreUsageErrorsNamingTheFlag) {
  for (const char* flag : {"--interval", "--duration"}) {
    for (const char* value : {"nan", "inf", "0", "-1", "1e308", "0.001", "x"}) {
      const auto r = run_program({bin("zeus"), "monitor", "temperature", flag, value}, kSim);
      EXPECT_EQ(r.exit_code, 2) << flag << " " << value << ": " << r.err;
      EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    }
  }
  for (const char* value : {"0-99999999999", "-1", "0,0"}) {
    const auto r = run_program({bin("zeus"), "monitor", "temperature", "--gpus", value}, kSim);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find("--gpus"), std::string::npos) << r.err;
  }
  const auto r = run_program({bin("zeus"), "monitor", "temperature", "--json", "--csv"}, kSim);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ShowEnvAmd, AmdGpusVersionAndCounterCheck) {
  const std::string fake = std::string(ZEUS_FAKE_AMDSMI_DIR) + "/abi25/libamd_smi.so.25";
  const auto r = run_program({bin("zeus"), "show-env", "--json"},
                             {"ZEUS_GPU_BACKEND=amdsmi", "ZEUS_AMDSMI_LIBRARY=" + fake,
                              "ZEUS_POWERCAP_ROOT=/nonexistent"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["gpu_backend"], "amdsmi");
  EXPECT_THAT(j["amdsmi_version"].get<std::string>(), HasSubstr("25.25.3.0 (ABI 25"));
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["name"], "AMD Instinct MI300X");
  EXPECT_EQ(j["gpus"][1]["pci_bus_id"], "0000:c2:00.0");
  EXPECT_TRUE(j["gpus"][0]["power_w"]["average"].is_null()) << "N/A is not a number";
  // The fake's counter does not move on its own: 0 J against 300 W x 0.5 s.
  EXPECT_EQ(j["gpus"][0]["energy_counter_check"]["verdict"], "inconsistent");
  EXPECT_NEAR(j["gpus"][0]["energy_counter_check"]["expected_j"].get<double>(), 150.0, 15.0);

  const auto skipped = run_program({bin("zeus"), "show-env", "--no-counter-check"},
                                   {"ZEUS_GPU_BACKEND=amdsmi", "ZEUS_AMDSMI_LIBRARY=" + fake,
                                    "ZEUS_POWERCAP_ROOT=/nonexistent"});
  ASSERT_EQ(skipped.exit_code, 0) << skipped.err;
  EXPECT_THAT(skipped.out, HasSubstr("AMD SMI 25.25.3.0"));
  EXPECT_THAT(skipped.out, HasSubstr("PCI 0000:c1:00.0"));
  EXPECT_THAT(skipped.out, ::testing::Not(HasSubstr("energy counter check")));
}

TEST(ShowEnvAmd, SimulatedCounterIsConsistent) {
  const auto r = run_program({bin("zeus"), "show-env"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("energy counter check: consistent"));
}

}  // namespace
}  // namespace zeus::testing
