#include "device/nvml/cuda_visible_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/util/error.h"

namespace zeus::nvml_internal {
namespace {

using ::testing::HasSubstr;
using Kind = VisibleDevice::Kind;

ErrorCode code_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.code();
  }
  ADD_FAILURE() << "expected a zeus::Error";
  return ErrorCode::kInternal;
}

TEST(CudaVisibleDevicesParse, IntegerListKeepsOrderAndIgnoresSpaces) {
  const auto entries = parse_cuda_visible_devices(" 2 , 0,1 ");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].kind, Kind::kIndex);
  EXPECT_EQ(entries[0].index, 2u);
  EXPECT_EQ(entries[1].index, 0u);
  EXPECT_EQ(entries[2].index, 1u);
}

TEST(CudaVisibleDevicesParse, EmptyOrBlankMeansNoDevices) {
  EXPECT_TRUE(parse_cuda_visible_devices("").empty());
  EXPECT_TRUE(parse_cuda_visible_devices("  ").empty());
}

TEST(CudaVisibleDevicesParse, GpuUuidEntriesAreKeptWhole) {
  const auto entries = parse_cuda_visible_devices("GPU-8932f937,1");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].kind, Kind::kUuid);
  EXPECT_EQ(entries[0].uuid, "GPU-8932f937");
  EXPECT_EQ(entries[1].kind, Kind::kIndex);
}

TEST(CudaVisibleDevicesParse, MigEntriesAreRejectedWithReason) {
  std::string message;
  EXPECT_EQ(code_of([] { parse_cuda_visible_devices("MIG-GPU-1234/1/0"); }, &message),
            ErrorCode::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("MIG"));
  EXPECT_THAT(message, HasSubstr("NVML cannot measure"));
  EXPECT_EQ(code_of([] { parse_cuda_visible_devices("0,MIG-5a6b"); }), ErrorCode::kInvalidArgument);
}

TEST(CudaVisibleDevicesParse, MalformedEntriesAreRejected) {
  for (const char* bad : {"0,,1", "0,", "abc", "-1", "1.5", "GPU-", "0x1"}) {
    std::string message;
    EXPECT_EQ(code_of([&] { parse_cuda_visible_devices(bad); }, &message),
              ErrorCode::kInvalidArgument)
        << bad;
    EXPECT_THAT(message, HasSubstr("CUDA_VISIBLE_DEVICES")) << bad;
  }
}

std::vector<unsigned> no_uuids(std::string_view) { return {}; }

TEST(CudaVisibleDevicesResolve, IndicesMapInOrder) {
  const auto entries = parse_cuda_visible_devices("3,1");
  EXPECT_EQ(resolve_visible_devices(entries, 4, no_uuids), (std::vector<unsigned>{3, 1}));
}

TEST(CudaVisibleDevicesResolve, MissingIndexNamesTheValue) {
  std::string message;
  const auto entries = parse_cuda_visible_devices("0,5");
  EXPECT_EQ(code_of([&] { resolve_visible_devices(entries, 2, no_uuids); }, &message),
            ErrorCode::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("GPU 5"));
  EXPECT_THAT(message, HasSubstr("only 2"));
}

TEST(CudaVisibleDevicesResolve, UuidNeedsExactlyOneMatch) {
  const auto entries = parse_cuda_visible_devices("GPU-ab");
  EXPECT_EQ(resolve_visible_devices(entries, 3,
                                    [](std::string_view p) {
                                      EXPECT_EQ(p, "GPU-ab");
                                      return std::vector<unsigned>{2};
                                    }),
            (std::vector<unsigned>{2}));
  std::string message;
  EXPECT_EQ(code_of([&] { resolve_visible_devices(entries, 3, no_uuids); }, &message),
            ErrorCode::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("matches no GPU"));
  EXPECT_EQ(code_of(
                [&] {
                  resolve_visible_devices(entries, 3, [](std::string_view) {
                    return std::vector<unsigned>{0, 1};
                  });
                },
                &message),
            ErrorCode::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("matches 2 GPUs"));
}

TEST(CudaVisibleDevicesResolve, DuplicatesAreRejected) {
  const auto entries = parse_cuda_visible_devices("1,GPU-x");
  std::string message;
  EXPECT_EQ(code_of(
                [&] {
                  resolve_visible_devices(
                      entries, 2, [](std::string_view) { return std::vector<unsigned>{1}; });
                },
                &message),
            ErrorCode::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("more than once"));
}

TEST(CudaVisibleDevicesResolve, UuidPrefixIgnoresCase) {
  EXPECT_TRUE(uuid_has_prefix("GPU-ABCdef-1", "gpu-abcDEF"));
  EXPECT_FALSE(uuid_has_prefix("GPU-abc", "GPU-abcd"));
  EXPECT_FALSE(uuid_has_prefix("GPU-abd", "GPU-abc"));
}

}  // namespace
}  // namespace zeus::nvml_internal
