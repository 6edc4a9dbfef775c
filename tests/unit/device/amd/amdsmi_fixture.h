// Shared setup for the AMD SMI backend tests: a reset fake of the chosen ABI,
// options that point the backend's search at it and fix the visibility
// variables (so the environment of the test run does not leak in), and a
// temporary directory.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "device/amdsmi.h"
#include "fakes/amdsmi/fake_amdsmi_control.h"
#include "support/temp_dir.h"

namespace zeus::testing {

class AmdSmiTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    fake_ = std::make_unique<FakeAmdSmi>(abi());
    fake_->reset();
  }
  virtual int abi() const { return GetParam(); }

  amdsmi_internal::AmdSmiOptions options() const {
    amdsmi_internal::AmdSmiOptions o;
    o.amdsmi_lib_dir = fake_->dir();
    o.rocr_visible_devices = std::nullopt;
    o.hip_visible_devices = std::nullopt;
    o.opt_dir = tmp_.path();
    return o;
  }
  amdsmi_internal::AmdSmiGpuSet open(amdsmi_internal::AmdSmiOptions o) const {
    // Visibility comes from the options; an unset option reads the
    // environment, which the tests clear.
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("ZEUS_AMDSMI_LIBRARY");
    return amdsmi_internal::open_amdsmi_gpus(o);
  }
  amdsmi_internal::AmdSmiGpuSet open() const { return open(options()); }

  const FakeAmdSmi& fake() const { return *fake_; }

  TempDir tmp_;
  std::unique_ptr<FakeAmdSmi> fake_;
};

}  // namespace zeus::testing
