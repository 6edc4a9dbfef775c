#include "sampling_flags.h"

#include <fmt/format.h>

#include "util/parse.h"

namespace zeus::cli {
namespace {

// Bounds of the numeric flags (checked before use; NaN is never in range).
constexpr int kMaxDeviceIndex = 4095;
constexpr double kMinInterval = 0.01;  // NVML power readings update every 10-100 ms
constexpr double kMaxSeconds = 1e7;    // about 116 days

}  // namespace

std::optional<std::vector<int>> parse_device_indices(const std::string& text, const char* flag) {
  if (text.empty()) return std::nullopt;
  return parse_int_list(text, flag, 0, kMaxDeviceIndex);
}

void add_interval_flag(CLI::App* cmd, PacingFlags& flags) {
  cmd->add_option("--interval", flags.interval,
                  fmt::format("Seconds between lines, at least {} (default 1)", kMinInterval));
}

CLI::Option* add_duration_flag(CLI::App* cmd, PacingFlags& flags) {
  return cmd->add_option("--duration", flags.duration,
                         "Stop after this many seconds (default: at Ctrl-C or SIGTERM)");
}

Pacing parse_pacing(const PacingFlags& flags, bool duration_given) {
  Pacing p;
  p.interval = Seconds(parse_double(flags.interval, "--interval", kMinInterval, kMaxSeconds));
  p.duration = Seconds(
      duration_given ? parse_double(flags.duration, "--duration", kMinInterval, kMaxSeconds) : 0.0);
  return p;
}

LinePacer::LinePacer(Pacing pacing)
    : pacing_(pacing),
      on_signal_(SignalSubscription::Kind::kHandle, [this](int) { stop_.request_stop(); }),
      clock_(SteadyClock::instance()),
      start_(clock_.now()),
      next_(start_) {}

bool LinePacer::wait_next() {
  if (done_) return false;
  next_ += pacing_.interval;
  const bool timed = pacing_.duration > Seconds(0);
  if (timed && next_ - start_ >= pacing_.duration - Seconds(1e-9)) {
    next_ = start_ + pacing_.duration;
    done_ = true;
  }
  return clock_.wait_until(next_, stop_.get_token());
}

}  // namespace zeus::cli
