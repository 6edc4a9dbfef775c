// parse_signal_csv, the reader of carbon-intensity and price series (Chase).
#include <cmath>

#include "fuzz_support.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    zeus::SignalCsvOptions options;
    options.unit = "";  // the header must state it (the plain form is refused)
    const auto s = zeus::parse_signal_csv(zeus::fuzz::as_text(data, size), "fuzz.csv", options);
    zeus::fuzz::accepted();
    ZEUS_FUZZ_CHECK(s.size() >= 2);
    ZEUS_FUZZ_CHECK(s.resolution_s() > 0);
    for (double v : s.values()) {
      ZEUS_FUZZ_CHECK(std::isfinite(v));
      ZEUS_FUZZ_CHECK(s.kind() == zeus::SignalKind::kPrice || v >= 0.0);
    }
    // Every sample is found where it starts, and nothing outside the series.
    ZEUS_FUZZ_CHECK(s.index_at(s.start_utc()) == 0);
    ZEUS_FUZZ_CHECK(s.index_at(s.end_utc() - 1) == s.size() - 1);
    try {
      (void)s.index_at(s.end_utc());
      ZEUS_FUZZ_CHECK(false);
    } catch (const zeus::Error&) {
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
