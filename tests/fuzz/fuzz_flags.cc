// The flag and environment-variable parsers (src/util/parse.h). The first
// byte picks the parser, the rest is the text; accepted values must honour
// the bounds and the count limit whatever the text asked for.
#include <cmath>
#include <set>

#include "fuzz_support.h"
#include "util/parse.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = zeus::fuzz::as_text(data + 1, size - 1);
  try {
    switch (data[0] % 5) {
      case 0: {
        const long long v = zeus::parse_int(text, "--n", -1000, 1000);
        ZEUS_FUZZ_CHECK(v >= -1000 && v <= 1000);
        break;
      }
      case 1: {
        const double v = zeus::parse_double(text, "--interval", 1e-3, 1e6);
        ZEUS_FUZZ_CHECK(std::isfinite(v) && v >= 1e-3 && v <= 1e6);
        break;
      }
      case 2: {
        const auto v = zeus::parse_int_list(text, "--gpus", 0, 1023, 64);
        ZEUS_FUZZ_CHECK(!v.empty() && v.size() <= 64);
        ZEUS_FUZZ_CHECK(std::set<int>(v.begin(), v.end()).size() == v.size());
        for (int i : v) ZEUS_FUZZ_CHECK(i >= 0 && i <= 1023);
        break;
      }
      case 3: {
        const auto v = zeus::parse_double_list(text, "--eta", 0.0, 1.0);
        ZEUS_FUZZ_CHECK(!v.empty());
        for (double d : v) ZEUS_FUZZ_CHECK(std::isfinite(d) && d >= 0.0 && d <= 1.0);
        break;
      }
      default: {
        const auto v = zeus::split_list(text, "--gpu");
        ZEUS_FUZZ_CHECK(std::set<std::string>(v.begin(), v.end()).size() == v.size());
        for (const auto& w : v) ZEUS_FUZZ_CHECK(!w.empty());
        break;
      }
    }
    zeus::fuzz::accepted();
  } catch (const zeus::Error&) {
  }
  return 0;
}
