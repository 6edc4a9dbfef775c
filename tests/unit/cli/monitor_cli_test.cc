// End-to-end tests of `zeus show-env` and `zeus monitor` on the simulated GPU.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "fakes/jetson/fake_jetson.h"
#include "fakes/nvml/fake_nvml_control.h"
#include "fakes/powercap/fake_powercap.h"

namespace zeus::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kSim = {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=2",
                                       "ZEUS_POWERCAP_ROOT=/nonexistent"};

TEST(ShowEnv, JsonListsSimulatedGpus) {
  const auto r = run_program({bin("zeus"), "show-env", "--json"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["gpu_backend"], "sim");
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][1]["index"], 1);
  EXPECT_EQ(j["gpus"][0]["energy_counter"], true);
  EXPECT_TRUE(j["gpus"][0]["pci_bus_id"].is_null());  // a simulated GPU sits in no slot
  EXPECT_FALSE(j["gpus"][0].contains("errors")) << j["gpus"][0];
  EXPECT_DOUBLE_EQ(j["gpus"][0]["power_limit_max_w"].get<double>(), 300.0);
  EXPECT_TRUE(j["rapl_zones"].empty());
}

TEST(ShowEnv, TextSaysPlainlyThatGpusAreSimulated) {
  const auto r = run_program({bin("zeus"), "show-env"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos) << r.out;
}

TEST(MonitorEnergy, WrapsACommandAndPassesItsExitCodeOn) {
  const auto r = run_program(
      {bin("zeus"), "monitor", "energy", "--json", "--", "/bin/sh", "-c", "sleep 0.3; exit 7"},
      kSim);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 7);
  EXPECT_GE(j["time_s"].get<double>(), 0.3);
  // The simulated GPU draws its busy power (300 W) for the whole window (the
  // clock and counter reads are microseconds apart; 5% allows for preemption).
  const double expected = 300.0 * j["time_s"].get<double>();
  EXPECT_NEAR(j["gpu_energy_j"]["0"].get<double>(), expected, 0.05 * expected);
  EXPECT_EQ(j["gpu_energy_source"]["1"], "counter");
  EXPECT_NE(r.err.find("SIMULATED"), std::string::npos);
}

TEST(MonitorEnergy, ReportsASignalDeathAs128PlusTheSignal) {
  const auto r =
      run_program({bin("zeus"), "monitor", "energy", "--", "/bin/sh", "-c", "kill -TERM $$"}, kSim);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
}

TEST(MonitorEnergy, MissingCommandIs127LikeAShell) {
  const auto r =
      run_program({bin("zeus"), "monitor", "energy", "--", "/nonexistent/program"}, kSim);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r.err;
}

