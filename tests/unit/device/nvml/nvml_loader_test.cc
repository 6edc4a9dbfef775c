// Loading, initializing and shutting down NVML; CUDA_VISIBLE_DEVICES; the
// old-driver variant with missing optional symbols; discovery.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nvml_fixture.h"
#include "zeus/device/devices.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace zeus::literals;

using NvmlLoaderTest = NvmlFakeTest;

TEST_F(NvmlLoaderTest, MissingLibraryIsNoDriverFound) {
  device::NvmlOptions o;
  o.library_path = "/nonexistent/libnvidia-ml.so.1";
  const Error e = error_of([&] { device::open_nvml_gpus(o); });
  EXPECT_EQ(e.code(), ErrorCode::kDriverNotLoaded);
  EXPECT_THAT(e.what(), StartsWith("no NVIDIA driver found"));
  EXPECT_THAT(e.what(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  EXPECT_THAT(e.what(), HasSubstr("ZEUS_NVML_LIBRARY"));
}

TEST_F(NvmlLoaderTest, ALibraryThatIsNotNvmlIsNoDriverFound) {
  device::NvmlOptions o;
  o.library_path = "libm.so.6";
  const Error e = error_of([&] { device::open_nvml_gpus(o); });
  EXPECT_EQ(e.code(), ErrorCode::kDriverNotLoaded);
  EXPECT_THAT(e.what(), StartsWith("no NVIDIA driver found"));
  EXPECT_THAT(e.what(), HasSubstr("nvmlInit_v2"));
}

TEST_F(NvmlLoaderTest, DriverNotLoadedAtInitIsNoDriverFound) {
  for (int rc :
       {nvml_rc::kDriverNotLoaded, nvml_rc::kLibraryNotFound, nvml_rc::kLibRmVersionMismatch}) {
    fake_.fail_next("nvmlInit_v2", rc);
    const Error e = error_of([&] { open(); });
    EXPECT_EQ(e.code(), ErrorCode::kDriverNotLoaded) << rc;
    EXPECT_THAT(e.what(), StartsWith("no NVIDIA driver found")) << rc;
    EXPECT_THAT(e.what(), HasSubstr("nvmlInit_v2"));
  }
  EXPECT_EQ(fake_.call_count("nvmlShutdown"), 0u);  // failed inits need no shutdown
}

TEST_F(NvmlLoaderTest, NoPermissionAtInitPointsAtDeviceFilesNotCapabilities) {
  fake_.fail_next("nvmlInit_v2", nvml_rc::kNoPermission);
  const Error e = error_of([&] { open(); });
  EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
  EXPECT_THAT(e.what(), HasSubstr("/dev/nvidia"));
  EXPECT_THAT(e.what(), Not(HasSubstr("CAP_SYS_ADMIN")));
}

TEST_F(NvmlLoaderTest, LibraryPathComesFromTheEnvironmentWhenNotGiven) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", fake_.path().c_str());
  device::NvmlOptions o;
  o.cuda_visible_devices = std::nullopt;
  device::NvmlGpuSet set = device::open_nvml_gpus(o);
  EXPECT_EQ(set.gpus.size(), 2u);
  EXPECT_EQ(fake_.call_count("nvmlInit_v2"), 1u);
}

TEST_F(NvmlLoaderTest, InitIsSharedAndShutDownWithTheLastGpu) {
  auto a = std::make_unique<device::NvmlGpuSet>(open());
  EXPECT_EQ(fake_.init_ref_count(), 1);
  auto b = std::make_unique<device::NvmlGpuSet>(open());
  EXPECT_EQ(fake_.call_count("nvmlInit_v2"), 1u);  // one NVML session for both sets
  std::unique_ptr<device::Gpu> kept = std::move(a->gpus[1]);
  a.reset();
  b.reset();
  EXPECT_EQ(fake_.init_ref_count(), 1);  // `kept` still holds the session
  EXPECT_EQ(fake_.call_count("nvmlShutdown"), 0u);
  EXPECT_DOUBLE_EQ(kept->total_energy().value(), 2000.0);
  kept.reset();
  EXPECT_EQ(fake_.init_ref_count(), 0);
  EXPECT_EQ(fake_.call_count("nvmlShutdown"), 1u);
  // A new open starts a new session.
  device::NvmlGpuSet again = open();
  EXPECT_EQ(fake_.call_count("nvmlInit_v2"), 2u);
}

TEST_F(NvmlLoaderTest, FailedOpenShutsNvmlDown) {
  EXPECT_EQ(error_of([&] { open("MIG-1"); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(fake_.init_ref_count(), 0);
  EXPECT_EQ(fake_.call_count("nvmlShutdown"), 1u);
}

TEST_F(NvmlLoaderTest, NoPermissionOnAGpuHandleNamesTheDeviceFiles) {
  fake_.fail_next("nvmlDeviceGetHandleByIndex_v2", nvml_rc::kNoPermission);
  const Error e = error_of([&] { open(); });
  EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
  EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceGetHandleByIndex_v2"));
  EXPECT_THAT(e.what(), HasSubstr("/dev/nvidia"));
}

TEST_F(NvmlLoaderTest, MissingVersionStringsAreEmpty) {
  fake_.fail_always("nvmlSystemGetDriverVersion", nvml_rc::kNotSupported);
  device::NvmlGpuSet set = open();
  EXPECT_EQ(set.driver_version, "");
  EXPECT_EQ(set.nvml_version, "12.550.54.15");
}

// ---- CUDA_VISIBLE_DEVICES ---------------------------------------------------

TEST_F(NvmlLoaderTest, CudaVisibleDevicesIndicesSelectAndReorder) {
  fake_.set_device_count(3);
  device::NvmlGpuSet set = open("2,0");
  ASSERT_EQ(set.gpus.size(), 2u);
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{2, 0}));
  EXPECT_EQ(set.gpus[0]->uuid(), "GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000002");
}

TEST_F(NvmlLoaderTest, CudaVisibleDevicesIsReadFromTheEnvironment) {
  ScopedEnv env("CUDA_VISIBLE_DEVICES", "1");
  device::NvmlOptions o;
  o.library_path = fake_.path();
  device::NvmlGpuSet set = device::open_nvml_gpus(o);
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{1}));
}

