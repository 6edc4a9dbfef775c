// The NVML backend against NVIDIA's real libnvidia-ml.so.1 (driver branch
// 535, from Debian non-free; tests/real_nvml). Without a GPU the real library
// loads, exports its API and answers nvmlInit_v2 with "Driver Not Loaded":
// enough to hold the loader's symbol list, its fallbacks and its error path to
// the real binary rather than to our fake.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "device/dynamic_library.h"
#include "device/nvml/nvml_library.h"
#include "device/nvml/nvml_processes.h"
#include "nvml_fixture.h"
#include "real_nvml/real_nvml.h"
#include "zeus/device/devices.h"

namespace zeus::testing {
namespace {

using nvml_internal::NvmlLibrary;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The optional symbols `path` does not export, after checking that it
// exports every required one.
std::set<std::string> missing_optional_symbols(const std::string& path) {
  device_internal::DynamicLibrary library(path);
  EXPECT_TRUE(library.is_open()) << path << ": " << library.error();
  std::vector<NvmlLibrary::Lookup> lookups;
  NvmlLibrary::resolve(library, &lookups);
  EXPECT_GT(lookups.size(), 20u);
  std::set<std::string> missing;
  for (const auto& lookup : lookups) {
    if (lookup.required) {
      EXPECT_TRUE(lookup.found) << path << " lacks the required " << lookup.symbol;
    } else if (!lookup.found) {
      missing.emplace(lookup.symbol);
    }
  }
  return missing;
}

std::string real_nvml_versions() {
  const std::filesystem::path lib = real_nvml_library();
  std::ifstream in(lib.parent_path().parent_path() / "VERSIONS");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RealNvml, IsTheDriverBranch535LibraryAndItsHeader) {
  ZEUS_REQUIRE_REAL_NVML();
  EXPECT_THAT(real_nvml_versions(), HasSubstr("libnvidia-ml1 535."));
  EXPECT_THAT(real_nvml_versions(), HasSubstr("libnvidia-ml-dev 11.8"));
  // The ABI check (tests/real_nvml/nvml_abi_check.cc) is compiled against this
  // header in the same build, so a mismatch would not have built this binary.
  const std::filesystem::path lib = real_nvml_library();
  EXPECT_TRUE(std::filesystem::exists(lib.parent_path().parent_path() / "include" / "nvml.h"));
}

TEST(RealNvml, EverySymbolTheLoaderLooksUpResolvesOrHasATestedFallback) {
  ZEUS_REQUIRE_REAL_NVML();
  const std::set<std::string> missing = missing_optional_symbols(real_nvml_library());
  // Driver branch 535 predates nvmlDeviceGetTemperatureV (header 12.8, R570):
  // users on it read temperatures through nvmlDeviceGetTemperature. Any other
  // symbol missing here needs a fallback and a test of it first.
  EXPECT_THAT(missing, ElementsAre("nvmlDeviceGetTemperatureV"));
  // Each fallback is exercised by NvmlOldDriverTest on the old fake driver,
  // which must therefore lack at least what the real 535 lacks.
  const std::set<std::string> old_fake_missing = missing_optional_symbols(fake_nvml_old_path());
  for (const auto& symbol : missing) {
    EXPECT_TRUE(old_fake_missing.contains(symbol))
        << symbol << " is missing from the real NVML but not from the old fake driver, so "
        << "no test covers the fallback";
  }
}

TEST(RealNvml, TheCurrentFakeExportsEverythingTheLoaderLooksUp) {
  // The fake stands in for a current driver; if it lacked a symbol, the
  // tests of that feature would only ever see the fallback.
  EXPECT_THAT(missing_optional_symbols(fake_nvml_path()), ::testing::IsEmpty());
}

// Without a driver no GPU handle exists, so Gpu::process_utilization and its
// siblings cannot be reached; what can be checked is that each entry point
// they call resolves, takes our declared types, and answers what NVML answers
// without a session (UNINITIALIZED), and which process-info layout the real
// 535 driver's _v3 gets.
TEST(RealNvml, TheProcessEntryPointsAnswerUninitializedWithoutASession) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  device_internal::DynamicLibrary library(real_nvml_library());
  ASSERT_TRUE(library.is_open()) << library.error();
  const NvmlLibrary::Api api = NvmlLibrary::resolve(library);
  const nvml_abi::nvmlDevice_t none = nullptr;
  unsigned count = 0;
  int mode = 0;
  nvml_abi::nvmlAccountingStats_t stats{};
  nvml_abi::nvmlDevice_t mig = nullptr;
  nvml_abi::nvmlDeviceAttributes_t attributes{};
  constexpr int kUninitialized = nvml_abi::kErrorUninitialized;
  EXPECT_EQ(api.device_get_process_utilization(none, nullptr, &count, 0), kUninitialized);
  EXPECT_EQ(api.device_get_accounting_mode(none, &mode), kUninitialized);
  EXPECT_EQ(api.device_get_accounting_pids(none, &count, nullptr), kUninitialized);
  EXPECT_EQ(api.device_get_accounting_stats(none, 1, &stats), kUninitialized);
  EXPECT_EQ(api.device_get_compute_running_processes_v3(none, &count, nullptr), kUninitialized);
  EXPECT_EQ(api.device_get_compute_running_processes_v2(none, &count, nullptr), kUninitialized);
  EXPECT_EQ(api.device_get_max_mig_device_count(none, &count), kUninitialized);
  EXPECT_EQ(api.device_get_mig_device_handle_by_index(none, 0, &mig), kUninitialized);
  EXPECT_EQ(api.device_get_gpu_instance_id(none, &count), kUninitialized);
  EXPECT_EQ(api.device_get_attributes_v2(none, &attributes), kUninitialized);
  // 535.261 exports nvmlDeviceGetRunningProcessDetailList: _v3 writes the
  // 24-byte entries of the 11.8 header, not early R535's 32-byte ones.
  EXPECT_TRUE(api.exports_conf_compute_mem_size_info);
  EXPECT_TRUE(api.exports_running_process_detail_list);
  const nvml_internal::ComputeProcessesEntry entry = nvml_internal::compute_processes_entry(api);
  EXPECT_EQ(entry.fn, api.device_get_compute_running_processes_v3);
  EXPECT_EQ(entry.entry_size, sizeof(nvml_abi::nvmlProcessInfo_v2_t));
}

TEST(RealNvml, InitWithoutADriverIsNoDriverFoundWithNvmlsOwnWords) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  ScopedEnv no_visible("CUDA_VISIBLE_DEVICES", nullptr);
  device::NvmlOptions o;
  o.library_path = real_nvml_library();
  const Error e = error_of([&] { device::open_nvml_gpus(o); });
  EXPECT_EQ(e.code(), ErrorCode::kDriverNotLoaded);
  EXPECT_EQ(exit_code_for(e.code()), kExitFailure);
  EXPECT_THAT(e.what(), StartsWith("no NVIDIA driver found: initializing NVML from " +
                                   real_nvml_library() + ": nvmlInit_v2 returned"));
  EXPECT_THAT(e.what(), HasSubstr("'Driver Not Loaded' (NVML error 9)"));
  EXPECT_THAT(e.what(), HasSubstr("install the NVIDIA driver"));
  EXPECT_THAT(e.what(), HasSubstr("ZEUS_GPU_BACKEND=sim"));
  // The failed init held no session: loading it again fails the same way.
  EXPECT_EQ(error_of([&] { device::open_nvml_gpus(o); }).code(), ErrorCode::kDriverNotLoaded);
}

