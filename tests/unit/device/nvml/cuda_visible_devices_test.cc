#include "device/nvml/cuda_visible_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/util/error.h"

namespace zeus::nvml_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Four GPUs with these UUIDs.
const std::vector<std::string> kUuids = {"GPU-aaaa1111", "GPU-aaaa2222", "GPU-bbbb3333",
                                         "GPU-cccc4444"};

VisibleDevices apply(std::string_view value) {
  return apply_cuda_visible_devices(value, 4, [](std::string_view prefix) {
    std::vector<unsigned> out;
    for (unsigned i = 0; i < kUuids.size(); ++i) {
      if (uuid_has_prefix(kUuids[i], prefix)) out.push_back(i);
    }
    return out;
  });
}

TEST(CudaVisibleDevices, ValidEntriesKeepTheirOrder) {
  const auto v = apply(" 2, 0 ,GPU-cccc");
  EXPECT_THAT(v.indices, ElementsAre(2, 0, 3));
  EXPECT_THAT(v.hidden, IsEmpty());
  EXPECT_THAT(apply("gpu-BBBB").indices, ElementsAre(2)) << "UUID prefixes ignore case";
}

// CUDA's rule: an invalid entry hides itself and every later entry.
TEST(CudaVisibleDevices, AnInvalidEntryHidesItAndEveryLaterOne) {
  struct Case {
    const char* value;
    std::vector<unsigned> visible;
    const char* why;
  };
  for (const Case& c :
       {Case{"1,-1,0", {1}, "'-1'"}, Case{"0,7,1", {0}, "names GPU 7 of 4"},
        Case{"3,x,0", {3}, "neither a GPU index"}, Case{"1,GPU-aaaa,0", {1}, "matches 2 GPUs"},
        Case{"1,GPU-ffff,0", {1}, "matches no GPU"}, Case{"1,1,0", {1}, "a second time"},
        Case{"0,,1", {0}, "''"}, Case{"2,4294967297", {2}, "neither a GPU index"}}) {
    const auto v = apply(c.value);
    EXPECT_EQ(v.indices, c.visible) << c.value;
    EXPECT_THAT(v.hidden, HasSubstr(c.why)) << c.value;
  }
}

TEST(CudaVisibleDevices, AnInvalidFirstEntryOrAnEmptyValueHidesEveryGpu) {
  for (const char* value : {"-1", "-1,0,1", "GPU-none", "", "  "}) {
    const auto v = apply(value);
    EXPECT_THAT(v.indices, IsEmpty()) << value;
    EXPECT_FALSE(v.hidden.empty()) << value;
  }
}

TEST(CudaVisibleDevices, MigInstancesAreAnErrorSayingWhy) {
  try {
    (void)apply("MIG-GPU-aaaa1111/1/0");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("MIG slice"));
  }
}

TEST(CudaVisibleDevices, EscapesTheEntryInItsNote) {
  EXPECT_THAT(apply("0,\x1b[31mred").hidden, HasSubstr("\\x1b"));
}

}  // namespace
}  // namespace zeus::nvml_internal