TEST_F(NvmlLoaderTest, CudaVisibleDevicesFullUuidUsesNvmlLookup) {
  fake_.set_device_count(3);
  device::NvmlGpuSet set = open("GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000002,1");
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{2, 1}));
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetHandleByUUID"), 1u);
}

TEST_F(NvmlLoaderTest, CudaVisibleDevicesUniqueUuidPrefix) {
  fake_.set_device_count(3);
  fake_.set_uuid(1, "GPU-ffee0011-2233-4455-6677-8899aabbccdd");
  device::NvmlGpuSet set = open("GPU-ffee");
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{1}));
  EXPECT_EQ(set.gpus[0]->uuid(), "GPU-ffee0011-2233-4455-6677-8899aabbccdd");
}

// As in CUDA: an invalid entry hides itself and every later one, with a note.
TEST_F(NvmlLoaderTest, CudaVisibleDevicesAmbiguousOrUnknownUuidHidesTheRest) {
  fake_.set_device_count(3);
  device::NvmlGpuSet set = open("1,GPU-1a2b,0");
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{1}));
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_THAT(set.notes[0], HasSubstr("matches 3 GPUs"));
  set = open("GPU-dead,0");
  EXPECT_TRUE(set.gpus.empty());
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_THAT(set.notes[0], HasSubstr("GPU-dead"));
}

TEST_F(NvmlLoaderTest, CudaVisibleDevicesMigIsInvalid) {
  const Error e = error_of([&] { open("MIG-4f1e0b2c-aaaa-bbbb-cccc-000000000000"); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("MIG"));
}

TEST_F(NvmlLoaderTest, CudaVisibleDevicesMissingIndexHidesItAndLaterOnes) {
  device::NvmlGpuSet set = open("0,5,1");
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{0}));
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_THAT(set.notes[0], HasSubstr("GPU 5"));
  EXPECT_TRUE(open("-1").gpus.empty()) << "-1 first hides every GPU";
}

TEST_F(NvmlLoaderTest, CudaVisibleDevicesEmptyHidesEveryGpuWithANote) {
  device::NvmlGpuSet set = open("");
  EXPECT_TRUE(set.gpus.empty());
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_THAT(set.notes[0], HasSubstr("empty"));
}

// ---- the fake keeps the real contracts --------------------------------------

