// Shared fixture for the NVML backend tests: a reset fake NVML and a clean
// environment (no CUDA_VISIBLE_DEVICES / ZEUS_NVML_LIBRARY from the caller).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include "fakes/nvml/fake_nvml_control.h"
#include "zeus/device/nvml.h"
#include "zeus/util/error.h"

namespace zeus::testing {

// Sets or unsets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

class NvmlFakeTest : public ::testing::Test {
 protected:
  explicit NvmlFakeTest(std::string path = fake_nvml_path()) : fake_(std::move(path)) {}
  void SetUp() override { fake_.reset(); }
  void TearDown() override {
    // Every test must leave NVML shut down: nothing may leak a session.
    EXPECT_EQ(fake_.init_ref_count(), 0);
  }

  device::NvmlOptions options(std::optional<std::string> visible = std::nullopt) const {
    device::NvmlOptions o;
    o.library_path = fake_.path();
    o.cuda_visible_devices = std::move(visible);
    return o;
  }
  device::NvmlGpuSet open(std::optional<std::string> visible = std::nullopt) const {
    return device::open_nvml_gpus(options(std::move(visible)));
  }

  FakeNvml fake_;
  ScopedEnv no_cuda_visible_{"CUDA_VISIBLE_DEVICES", nullptr};
  ScopedEnv no_library_env_{"ZEUS_NVML_LIBRARY", nullptr};
};

// Runs f and returns the zeus::Error it throws (fails the test if none).
inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a zeus::Error";
  return Error(ErrorCode::kInternal, "no error thrown");
}

}  // namespace zeus::testing