TEST(MonitorEnergy, StopsOnSigintWithoutACommand) {
  // Interrupt it once it says it measures (its handlers are in place by then),
  // and read the measurement.
  BackgroundProgram monitor({bin("zeus"), "monitor", "energy", "--json"}, kSim);
  ASSERT_TRUE(monitor.wait_for_stderr("measuring until Ctrl-C")) << monitor.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a window of some length
  monitor.signal(SIGINT);
  const auto r = monitor.finish(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_GE(j["time_s"].get<double>(), 0.2);
}

// Issue 22: a Jetson board alone is something to measure; its rails are listed
// by show-env and measured (constant power: power x time) by monitor energy.
TEST(MonitorEnergy, MeasuresTheRailsOfAJetsonBoard) {
  FakeJetson board(FakeJetson::Layout::kNanoIioPower);
  board.set_power(device::SocRail::kTotal, Watts(8));
  board.set_power(device::SocRail::kGpu, Watts(3));
  board.set_power(device::SocRail::kCpu, Watts(2));
  const std::vector<std::string> env = {"ZEUS_GPU_BACKEND=none", "ZEUS_POWERCAP_ROOT=/nonexistent",
                                        "ZEUS_JETSON_SYSFS_ROOT=" + board.root()};
  const auto shown = run_program({bin("zeus"), "show-env"}, env);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("Jetson power rails (ina3221x driver)"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("POM_5V_GPU"), std::string::npos) << shown.out;
  const auto r = run_program(
      {bin("zeus"), "monitor", "energy", "--json", "--", "/bin/sh", "-c", "sleep 0.3"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  const double t = j["time_s"].get<double>();
  EXPECT_GE(t, 0.3);
  EXPECT_NEAR(j["soc_energy"]["total_j"].get<double>(), 8 * t, 1e-6);
  EXPECT_NEAR(j["soc_energy"]["gpu_j"].get<double>(), 3 * t, 1e-6);
  EXPECT_NEAR(j["soc_energy"]["cpu_j"].get<double>(), 2 * t, 1e-6);
  const auto text =
      run_program({bin("zeus"), "monitor", "energy", "--", "/bin/sh", "-c", "true"}, env);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Jetson GPU rail: "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("Total:"), std::string::npos) << "no 0 J total on a Jetson alone";
}

// Issue 20: a measurement of nothing is never a recorded 0 J with exit 0.
TEST(MonitorEnergy, NothingToMeasureIsAnErrorThatSaysWhy) {
  const std::vector<std::string> none = {"ZEUS_GPU_BACKEND=none",
                                         "ZEUS_POWERCAP_ROOT=/nonexistent/powercap"};
  const auto r = run_program(
      {bin("zeus"), "monitor", "energy", "--", "/bin/sh", "-c", "echo ran > /dev/stderr"}, none);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nothing to measure"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU backend 'none'"), std::string::npos) << "names why: " << r.err;
  EXPECT_NE(r.err.find("no RAPL powercap zones found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-empty"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("ran"), std::string::npos) << "the command must not run: " << r.err;
  EXPECT_EQ(r.out.find("Total"), std::string::npos) << r.out;
  // Allowed explicitly: the command runs and the result says it is empty.
  const auto allowed = run_program(
      {bin("zeus"), "monitor", "energy", "--allow-empty", "--json", "--", "true"}, none);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("will be empty"), std::string::npos) << allowed.err;
  const auto j = json::parse(allowed.out);
  EXPECT_TRUE(j["gpu_energy_j"].empty()) << allowed.out;
  // An index of a GPU that is not there says why there is none.
  const auto indexed =
      run_program({bin("zeus"), "monitor", "energy", "--gpus", "0", "--", "true"}, none);
  EXPECT_EQ(indexed.exit_code, 2);
  EXPECT_NE(indexed.err.find("no GPU is available"), std::string::npos) << indexed.err;
}

TEST(MonitorEnergy, BadIndicesAreUsageErrors) {
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--gpus", "5", "--", "true"}, kSim);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("GPU index 5 does not exist"), std::string::npos) << r.err;
  const auto r2 =
      run_program({bin("zeus"), "monitor", "energy", "--gpus", "x", "--", "true"}, kSim);
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(r2.err.find("--gpus"), std::string::npos) << r2.err;
}

TEST(MonitorPower, PrintsALinePerIntervalAndTotals) {
  const auto r = run_program(
      {bin("zeus"), "monitor", "power", "--interval", "0.1", "--duration", "0.5", "--json"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> lines;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const auto nl = r.out.find('\n', start);
    lines.push_back(json::parse(r.out.substr(start, nl - start)));
    start = nl + 1;
  }
  ASSERT_GE(lines.size(), 5u);
  EXPECT_DOUBLE_EQ(lines[0]["gpu_w"]["0"].get<double>(), 300.0);
  const auto& totals = lines.back();
  EXPECT_NEAR(totals["gpu_energy_j"]["1"].get<double>(),
              300.0 * totals["total_time_s"].get<double>(), 1.0);
}

std::vector<json> json_lines(const std::string& out) {
  std::vector<json> lines;
  std::size_t start = 0;
  while (start < out.size()) {
    const auto nl = out.find('\n', start);
    lines.push_back(json::parse(out.substr(start, nl - start)));
    start = nl + 1;
  }
  return lines;
}

TEST(MonitorPower, TelemetryIsOptInAndKeepsEveryOtherField) {
  const auto plain = run_program(
      {bin("zeus"), "monitor", "power", "--interval", "0.05", "--duration", "0.1", "--json"}, kSim);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(json_lines(plain.out)[0].contains("gpu_telemetry"));

  const auto r = run_program({bin("zeus"), "monitor", "power", "--interval", "0.05", "--duration",
                              "0.1", "--json", "--telemetry"},
                             kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = json_lines(r.out);
  ASSERT_GE(lines.size(), 2u);
  const json& first = lines[0];
  EXPECT_DOUBLE_EQ(first["gpu_w"]["0"].get<double>(), 300.0);  // unchanged
  EXPECT_TRUE(first.contains("time_s"));
  // The simulated GPU at full load, uncapped (sim_gpu.h says how it derives them).
  for (const char* i : {"0", "1"}) {
    const json& t = first["gpu_telemetry"][i];
    EXPECT_DOUBLE_EQ(t["gpu_utilization_pct"].get<double>(), 100.0) << t;
    EXPECT_NEAR(t["memory_utilization_pct"].get<double>(), 10.0, 1e-9);
    EXPECT_EQ(t["sm_clock_mhz"].get<int>(), 1410);
    EXPECT_EQ(t["memory_clock_mhz"].get<int>(), 1215);
    EXPECT_EQ(t["clock_event_reasons"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(t["clock_event_reason_names"], json::array());
    EXPECT_EQ(t["memory_total_bytes"].get<std::int64_t>(), std::int64_t{40960} * 1048576);
    EXPECT_EQ(
        t["memory_used_bytes"].get<std::int64_t>() + t["memory_free_bytes"].get<std::int64_t>(),
        t["memory_total_bytes"].get<std::int64_t>());
    EXPECT_DOUBLE_EQ(t["temperature_c"].get<double>(), 75.0);
  }
  // The totals object is unchanged too.
  EXPECT_TRUE(lines.back().contains("total_energy_j"));
  EXPECT_FALSE(lines.back().contains("gpu_telemetry"));
}

TEST(MonitorPower, TelemetryFromNvmlNamesTheClockEventReasons) {
  FakeNvml fake;
  fake.reset();
  const auto r = run_program({bin("zeus"), "monitor", "power", "--interval", "0.05", "--duration",
                              "0.1", "--json", "--telemetry", "--gpus", "1"},
                             {"ZEUS_GPU_BACKEND=nvml", "ZEUS_NVML_LIBRARY=" + fake.path(),
                              "ZEUS_POWERCAP_ROOT=/nonexistent"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json t = json_lines(r.out)[0]["gpu_telemetry"]["1"];
  EXPECT_DOUBLE_EQ(t["gpu_utilization_pct"].get<double>(), 73.0) << t;
  EXPECT_DOUBLE_EQ(t["memory_utilization_pct"].get<double>(), 41.0);
  EXPECT_EQ(t["sm_clock_mhz"].get<int>(), 1980);
  EXPECT_EQ(t["memory_clock_mhz"].get<int>(), 2619);
  EXPECT_EQ(t["clock_event_reasons"].get<std::uint64_t>(), 4u);
  EXPECT_EQ(t["clock_event_reason_names"], json::array({"sw_power_cap"}));
  EXPECT_EQ(t["memory_used_bytes"].get<std::int64_t>(), 1073741824);
  EXPECT_EQ(t["memory_total_bytes"].get<std::int64_t>(), 85520809984);
  EXPECT_DOUBLE_EQ(t["temperature_c"].get<double>(), 45.0);
}

TEST(MonitorPower, TelemetryNeedsJson) {
  const auto r =
      run_program({bin("zeus"), "monitor", "power", "--telemetry", "--duration", "0.1"}, kSim);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
}

TEST(MonitorPower, CsvHasAHeaderAndARowPerInterval) {
  const auto r = run_program(
      {bin("zeus"), "monitor", "power", "--interval", "0.1", "--duration", "0.3", "--csv"}, kSim);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "time_s,gpu0_w,gpu1_w");
  EXPECT_NE(r.err.find("Total GPU energy"), std::string::npos);
}

TEST(MonitorPower, BadFlagsNameTheFlagAndTheAcceptedValues) {
  const auto r = run_program({bin("zeus"), "monitor", "power", "--domain", "peak"}, kSim);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--domain"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("instant"), std::string::npos) << r.err;
  const auto r2 = run_program({bin("zeus"), "monitor", "power", "--interval", "-1"}, kSim);
  EXPECT_EQ(r2.exit_code, 2);
  const auto r3 = run_program({bin("zeus"), "monitor", "power", "--json", "--csv"}, kSim);
  EXPECT_EQ(r3.exit_code, 2);
  const auto r4 = run_program({bin("zeus"), "monitor", "watts"}, kSim);
  EXPECT_EQ(r4.exit_code, 2);
}

TEST(MonitorPower, UnsupportedDomainIsAClearError) {
  const auto r =
      run_program({bin("zeus"), "monitor", "power", "--domain", "memory", "--duration", "0.1"},
                  {"ZEUS_GPU_BACKEND=sim",
                   "ZEUS_SIM_MODEL=" ZEUS_SOURCE_DIR "/tests/unit/cli/a40_like_model.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("memory"), std::string::npos) << r.err;
}

// Every numeric flag: non-finite, zero, negative, huge, below the minimum,
// truncated and malformed values are usage errors (exit 2) that name the
// flag, never a hang, a crash or a 309-digit number.
TEST(MonitorPower, EveryBadNumberIsAUsageErrorNamingTheFlag) {
  for (const char* flag : {"--interval", "--duration"}) {
    for (const char* value : {"nan", "inf", "-inf", "0", "-1", "1e308", "0.001", "1e", "", "x"}) {
      const auto r = run_program({bin("zeus"), "monitor", "power", flag, value}, kSim);
      EXPECT_EQ(r.exit_code, 2) << flag << " " << value << ": " << r.err;
      EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
      EXPECT_LT(r.err.size(), 400u) << r.err;
    }
  }
  for (const char* value : {"0-99999999999", "4294967297", "-1", "0,0", "1-0", "0-"}) {
    const auto r =
        run_program({bin("zeus"), "monitor", "energy", "--gpus", value, "--", "true"}, kSim);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find("--gpus"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("0000000000000000000000"), std::string::npos) << r.err;
  }
}

// Special files where a model or profile file belongs: refused at once with
// exit 2 (never read forever from /dev/zero, never blocked on a FIFO).
TEST(Cli, SpecialFilesAsInputsAreUsageErrors) {
  const std::string fifo = ::testing::TempDir() + "zeus_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, ::testing::TempDir()}) {
    const auto model = run_program({bin("zeus"), "monitor", "energy", "--", "true"},
                                   {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_MODEL=" + path});
    EXPECT_EQ(model.exit_code, 2) << path << ": " << model.err;
    const auto profile = run_program({bin("zeus"), "power-limit", "--profile-path", path});
    EXPECT_EQ(profile.exit_code, 2) << path << ": " << profile.err;
  }
  ::unlink(fifo.c_str());
}

TEST(Cli, UnknownCommandsAreNamed) {
  const auto r = run_program({bin("zeus"), "bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'bogus'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("monitor"), std::string::npos) << "lists the commands: " << r.err;
  const auto nested = run_program({bin("zeus"), "monitor", "wattage"});
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("'wattage'"), std::string::npos) << nested.err;
}

TEST(Cli, AnOutputThatCannotBeWrittenIsAFailure) {
  const auto r = run_program({"/bin/sh", "-c", bin("zeus") + " show-env >/dev/full"}, kSim);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("could not write"), std::string::npos) << r.err;
}

TEST(MonitorEnergy, LogIsAppendedAndItsWriteErrorsAreFailures) {
  const std::string dir = ::testing::TempDir() + "zeus_cli_log_" + std::to_string(::getpid());
  const std::string log = dir + "/windows.csv";
  for (int run = 0; run < 2; ++run) {
    const auto r =
        run_program({bin("zeus"), "monitor", "energy", "--log", log, "--", "true"}, kSim);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto lines = run_program({"/usr/bin/wc", "-l", log});
  EXPECT_EQ(lines.out.substr(0, lines.out.find(' ')), "3") << "a header and two windows";
  const auto other = run_program(
      {bin("zeus"), "monitor", "energy", "--gpus", "1", "--log", log, "--", "true"}, kSim);
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("gpu1_energy"), std::string::npos) << other.err;
  // A log on a full disk: refused at the header, before the command runs.
  const auto full =
      run_program({bin("zeus"), "monitor", "energy", "--log", "/dev/full", "--", "true"}, kSim);
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_NE(full.err.find("/dev/full"), std::string::npos) << full.err;
  run_program({"/bin/rm", "-rf", dir});
}

// Issue 37: a machine without drivers got 2.2 kB of notes with the AMD
// paragraph twice. Now one line says what is wrong and what to do; what was
// tried comes with --verbose (and `zeus show-env`).
TEST(MonitorEnergy, NoDriverIsOneLineAndVerboseSaysWhatWasTried) {
  const std::vector<std::string> no_driver = {"ZEUS_GPU_BACKEND=auto",
                                              "ZEUS_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1",
                                              "ZEUS_AMDSMI_LIBRARY=/nonexistent/libamd_smi.so.26",
                                              "ZEUS_POWERCAP_ROOT=/nonexistent/powercap"};
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--", "true"}, no_driver);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_LT(r.err.size(), 600u) << r.err;
  EXPECT_NE(r.err.find("no NVIDIA driver found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no AMD SMI found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ZEUS_GPU_BACKEND=sim"), std::string::npos) << "what to do: " << r.err;
  EXPECT_EQ(r.err.find("Tried:"), std::string::npos) << r.err;
  const auto verbose =
      run_program({bin("zeus"), "monitor", "energy", "--verbose", "--", "true"}, no_driver);
  EXPECT_EQ(verbose.exit_code, 2);
  EXPECT_NE(verbose.err.find("zeus: detail: no NVIDIA driver found"), std::string::npos)
      << verbose.err;
  EXPECT_NE(verbose.err.find("Tried:"), std::string::npos) << verbose.err;
  const auto env = run_program({bin("zeus"), "show-env", "--no-counter-check"}, no_driver);
  EXPECT_NE(env.out.find("Tried:"), std::string::npos) << env.out;
}

TEST(MonitorEnergy, CudaVisibleDevicesSelectsSimulatedGpusAsCudaDoes) {
  auto env = kSim;
  env.push_back("CUDA_VISIBLE_DEVICES=1,-1,0");
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--json", "--", "true"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["gpu_energy_j"].size(), 1u) << r.out;
  EXPECT_NE(r.err.find("'-1'"), std::string::npos) << "a note says what was hidden: " << r.err;
  env.back() = "CUDA_VISIBLE_DEVICES=-1";
  // Every GPU hidden: nothing to measure, and the reason is the hiding entry.
  const auto none = run_program({bin("zeus"), "monitor", "energy", "--json", "--", "true"}, env);
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("nothing to measure"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("entry '-1'"), std::string::npos) << none.err;
  const auto allowed =
      run_program({bin("zeus"), "monitor", "energy", "--json", "--allow-empty", "--", "true"}, env);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_TRUE(json::parse(allowed.out)["gpu_energy_j"].empty()) << allowed.out;
}

TEST(MonitorPower, TotalsIncludeCpuAndDramEnergy) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1'000'000);
  fake.add_zone("intel-rapl:0:0", "dram", 500'000);
  const auto r = run_program(
      {bin("zeus"), "monitor", "power", "--interval", "0.05", "--duration", "0.2", "--json"},
      {"ZEUS_GPU_BACKEND=sim", "ZEUS_SIM_GPUS=1", "ZEUS_POWERCAP_ROOT=" + fake.root()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto last_line = r.out.rfind('\n', r.out.size() - 2);  // the totals line
  const auto totals = json::parse(r.out.substr(last_line == std::string::npos ? 0 : last_line + 1));
  ASSERT_TRUE(totals.contains("cpu_energy_j")) << r.out;
  ASSERT_TRUE(totals.contains("dram_energy_j")) << r.out;
  const double gpu = totals["total_gpu_energy_j"].get<double>();
  const double cpu = totals["cpu_energy_j"]["0"].get<double>();
  const double dram = totals["dram_energy_j"]["0"].get<double>();
  EXPECT_DOUBLE_EQ(totals["total_energy_j"].get<double>(), gpu + cpu + dram);
}

}  // namespace
}  // namespace zeus::testing
