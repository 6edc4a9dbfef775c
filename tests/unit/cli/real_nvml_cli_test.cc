// `zeus show-env` and `zeus monitor energy` with NVIDIA's real NVML library
// (driver branch 535, from Debian non-free; tests/real_nvml) on a host without
// an NVIDIA driver: what a user sees who installed the library but whose
// driver is not loaded (docs/measuring.md, "No NVIDIA driver").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "fakes/powercap/fake_powercap.h"
#include "real_nvml/real_nvml.h"

namespace zeus::testing {
namespace {

using nlohmann::json;

std::vector<std::string> real_nvml_env(const std::string& backend, const std::string& powercap) {
  return {"ZEUS_NVML_LIBRARY=" + real_nvml_library(), "ZEUS_GPU_BACKEND=" + backend,
          "ZEUS_AMDSMI_LIBRARY=/nonexistent/libamd_smi.so", "ZEUS_POWERCAP_ROOT=" + powercap};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RealNvmlCli, ShowEnvSaysTheDriverIsNotLoadedAndGoesOn) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  const auto r = run_program({bin("zeus"), "show-env", "--json"},
                             real_nvml_env("auto", "/nonexistent/powercap"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpu_backend"], "none");
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_TRUE(contains(j.dump(), "Driver Not Loaded")) << r.out;
  EXPECT_TRUE(contains(j.dump(), real_nvml_library())) << r.out;
  const auto text =
      run_program({bin("zeus"), "show-env"}, real_nvml_env("auto", "/nonexistent/powercap"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out + text.err, "no NVIDIA driver found")) << text.out << text.err;
}

TEST(RealNvmlCli, ShowEnvWithTheNvmlBackendFailsWithTheDriverMessage) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  const auto r =
      run_program({bin("zeus"), "show-env"}, real_nvml_env("nvml", "/nonexistent/powercap"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver found")) << r.err;
  EXPECT_TRUE(contains(r.err, "nvmlInit_v2 returned 'Driver Not Loaded' (NVML error 9)")) << r.err;
  EXPECT_TRUE(contains(r.err, "install the NVIDIA driver")) << r.err;
}

TEST(RealNvmlCli, MonitorEnergyMeasuresTheCpusAndSaysWhyThereAreNoGpus) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  FakePowercap powercap;
  powercap.add_zone("intel-rapl:0", "package-0", 1'000'000);
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--json", "--", "true"},
                             real_nvml_env("auto", powercap.root()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_TRUE(j["gpu_energy_j"].empty()) << r.out;
  EXPECT_TRUE(j["cpu_energy_j"].contains("0")) << r.out;
  EXPECT_TRUE(contains(r.err, "Driver Not Loaded")) << r.err;
}

TEST(RealNvmlCli, MonitorEnergyWithNothingElseToMeasureIsAnErrorThatNamesTheDriver) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  const auto r = run_program({bin("zeus"), "monitor", "energy", "--", "true"},
                             real_nvml_env("auto", "/nonexistent/powercap"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "nothing to measure")) << r.err;
  EXPECT_TRUE(contains(r.err, "Driver Not Loaded")) << r.err;
  // Asked for NVML explicitly, the driver problem itself is the error.
  const auto nvml = run_program({bin("zeus"), "monitor", "energy", "--", "true"},
                                real_nvml_env("nvml", "/nonexistent/powercap"));
  EXPECT_EQ(nvml.exit_code, 1) << nvml.err;
  EXPECT_TRUE(contains(nvml.err, "nvmlInit_v2 returned 'Driver Not Loaded'")) << nvml.err;
}

}  // namespace
}  // namespace zeus::testing
