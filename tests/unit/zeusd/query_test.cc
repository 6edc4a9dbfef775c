// Query strings as upstream's serde reads them: unknown and duplicate
// fields, strict booleans and integers, device id lists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/util/error.h"
#include "zeus/zeusd/api_group.h"
#include "zeusd/query.h"

namespace zeus::zeusd {
namespace {

using ::testing::HasSubstr;
using Q = std::vector<std::pair<std::string, std::string>>;

TEST(Query, FieldsTypesAndRefusals) {
  const Q q = {{"gpu_ids", "0,1"}, {"block", "true"}, {"power_limit_mw", "4294967295"}};
  QueryFields f(q, {"gpu_ids", "block", "power_limit_mw"});
  EXPECT_TRUE(f.boolean("block"));
  EXPECT_EQ(f.u32("power_limit_mw"), 4294967295u);
  EXPECT_EQ(f.get("gpu_ids"), "0,1");
  EXPECT_FALSE(f.get("other"));
  EXPECT_THAT(
      [&] {
        QueryFields(q, {"gpu_ids", "block"});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("unknown field `power_limit_mw`")));
  EXPECT_THAT(
      [] {
        QueryFields(Q{{"a", "1"}, {"a", "2"}}, {"a"});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("duplicate field `a`")));
  for (const char* b : {"True", "1", "yes", "", "true "}) {
    const Q qb = {{"block", b}};
    EXPECT_THROW(QueryFields(qb, {"block"}).boolean("block"), Error) << b;
  }
  for (const char* n : {"-1", "4294967296", "1.5", "", "0x10", " 1", "1e3"}) {
    const Q qn = {{"n", n}};
    EXPECT_THROW(QueryFields(qn, {"n"}).u32("n"), Error) << n;
  }
  const Q qs = {{"ttl_s", "0.5"}};
  EXPECT_EQ(QueryFields(qs, {"ttl_s"}).optional_seconds("ttl_s", 10), 0.5);
  for (const char* s : {"0", "-1", "nan", "inf", "11", "x"}) {
    const Q qx = {{"ttl_s", s}};
    EXPECT_THROW(QueryFields(qx, {"ttl_s"}).optional_seconds("ttl_s", 10), Error) << s;
  }
}

TEST(Query, DeviceIds) {
  EXPECT_EQ(parse_device_ids("2, 0,1,2", "GPU"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_device_ids("7", "CPU"), (std::vector<int>{7}));
  EXPECT_THAT(
      [] { parse_device_ids(" ", "GPU"); },
      ::testing::ThrowsMessage<Error>(HasSubstr("gpu_ids must contain at least one GPU index")));
  EXPECT_THAT([] { parse_device_ids("1,,2", "CPU"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("cpu_ids contains an empty CPU index")));
  for (const char* bad : {"-1", "a", "1;2", "99999999999", "1.0"}) {
    EXPECT_THROW(parse_device_ids(bad, "GPU"), Error) << bad;
  }
}

TEST(ApiGroups, NamesScopesAndRoot) {
  EXPECT_EQ(parse_api_groups("gpu-read,cpu-read", "--enable"),
            (std::vector<ApiGroup>{ApiGroup::kGpuRead, ApiGroup::kCpuRead}));
  EXPECT_THROW(parse_api_groups("gpu-write", "--enable"), Error);
  EXPECT_THROW(parse_api_groups("gpu-read,gpu-read", "--enable"), Error);
  EXPECT_EQ(required_scope("/gpu/set_power_limit"), ApiGroup::kGpuControl);
  EXPECT_EQ(required_scope("/gpu/reset_locked_clocks"), ApiGroup::kGpuControl);
  EXPECT_EQ(required_scope("/gpu/get_power"), ApiGroup::kGpuRead);
  EXPECT_EQ(required_scope("/gpu/stream_power"), ApiGroup::kGpuRead);
  EXPECT_EQ(required_scope("/cpu/get_power"), ApiGroup::kCpuRead);
  EXPECT_EQ(required_scope("/lease/acquire"), ApiGroup::kGpuControl);
  EXPECT_EQ(required_scope("/discover"), std::nullopt);
  EXPECT_EQ(required_scope("/time"), std::nullopt);
  EXPECT_TRUE(api_group_needs_root(ApiGroup::kGpuControl, false));
  EXPECT_FALSE(api_group_needs_root(ApiGroup::kGpuControl, true));
  EXPECT_TRUE(api_group_needs_root(ApiGroup::kCpuRead, true));
  EXPECT_FALSE(api_group_needs_root(ApiGroup::kGpuRead, false));
}

}  // namespace
}  // namespace zeus::zeusd
