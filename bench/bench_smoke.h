// The benchmarks' short version: with ZEUS_BENCH_SMOKE set (ctest's
// bench_smoke.* tests set it, in the plain and the sanitizer builds) every
// case runs once or for a few milliseconds on a small input, so a crash or a
// sanitizer report (a dangling reference, a leak) fails the test suite. The
// numbers it prints mean nothing. See docs/benchmarks.md.
#pragma once

#include <cstdlib>

namespace zeus::bench {

inline bool smoke() {
  static const bool on = std::getenv("ZEUS_BENCH_SMOKE") != nullptr;
  return on;
}

// `full` in a real run, `short_value` in the short version.
template <class T>
T full_or_smoke(T full, T short_value) {
  return smoke() ? short_value : full;
}

}  // namespace zeus::bench
