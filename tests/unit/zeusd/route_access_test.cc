// A zeusd route declares who may call it where it is registered; the
// declaration must agree with upstream's path rule, or registration fails.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeusd/daemon_state.h"

namespace zeus::zeusd {
namespace {

std::optional<ErrorCode> registration_error(const std::string& path, RouteAccess access) {
  ManualClock clock;
  Daemon::State state(DaemonOptions{}, DaemonDevices{}, clock);
  http::Router router;
  try {
    add_route(state, router, http::Method::kGet, path, access,
              [](http::Request, http::Responder, const Caller&) {});
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

TEST(ZeusdRouteAccess, ADeclarationThatMatchesUpstreamsRuleRegisters) {
  EXPECT_EQ(registration_error("/gpu/get_power", RouteAccess::group_of(ApiGroup::kGpuRead)),
            std::nullopt);
  EXPECT_EQ(
      registration_error("/gpu/set_power_limit", RouteAccess::group_of(ApiGroup::kGpuControl)),
      std::nullopt);
  EXPECT_EQ(registration_error("/time", RouteAccess::anyone()), std::nullopt);
  EXPECT_EQ(registration_error("/auth/whoami", RouteAccess::any_token()), std::nullopt);
}

TEST(ZeusdRouteAccess, ADeclarationThatDiffersFromUpstreamsRuleIsRefused) {
  // A control route declared as a read would let read-only tokens change GPUs.
  EXPECT_EQ(registration_error("/gpu/set_power_limit", RouteAccess::group_of(ApiGroup::kGpuRead)),
            ErrorCode::kInternal);
  EXPECT_EQ(registration_error("/cpu/get_power", RouteAccess::any_token()), ErrorCode::kInternal);
  EXPECT_EQ(registration_error("/gpu/get_power", RouteAccess::anyone()), ErrorCode::kInternal);
  EXPECT_EQ(registration_error("/time", RouteAccess::any_token()), ErrorCode::kInternal);
}

}  // namespace
}  // namespace zeus::zeusd
