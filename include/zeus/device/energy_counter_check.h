// A sanity check of GPU energy counters against power readings, as upstream
// zeusd does for AMD GPUs at start (some AMD GPU/ROCm combinations report
// impossible energy, ROCm/amdsmi#38): read power, read the counter twice
// `duration` apart, and compare the counter's increase with power x time.
// Here it is a diagnostic of `zeus show-env`, for any backend.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/clock.h"

namespace zeus::device {

enum class CounterVerdict {
  kConsistent,    // measured / expected in (0.1, 10)
  kInconsistent,  // outside that range: the counter is not trustworthy
  kInconclusive,  // the GPU drew (almost) no power, so nothing to compare with
  kUnavailable,   // no counter, or no power reading
};
const char* counter_verdict_name(CounterVerdict verdict);  // "consistent", ...

struct CounterCheck {
  CounterVerdict verdict = CounterVerdict::kUnavailable;
  std::optional<Joules> expected;  // power x duration
  std::optional<Joules> measured;  // counter increase
  std::optional<double> ratio;     // measured / expected
  std::string detail;              // plain-language explanation
};

// Checks every GPU over one shared `duration` (default 0.5 s, as upstream):
// one sleep on `clock` for all of them. Never throws for a device problem;
// the detail says what failed. `gpu_backend` (DeviceInventory::gpu_backend)
// picks the advice for an inconsistent counter: a known AMD SMI bug is cited
// for AMD GPUs only.
std::vector<CounterCheck> check_energy_counters(const std::vector<std::shared_ptr<Gpu>>& gpus,
                                                Clock& clock, Seconds duration = Seconds(0.5),
                                                std::string_view gpu_backend = {});

// {"verdict", "expected_j", "measured_j", "ratio", "detail"} (nulls where unknown).
nlohmann::json to_json(const CounterCheck& check);

}  // namespace zeus::device
