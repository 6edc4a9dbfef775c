// The power-limit optimizer's profile file: accepted measurements lie on the
// candidate grid, are positive and finite, and survive a write/read round trip.
#include <algorithm>
#include <cmath>
#include <set>

#include "fuzz_support.h"
#include "optimizer/power_limit/power_limit_profile_json.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using zeus::Milliwatts;
  static const std::vector<Milliwatts> kCandidates = {Milliwatts(300000), Milliwatts(275000),
                                                      Milliwatts(250000)};
  try {
    const std::string text(zeus::fuzz::as_text(data, size));
    const auto ms =
        zeus::power_limit_internal::parse_power_limit_profile(text, "fuzz.json", kCandidates);
    zeus::fuzz::accepted();
    std::set<long long> limits;
    for (const auto& m : ms) {
      ZEUS_FUZZ_CHECK(std::find(kCandidates.begin(), kCandidates.end(), m.power_limit) !=
                      kCandidates.end());
      ZEUS_FUZZ_CHECK(limits.insert(m.power_limit.value()).second);
      ZEUS_FUZZ_CHECK(std::isfinite(m.energy.value()) && m.energy.value() > 0);
      ZEUS_FUZZ_CHECK(std::isfinite(m.time.count()) && m.time.count() > 0);
    }
    const auto again = zeus::power_limit_internal::parse_power_limit_profile(
        zeus::power_limit_internal::power_limit_profile_json(ms), "again.json", kCandidates);
    ZEUS_FUZZ_CHECK(again.size() == ms.size());
    for (std::size_t i = 0; i < ms.size(); ++i) {
      ZEUS_FUZZ_CHECK(again[i].power_limit == ms[i].power_limit);
      ZEUS_FUZZ_CHECK(again[i].energy.value() == ms[i].energy.value());
      ZEUS_FUZZ_CHECK(again[i].time.count() == ms[i].time.count());
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
