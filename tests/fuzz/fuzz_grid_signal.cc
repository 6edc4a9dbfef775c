// parse_signal_csv, the reader of carbon-intensity and price series (Chase),
// as `zeus chase run` and `zeus simulate chase` call it: the unit from the
// header, or given (the plain form; a carbon unit that is converted, a price),
// and ElectricityMaps' two emission factors. Each accepted series must hold
// finite values, and its coarser periods too (what the simulator replays).
#include <cmath>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/error.h"

namespace {

void check_series(const zeus::carbon_aware::GridSignal& s) {
  ZEUS_FUZZ_CHECK(s.size() >= 2);
  ZEUS_FUZZ_CHECK(s.resolution_s() > 0);
  for (double v : s.values()) {
    ZEUS_FUZZ_CHECK(std::isfinite(v));
    ZEUS_FUZZ_CHECK(s.kind() == zeus::carbon_aware::SignalKind::kPrice || v >= 0.0);
  }
  // Every sample is found where it starts, and nothing outside the series.
  ZEUS_FUZZ_CHECK(s.index_at(s.start_utc()) == 0);
  ZEUS_FUZZ_CHECK(s.index_at(s.end_utc() - 1) == s.size() - 1);
  try {
    (void)s.index_at(s.end_utc());
    ZEUS_FUZZ_CHECK(false);
  } catch (const zeus::Error&) {
  }
  if (s.size() % 2 == 0) {
    // Named: values() is a view into the signal, which must outlive the loop.
    const zeus::carbon_aware::GridSignal coarse = s.coarsened(2);
    for (double v : coarse.values()) ZEUS_FUZZ_CHECK(std::isfinite(v));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first reads the unit from the header: only it counts as accepting
  // (a bad_* seed may be a plain file that a given unit makes readable).
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"", "lifecycle"}, {"", "direct"}, {"kg/kWh", "lifecycle"}, {"USD/kWh", "lifecycle"}};
  for (std::size_t i = 0; i < variants.size(); ++i) {
    try {
      zeus::carbon_aware::SignalCsvOptions options;
      options.unit = variants[i].first;
      options.emission_factor = variants[i].second;
      check_series(zeus::carbon_aware::parse_signal_csv(zeus::fuzz::as_text(data, size), "fuzz.csv",
                                                        options));
      if (i == 0) zeus::fuzz::accepted();
    } catch (const zeus::Error&) {
    }
  }
  return 0;
}
