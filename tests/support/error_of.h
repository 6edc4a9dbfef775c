// The zeus::Error a call throws, for tests that check its code and message.
// A call that throws none is a test failure (and gives kInternal "no error").
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "zeus/util/error.h"

namespace zeus::testing {

template <class F>
Error error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no zeus::Error thrown";
  return Error(ErrorCode::kInternal, "no error");
}

}  // namespace zeus::testing
