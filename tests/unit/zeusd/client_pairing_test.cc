// GPU settings of a process's own GPUs go through the node's zeusd to the
// daemon GPU with the same PCI address, for AMD GPUs as for NVIDIA ones,
// whatever order HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES gives them; a
// GPU the daemon does not serve refuses its settings by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/amdsmi.h"
#include "fakes/amdsmi/fake_amdsmi_control.h"
#include "unit/device/nvml/nvml_fixture.h"
#include "zeus/device/devices.h"
#include "zeus/device/zeusd_backend.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using zeus::testing::FakeAmdSmi;
using zeus::testing::ScopedEnv;

// The node's AMD GPUs as zeusd opens them: every GPU, or those `visible`.
DaemonDevices amd_daemon_devices(const FakeAmdSmi& amd, std::optional<std::string> visible) {
  amdsmi_internal::AmdSmiOptions o;
  o.library_path = amd.path();
  o.hip_visible_devices = std::move(visible);  // nullopt: the environment, which SetUp clears
  DaemonDevices devices;
  for (auto& g : amdsmi_internal::open_amdsmi_gpus(o).gpus) devices.gpus.push_back(std::move(g));
  return devices;
}

device::DiscoveryOptions amd_discovery(const FakeAmdSmi& amd) {
  device::DiscoveryOptions o;
  o.gpu_backend = "amdsmi";
  o.amdsmi_library = amd.path();
  o.cpus = false;
  o.soc = false;
  return o;
}

class ZeusdGpuPairingEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    amd_.reset();
    for (const char* v : {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}) {
      ::unsetenv(v);
    }
  }
  FakeAmdSmi amd_{26};
};

TEST_F(ZeusdGpuPairingEndToEnd, AmdPowerLimitsGoToTheGpuWithTheSamePciAddress) {
  RunningDaemon d(DaemonOptions{}, amd_daemon_devices(amd_, std::nullopt));
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv hip("HIP_VISIBLE_DEVICES", "1,0");  // this process's GPU 0 is the node's GPU 1
  device::DeviceInventory inv = device::discover_devices(amd_discovery(amd_));
  EXPECT_EQ(inv.gpu_backend, "amdsmi+zeusd");
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(inv.gpus[0]->pci_bus_id(), "0000:c2:00.0");  // reads stay local
  inv.gpus[0]->set_power_limit(Milliwatts(300000));
  EXPECT_EQ(amd_.power_cap_uw(1), 300000000u);  // the node's GPU 1, not GPU 0
  EXPECT_EQ(amd_.power_cap_uw(0), 750000000u);
  EXPECT_EQ(d.daemon->active_leases(), 1u);  // through zeusd, under this process's lease
  inv.gpus[1]->set_power_limit(Milliwatts(250000));
  EXPECT_EQ(amd_.power_cap_uw(0), 250000000u);
}

TEST_F(ZeusdGpuPairingEndToEnd, AGpuTheDaemonDoesNotServeRefusesItsSettingsByName) {
  // zeusd was started seeing only the node's GPU 0 (0000:c1:00.0).
  RunningDaemon d(DaemonOptions{}, amd_daemon_devices(amd_, "0"));
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv hip("HIP_VISIBLE_DEVICES", nullptr);
  device::DeviceInventory inv = device::discover_devices(amd_discovery(amd_));
  ASSERT_EQ(inv.gpus.size(), 2u);
  inv.gpus[0]->set_power_limit(Milliwatts(300000));
  EXPECT_EQ(amd_.power_cap_uw(0), 300000000u);
  try {
    inv.gpus[1]->set_power_limit(Milliwatts(300000));
    FAIL() << "a GPU zeusd does not serve took a setting";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("does not serve GPU 1 (0000:c2:00.0)"));
  }
  EXPECT_EQ(amd_.power_cap_uw(1), 750000000u);       // untouched
  EXPECT_GT(inv.gpus[1]->power_limit().value(), 0);  // reads still work
  bool noted = false;
  for (const auto& n : inv.notes) noted |= n.find("is not among the GPUs zeusd serves") != n.npos;
  EXPECT_TRUE(noted);
}

TEST_F(ZeusdGpuPairingEndToEnd, NvidiaGpusPairByPciAddressUnderCudaVisibleDevices) {
  FakeNode node;  // two fake H100s, 00000000:18:00.0 and 00000000:38:00.0
  RunningDaemon d(DaemonOptions{}, node.devices);
  ScopedEnv sock("ZEUSD_SOCK_PATH", (d.dir + "/zeusd.sock").c_str());
  ScopedEnv cuda("CUDA_VISIBLE_DEVICES", "1");
  device::DiscoveryOptions o;
  o.gpu_backend = "nvml";
  o.nvml_library = node.nvml.path();
  o.cpus = false;
  o.soc = false;
  device::DeviceInventory inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "nvml+zeusd");
  ASSERT_EQ(inv.gpus.size(), 1u);
  inv.gpus[0]->set_power_limit(Milliwatts(250000));
  EXPECT_EQ(node.nvml.power_limit_mw(1), 250000u);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
}

}  // namespace
}  // namespace zeus::zeusd::testing
