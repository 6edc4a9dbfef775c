// What a fuzz target may use besides the libFuzzer entry point. A target
// (tests/fuzz/fuzz_<name>.cc) defines
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// feeds the bytes to one parser, calls fuzz::accepted() when the parser took
// the input, checks properties of what was parsed with ZEUS_FUZZ_CHECK, and
// lets only zeus::Error pass as the expected answer to bad input: any other
// exception, a failed check, a crash or a hang is a finding.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace zeus::fuzz {

// Inputs the target accepted since the process started. The replay driver
// checks that every seed is accepted (and every bad_* seed rejected), so a
// parser that rejects everything fails the suite.
inline std::atomic<long> g_accepted{0};
inline void accepted() { g_accepted.fetch_add(1, std::memory_order_relaxed); }

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void check_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", file, line, condition);
  std::abort();
}

}  // namespace zeus::fuzz

// A property of an accepted input; aborts (a finding) when it does not hold.
#define ZEUS_FUZZ_CHECK(condition) \
  ((condition) ? (void)0 : ::zeus::fuzz::check_failed(#condition, __FILE__, __LINE__))
