// What `zeus monitor power` and `zeus monitor temperature` share: device
// indices from --gpus/--cpus, the --interval and --duration flags, and the
// pacing of their printed lines (one per interval, until the duration or
// Ctrl-C/SIGTERM).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "zeus/util/clock.h"
#include "zeus/util/signals.h"

namespace zeus::cli {

// "0,2" or "0-3"; nullopt (every device) for "". A usage error names `flag`.
std::optional<std::vector<int>> parse_device_indices(const std::string& text, const char* flag);

struct PacingFlags {
  std::string interval = "1";
  std::string duration;
};

void add_interval_flag(CLI::App* cmd, PacingFlags& flags);
CLI::Option* add_duration_flag(CLI::App* cmd, PacingFlags& flags);

struct Pacing {
  Seconds interval;
  Seconds duration;  // 0: until a signal
};

// Usage errors for a number out of range (checked before any device work).
Pacing parse_pacing(const PacingFlags& flags, bool duration_given);

// Starts the clock and handles SIGINT/SIGTERM (which end the lines early)
// for its lifetime.
class LinePacer {
 public:
  explicit LinePacer(Pacing pacing);
  // Waits until the next line is due; false once the duration is over or a
  // signal came.
  bool wait_next();
  Seconds start() const { return start_; }
  Seconds now() const { return clock_.now(); }  // the clock of start()
  Seconds elapsed() const { return now() - start_; }

 private:
  Pacing pacing_;
  std::stop_source stop_;
  SignalSubscription on_signal_;
  SteadyClock& clock_;
  Seconds start_;
  Seconds next_;
  bool done_ = false;
};

}  // namespace zeus::cli
