#include "zeus/device/energy_counter_check.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/util/error.h"

namespace zeus::device {
namespace {

// Below this, power x time is too small to compare with (upstream: 0.001 mJ).
constexpr Joules kNegligible{1e-6};
constexpr double kLowRatio = 0.1;
constexpr double kHighRatio = 10.0;

std::optional<Watts> read_power(Gpu& gpu, std::string& why) {
  // Average first, as upstream: it matches what the counter integrates best.
  for (PowerDomain d : {PowerDomain::kDeviceAverage, PowerDomain::kDeviceInstant}) {
    try {
      return gpu.power(d);
    } catch (const Error& e) {
      why = e.what();
    }
  }
  return std::nullopt;
}

}  // namespace

const char* counter_verdict_name(CounterVerdict verdict) {
  switch (verdict) {
    case CounterVerdict::kConsistent:
      return "consistent";
    case CounterVerdict::kInconsistent:
      return "inconsistent";
    case CounterVerdict::kInconclusive:
      return "inconclusive";
    case CounterVerdict::kUnavailable:
      return "unavailable";
  }
  return "unavailable";
}

std::vector<CounterCheck> check_energy_counters(const std::vector<std::shared_ptr<Gpu>>& gpus,
                                                Clock& clock, Seconds duration,
                                                std::string_view gpu_backend) {
  const bool amd = gpu_backend.starts_with("amdsmi");
  std::vector<CounterCheck> out(gpus.size());
  std::vector<std::optional<Watts>> power(gpus.size());
  std::vector<std::optional<Joules>> start(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    std::string why;
    try {
      if (!gpus[i]->supports_energy_counter()) {
        out[i].detail = "this GPU has no energy counter; energy comes from power readings";
        continue;
      }
    } catch (const Error& e) {
      out[i].detail = e.what();
      continue;
    }
    power[i] = read_power(*gpus[i], why);
    if (!power[i]) {
      out[i].detail = fmt::format("no power reading to compare with: {}", why);
      continue;
    }
    try {
      start[i] = gpus[i]->total_energy();
    } catch (const Error& e) {
      out[i].detail = e.what();
    }
  }
  const Seconds t0 = clock.now();
  clock.sleep_for(duration);
  const Seconds elapsed = clock.now() - t0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!start[i]) continue;
    CounterCheck& c = out[i];
    try {
      c.measured = gpus[i]->total_energy() - *start[i];
    } catch (const Error& e) {
      c.detail = e.what();
      continue;
    }
    c.expected = *power[i] * elapsed;
    if (*c.expected < kNegligible) {
      c.verdict = CounterVerdict::kInconclusive;
      c.detail = fmt::format(
          "the GPU drew {} W, so there is nothing to compare the counter with; rerun while the "
          "GPU is busy",
          power[i]->value());
      continue;
    }
    c.ratio = *c.measured / *c.expected;
    if (*c.ratio > kLowRatio && *c.ratio < kHighRatio) {
      c.verdict = CounterVerdict::kConsistent;
      c.detail = fmt::format("counter {:.3f} J vs power x time {:.3f} J over {:.2f} s",
                             c.measured->value(), c.expected->value(), elapsed.count());
    } else {
      c.verdict = CounterVerdict::kInconsistent;
      c.detail = fmt::format(
          "counter {:.3f} J vs power x time {:.3f} J over {:.2f} s (ratio {:.3g}, outside "
          "(0.1, 10)): the energy counter is not trustworthy on this GPU/driver ({}); measure "
          "with `zeus monitor power` instead",
          c.measured->value(), c.expected->value(), elapsed.count(), *c.ratio,
          amd ? "a known AMD SMI problem on some AMD GPUs, ROCm/amdsmi#38"
              : "rerun it while the GPU is busy; if it repeats, report the GPU and driver "
                "version from `zeus show-env`");
    }
  }
  return out;
}

nlohmann::json to_json(const CounterCheck& c) {
  const auto joules = [](const std::optional<Joules>& j) {
    return j ? nlohmann::json(j->value()) : nlohmann::json(nullptr);
  };
  return {{"verdict", counter_verdict_name(c.verdict)},
          {"expected_j", joules(c.expected)},
          {"measured_j", joules(c.measured)},
          {"ratio", c.ratio ? nlohmann::json(*c.ratio) : nlohmann::json(nullptr)},
          {"detail", c.detail}};
}

}  // namespace zeus::device