TEST(RealNvml, AutoDiscoveryWithoutADriverContinuesWithoutGpus) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  ScopedEnv no_visible("CUDA_VISIBLE_DEVICES", nullptr);
  device::DiscoveryOptions o;
  o.gpu_backend = "auto";
  o.nvml_library = real_nvml_library();
  o.amdsmi_library = "/nonexistent/libamd_smi.so";
  o.cpus = false;
  o.use_zeusd = false;
  const device::DeviceInventory inv = device::discover_devices(o);
  EXPECT_TRUE(inv.gpus.empty());
  EXPECT_EQ(inv.gpu_backend, "none");
  const bool says_what = std::ranges::any_of(inv.notes, [](const std::string& note) {
    return note.ends_with("; continuing without GPUs");
  });
  EXPECT_TRUE(says_what) << ::testing::PrintToString(inv.notes);
  const bool details_say_why = std::ranges::any_of(inv.details, [](const std::string& detail) {
    return detail.find("'Driver Not Loaded'") != std::string::npos;
  });
  EXPECT_TRUE(details_say_why) << ::testing::PrintToString(inv.details);
}

TEST(RealNvml, TheNvmlBackendWithoutADriverFailsDiscovery) {
  ZEUS_REQUIRE_REAL_NVML();
  ZEUS_REQUIRE_NO_NVIDIA_DRIVER();
  ScopedEnv no_visible("CUDA_VISIBLE_DEVICES", nullptr);
  device::DiscoveryOptions o;
  o.gpu_backend = "nvml";
  o.nvml_library = real_nvml_library();
  o.cpus = false;
  o.use_zeusd = false;
  const Error e = error_of([&] { device::discover_devices(o); });
  EXPECT_EQ(e.code(), ErrorCode::kDriverNotLoaded);
  EXPECT_THAT(e.what(), HasSubstr("'Driver Not Loaded'"));
}

}  // namespace
}  // namespace zeus::testing
