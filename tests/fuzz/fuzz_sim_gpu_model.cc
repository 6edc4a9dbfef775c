// The simulated GPU's JSON model file: an accepted model must be physically
// sensible, so nothing computed from it later overflows or turns NaN.
#include <cmath>

#include "device/sim_gpu_model_json.h"
#include "fuzz_support.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string text(zeus::fuzz::as_text(data, size));
    const auto model = zeus::device_internal::parse_sim_gpu_model(text, "fuzz.json");
    zeus::fuzz::accepted();
    zeus::ManualClock clock;
    zeus::device::SimGpu gpu(model, clock);
    const auto c = gpu.power_limit_constraints();
    for (const auto limit : {c.min, gpu.default_power_limit(), c.max}) {
      gpu.set_power_limit(limit);
      const double w = gpu.power(zeus::device::PowerDomain::kDeviceInstant).value();
      ZEUS_FUZZ_CHECK(std::isfinite(w) && w >= 0.0);
      // An idle model ("load": 0) does no work; any other does some.
      const double rate = gpu.throughput();
      ZEUS_FUZZ_CHECK(std::isfinite(rate) && rate >= 0.0 && (model.load == 0.0 || rate > 0.0));
      clock.advance(zeus::Seconds(1.0));
      ZEUS_FUZZ_CHECK(std::isfinite(gpu.total_energy().value()));
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
