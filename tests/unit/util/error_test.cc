#include "zeus/util/error.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

TEST(ErrorMapping, BadInputExitsTwoAndOtherFailuresOne) {
  EXPECT_EQ(exit_code_for(ErrorCode::kInvalidArgument), 2);
  EXPECT_EQ(exit_code_for(ErrorCode::kParse), 2);
  EXPECT_EQ(exit_code_for(ErrorCode::kNotFound), 2);
  EXPECT_EQ(exit_code_for(ErrorCode::kAlreadyExists), 2);
  EXPECT_EQ(exit_code_for(ErrorCode::kIo), 1);
  EXPECT_EQ(exit_code_for(ErrorCode::kNoPermission), 1);
  EXPECT_EQ(exit_code_for(ErrorCode::kInternal), 1);
}

TEST(ErrorMapping, HttpStatusesFollowTheErrorKind) {
  EXPECT_EQ(http_status_for(ErrorCode::kInvalidArgument), 400);
  EXPECT_EQ(http_status_for(ErrorCode::kParse), 400);
  EXPECT_EQ(http_status_for(ErrorCode::kNotSupported), 400);
  EXPECT_EQ(http_status_for(ErrorCode::kNoPermission), 403);
  EXPECT_EQ(http_status_for(ErrorCode::kNotFound), 404);
  EXPECT_EQ(http_status_for(ErrorCode::kAlreadyExists), 409);
  EXPECT_EQ(http_status_for(ErrorCode::kGpuLost), 503);
  EXPECT_EQ(http_status_for(ErrorCode::kInternal), 500);
  // Every code maps to a 4xx or 5xx.
  for (int c = 0; c <= static_cast<int>(ErrorCode::kUnknown); ++c) {
    const int s = http_status_for(static_cast<ErrorCode>(c));
    EXPECT_GE(s, 400);
    EXPECT_LT(s, 600);
  }
}

}  // namespace
}  // namespace zeus
