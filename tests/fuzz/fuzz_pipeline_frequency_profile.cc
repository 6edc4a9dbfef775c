// StageProfile::parse (zeus perseus solve --profile) and the option menus the
// planner derives from an accepted profile: every accepted value is finite
// and in its physical range, and menus quantize without overflow.
#include <cmath>

#include "fuzz_support.h"
#include "zeus/optimizer/pipeline_frequency/planner/profile.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zeus::pipeline_frequency;
  try {
    const auto p = StageProfile::parse(zeus::fuzz::as_text(data, size), "fuzz.csv");
    zeus::fuzz::accepted();
    ZEUS_FUZZ_CHECK(p.num_stages() >= 1 && p.num_stages() <= kMaxProfileStage + 1);
    for (const auto& e : p.entries()) {
      ZEUS_FUZZ_CHECK(std::isfinite(e.time.count()) && e.time.count() > 0.0 &&
                      e.time.count() <= kMaxProfileTimeS);
      ZEUS_FUZZ_CHECK(std::isfinite(e.energy.value()) && e.energy.value() >= 0.0 &&
                      e.energy.value() <= kMaxProfileEnergyJ);
      ZEUS_FUZZ_CHECK(e.frequency.value() >= 1 && e.frequency.value() <= kMaxProfileFrequencyMhz);
    }
    for (int s = 0; s < p.num_stages() && s < 4; ++s) {
      for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
        try {
          const auto menu = OptionMenu::build(p.entries_for(s, ins),
                                              {zeus::Seconds(0.001), zeus::Watts(100), true});
          ZEUS_FUZZ_CHECK(menu.min_duration() >= 1);
          ZEUS_FUZZ_CHECK(menu.max_duration() <= kMaxQuantizedDuration);
          for (const auto& o : menu.options()) {
            ZEUS_FUZZ_CHECK(std::isfinite(o.effective.value()));
          }
        } catch (const zeus::Error&) {
        }
      }
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
