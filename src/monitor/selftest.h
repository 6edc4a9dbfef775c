// `zeus selftest`: checks of a GPU host for a user or a bug report. Read-only
// unless asked: what is present, whether the energy counters move, the
// counter against integrated power over the same window (under the user's
// own load), the cost of the driver calls and of one measurement window,
// power-limit constraints, clock tables, persistence mode, and whether
// settings could be changed. With `write`, it also sets and restores a power
// limit and a clock lock (through GpuSettingsGuard, so a signal restores too).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/device/devices.h"
#include "zeus/util/clock.h"

namespace zeus::monitor {

enum class SelftestVerdict { kPass, kWarn, kFail, kSkip };
const char* selftest_verdict_name(SelftestVerdict verdict);

struct SelftestCheck {
  std::string device;  // "GPU 0", "CPU 1", "host"
  std::string name;    // "energy counter moves", ...
  SelftestVerdict verdict = SelftestVerdict::kSkip;
  std::string detail;  // what was seen, and what to do about a warn or fail
};

struct SelftestOptions {
  // The measured window: `workload` when given (it returns the exit status of
  // the user's command), else an idle wait of `window` on the clock.
  std::function<int()> workload;
  Seconds window{2.0};
  // Calls timed per driver call for the per-call cost.
  int call_repetitions = 100;
  // Also set and restore a power limit and a GPU clock lock.
  bool write = false;
  Clock* clock = nullptr;  // nullptr: the process's steady clock
};

struct SelftestReport {
  std::vector<SelftestCheck> checks;
  Seconds window_length{0.0};
  std::optional<int> workload_exit_code;
  bool failed() const;  // any kFail
};

// Runs every check on `devices` (discover_devices()'s inventory). Checks
// record their own errors as verdicts; this throws only for bad options.
SelftestReport run_selftest(const device::DeviceInventory& devices, const SelftestOptions& options);

nlohmann::json to_json(const SelftestReport& report);

}  // namespace zeus::monitor
