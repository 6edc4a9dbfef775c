// parse_plans_json (zeus perseus plan --solution) with plan selection and
// printing: an accepted plans.json gives every op a profiled-range frequency
// at every point, and every target yields a plan.
#include <cmath>

#include "fuzz_support.h"
#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zeus::pipeline_frequency;
  try {
    const auto s = parse_plans_json(zeus::fuzz::as_text(data, size), "plans.json");
    zeus::fuzz::accepted();
    ZEUS_FUZZ_CHECK(!s.points.empty());
    ZEUS_FUZZ_CHECK(s.ops.size() == 2u * static_cast<std::size_t>(s.num_stages) *
                                        static_cast<std::size_t>(s.num_microbatches));
    for (std::size_t i : {std::size_t{0}, s.points.size() - 1}) {
      for (const auto& f : s.frequencies(i)) {
        ZEUS_FUZZ_CHECK(f.value() >= 1 && f.value() <= kMaxProfileFrequencyMhz);
      }
    }
    for (const char* target : {"fastest", "min-energy", "straggler:1.2x", "straggler:3"}) {
      const auto i = select_target(s.points, target);
      ZEUS_FUZZ_CHECK(i < s.points.size());
      ZEUS_FUZZ_CHECK(!plan_json(s, i, target).empty());
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
