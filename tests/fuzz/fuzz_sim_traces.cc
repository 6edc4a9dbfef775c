// TraceSet::parse (zeus simulate --traces): the input is a train trace, a
// line "----", and a V100 power trace (without the line, the input is the
// power trace and a fixed train trace is used). Accepted traces hold finite,
// positive, bounded values, so costs computed from them stay finite.
#include <cmath>
#include <string>

#include "fuzz_support.h"
#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace {

constexpr const char* kTrain =
    "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
    "squad,bert_base_uncased,32,adamw,1e-5,1,84.0,3\n"
    "squad,bert_base_uncased,32,adamw,1e-5,2,84.0,nan\n"
    "squad,bert_base_uncased,16,adamw,1e-5,1,84.0,4\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zeus::sim;
  const std::string text(zeus::fuzz::as_text(data, size));
  const auto cut = text.find("----\n");
  const std::string train = cut == std::string::npos ? kTrain : text.substr(0, cut);
  const std::string power = cut == std::string::npos ? text : text.substr(cut + 5);
  try {
    const auto ts = TraceSet::parse(train, {{"v100", power}}, "fuzz");
    zeus::fuzz::accepted();
    for (const auto& spec : paper_workloads()) {
      try {
        const auto w = ts.workload("v100", spec);
        ZEUS_FUZZ_CHECK(w.max_power.value() > 0 && w.max_power.value() <= kMaxTracePowerW);
        for (const auto& b : w.batch_sizes) {
          ZEUS_FUZZ_CHECK(!b.limits.empty());
          for (const auto& p : b.limits) {
            ZEUS_FUZZ_CHECK(std::isfinite(p.energy_per_epoch.value()) &&
                            p.energy_per_epoch.value() > 0);
          }
          ZEUS_FUZZ_CHECK(std::isfinite(b.profile_energy_per_epoch.value()));
        }
      } catch (const zeus::Error&) {
      }
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
