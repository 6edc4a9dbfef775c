// The real NVML library that the build fetched into <build>/real_nvml
// (tests/real_nvml/CMakeLists.txt). Looked up at run time, like the Python
// test does, so the one folder decides: <build>/real_nvml/UNAVAILABLE holds
// the reason when the build could not fetch it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace zeus::testing {

inline std::filesystem::path real_nvml_dir() {
  return std::filesystem::path(ZEUS_BINARY_DIR) / "real_nvml";
}

// Why the real library is not there, or "" when it is.
inline std::string real_nvml_missing() {
  const std::filesystem::path dir = real_nvml_dir();
  if (std::ifstream why(dir / "UNAVAILABLE"); why) {
    std::stringstream text;
    text << why.rdbuf();
    return text.str();
  }
  if (!std::filesystem::exists(dir / ".complete") ||
      !std::filesystem::exists(dir / "lib" / "libnvidia-ml.so.1")) {
    return (dir / "lib" / "libnvidia-ml.so.1").string() + " is missing; re-run cmake";
  }
  return "";
}

// The path of NVIDIA's libnvidia-ml.so.1 in the build tree, or "".
inline std::string real_nvml_library() {
  return real_nvml_missing().empty() ? (real_nvml_dir() / "lib" / "libnvidia-ml.so.1").string()
                                     : "";
}

// CI=true: what CI services set, and what .ci/run is run with.
inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

// A loaded NVIDIA kernel module changes what nvmlInit_v2 answers.
inline bool host_has_nvidia_driver() {
  return std::filesystem::exists("/proc/driver/nvidia/version");
}

}  // namespace zeus::testing

// Skips the test, saying why, when the real NVML library is not there; under
// CI=true fails it instead, so CI cannot pass without having loaded it.
#define ZEUS_REQUIRE_REAL_NVML()                                                      \
  do {                                                                                \
    if (const std::string why = ::zeus::testing::real_nvml_missing(); !why.empty()) { \
      if (::zeus::testing::running_in_ci()) {                                         \
        FAIL() << "CI=true but the real NVML library is not available: " << why;      \
      }                                                                               \
      GTEST_SKIP() << "the real NVML library is not available: " << why;              \
    }                                                                                 \
  } while (false)

// Skips the test when the host has an NVIDIA kernel driver: the test is about
// what NVML answers without one (it answers differently, and the 535 library
// would not match another driver's module).
#define ZEUS_REQUIRE_NO_NVIDIA_DRIVER()                                                   \
  do {                                                                                    \
    if (::zeus::testing::host_has_nvidia_driver()) {                                      \
      GTEST_SKIP() << "this host has an NVIDIA kernel driver (/proc/driver/nvidia); the " \
                      "test covers hosts without one";                                    \
    }                                                                                     \
  } while (false)