TEST_F(NvmlLoaderTest, FakeEnforcesNvmlContracts) {
  void* h = dlopen(fake_.path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  auto get_count = reinterpret_cast<int (*)(unsigned*)>(dlsym(h, "nvmlDeviceGetCount_v2"));
  auto init = reinterpret_cast<int (*)()>(dlsym(h, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<int (*)()>(dlsym(h, "nvmlShutdown"));
  auto by_index =
      reinterpret_cast<int (*)(unsigned, void**)>(dlsym(h, "nvmlDeviceGetHandleByIndex_v2"));
  auto mem_clocks = reinterpret_cast<int (*)(void*, unsigned*, unsigned*)>(
      dlsym(h, "nvmlDeviceGetSupportedMemoryClocks"));
  auto temp_v = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(h, "nvmlDeviceGetTemperatureV"));
  unsigned count = 0;
  EXPECT_EQ(get_count(&count), nvml_rc::kUninitialized);
  EXPECT_EQ(shutdown(), nvml_rc::kUninitialized);
  ASSERT_EQ(init(), 0);
  EXPECT_EQ(get_count(&count), 0);
  void* dev = nullptr;
  EXPECT_EQ(by_index(2, &dev), nvml_rc::kInvalidArgument);
  ASSERT_EQ(by_index(0, &dev), 0);
  unsigned clocks[1];
  count = 1;
  EXPECT_EQ(mem_clocks(dev, &count, clocks), nvml_rc::kInsufficientSize);
  EXPECT_EQ(count, 2u);
  unsigned bad_version[3] = {2, 0, 0};  // version 2 is not nvmlTemperature_v1
  EXPECT_EQ(temp_v(dev, bad_version), 25);
  EXPECT_EQ(shutdown(), 0);
  dlclose(h);
}

// ---- an old driver without the optional entry points ------------------------

class NvmlOldDriverTest : public NvmlFakeTest {
 protected:
  NvmlOldDriverTest() : NvmlFakeTest(fake_nvml_old_path()) {}
};

TEST_F(NvmlOldDriverTest, WorksWithoutOptionalSymbols) {
  fake_.set_temperature(1, 71);
  device::NvmlGpuSet set = open();
  ASSERT_EQ(set.gpus.size(), 2u);
  EXPECT_EQ(set.nvml_version, "");
  EXPECT_EQ(set.driver_version, "550.54.15");
  EXPECT_DOUBLE_EQ(set.gpus[1]->temperature().value(), 71.0);
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetTemperature"), 1u);
}

TEST_F(NvmlOldDriverTest, MissingOptionalSymbolIsNotSupported) {
  device::NvmlGpuSet set = open();
  const Error e = error_of([&] { set.gpus[0]->set_memory_locked_clocks(1593_MHz, 2619_MHz); });
  EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  EXPECT_THAT(e.what(), HasSubstr("nvmlDeviceSetMemoryLockedClocks"));
  EXPECT_EQ(error_of([&] { set.gpus[0]->reset_memory_locked_clocks(); }).code(),
            ErrorCode::kNotSupported);
  // Everything else still works.
  set.gpus[0]->set_gpu_locked_clocks(900_MHz, 1500_MHz);
}

TEST_F(NvmlOldDriverTest, UuidsAreMatchedByComparingWithoutHandleByUuid) {
  fake_.set_device_count(3);
  device::NvmlGpuSet set = open("GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000002");
  EXPECT_EQ(set.nvml_indices, (std::vector<unsigned>{2}));
  EXPECT_EQ(fake_.call_count("nvmlDeviceGetUUID"), 3u + 1u);  // scan + the opened GPU
}

// ---- discovery ---------------------------------------------------------------

TEST_F(NvmlLoaderTest, DiscoveryWithTheNvmlBackend) {
  device::DiscoveryOptions o;
  o.gpu_backend = "nvml";
  o.nvml_library = fake_.path();
  o.cpus = false;
  device::DeviceInventory inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "nvml");
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(inv.gpu_physical_indices, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(inv.driver_version, "550.54.15");
  EXPECT_EQ(inv.gpus[1]->name(), "NVIDIA H100 80GB HBM3");
}

TEST_F(NvmlLoaderTest, DiscoveryAutoFindsNvml) {
  device::DiscoveryOptions o;
  o.gpu_backend = "auto";
  o.nvml_library = fake_.path();
  o.cpus = false;
  device::DeviceInventory inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "nvml");
  EXPECT_EQ(inv.gpus.size(), 2u);
}

TEST_F(NvmlLoaderTest, DiscoveryAutoWithoutDriverNotesItAndGoesOn) {
  device::DiscoveryOptions o;
  o.gpu_backend = "auto";
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.cpus = false;
  device::DeviceInventory inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "none");
  EXPECT_TRUE(inv.gpus.empty());
  // One line for the user, each library's own words in the details.
  ASSERT_EQ(inv.notes.size(), 1u);
  EXPECT_THAT(inv.notes[0], StartsWith("no NVIDIA driver found: cannot load "
                                       "/nonexistent/libnvidia-ml.so.1"));
  EXPECT_THAT(inv.notes[0], ::testing::EndsWith("; continuing without GPUs"));
  EXPECT_THAT(inv.notes[0], ::testing::Not(HasSubstr("install the NVIDIA driver")));
  EXPECT_THAT(inv.notes[0], ::testing::Not(HasSubstr("Tried:")));
  ASSERT_FALSE(inv.details.empty());
  EXPECT_THAT(inv.details[0], StartsWith("no NVIDIA driver found"));
  EXPECT_THAT(inv.details[0], HasSubstr("install the NVIDIA driver"));
}

TEST_F(NvmlLoaderTest, DiscoveryAutoStillRejectsABadCudaVisibleDevices) {
  ScopedEnv env("CUDA_VISIBLE_DEVICES", "MIG-1");
  device::DiscoveryOptions o;
  o.gpu_backend = "auto";
  o.nvml_library = fake_.path();
  o.cpus = false;
  EXPECT_EQ(error_of([&] { device::discover_devices(o); }).code(), ErrorCode::kInvalidArgument);
}

TEST_F(NvmlLoaderTest, DiscoveryNvmlWithoutDriverThrows) {
  device::DiscoveryOptions o;
  o.gpu_backend = "nvml";
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.cpus = false;
  const Error e = error_of([&] { device::discover_devices(o); });
  EXPECT_EQ(e.code(), ErrorCode::kDriverNotLoaded);
}

}  // namespace
}  // namespace zeus::testing
