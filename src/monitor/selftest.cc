#include "monitor/selftest.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "zeus/device/gpu_settings_guard.h"
#include "zeus/device/zeusd_backend.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/util/error.h"

namespace zeus::monitor {
namespace {

using Verdict = SelftestVerdict;

// Counter vs integrated power, as the larger over the smaller: within 15%
// agrees (the integral of a sampled timeline misses what happens between
// samples), within a factor of 2 is suspicious, beyond that one is wrong.
constexpr double kAgree = 1.15;
constexpr double kSuspicious = 2.0;
// A driver call slower than this makes short windows and fast sampling costly.
constexpr double kSlowCallMicroseconds = 1000.0;
// How often power is sampled for the integral: fast enough for a load that
// changes every few hundred ms, and a fixed, stated rate for a bug report.
constexpr Seconds kPowerInterval{0.02};
// Below this, there is too little energy to compare.
constexpr double kNegligibleJoules = 1e-3;

class Checks {
 public:
  void add(std::string device, std::string name, Verdict verdict, std::string detail) {
    checks_.push_back({std::move(device), std::move(name), verdict, std::move(detail)});
  }
  // Runs f, which returns (verdict, detail); an unsupported call is a skip
  // and any other error a fail, each with the error's message.
  template <class F>
  void run(const std::string& device, const std::string& name, F f) {
    try {
      auto [verdict, detail] = f();
      add(device, name, verdict, std::move(detail));
    } catch (const Error& e) {
      add(device, name, e.code() == ErrorCode::kNotSupported ? Verdict::kSkip : Verdict::kFail,
          e.what());
    }
  }
  // As run(), for a check the user asked for by name (--write): one that
  // cannot be carried out (unsupported, or skipped for want of what it needs)
  // is a failure, so a gate on the exit code cannot pass on a host where
  // nothing could be written.
  template <class F>
  void run_required(const std::string& device, const std::string& name, F f) {
    run(device, name, f);
    SelftestCheck& c = checks_.back();
    if (c.verdict == Verdict::kSkip) {
      c.verdict = Verdict::kFail;
      c.detail = "asked for (--write) but could not be done: " + c.detail;
    }
  }
  std::vector<SelftestCheck> take() { return std::move(checks_); }

 private:
  std::vector<SelftestCheck> checks_;
};

std::string gpu_label(std::size_t i) { return fmt::format("GPU {}", i); }

// CAP_SYS_ADMIN (bit 21) in this process's effective capabilities.
bool has_cap_sys_admin() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      const unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return ((caps >> 21U) & 1U) != 0;
    }
  }
  return false;
}

void check_host(const device::DeviceInventory& devices, Checks& checks) {
  if (devices.gpus.empty()) {
    std::string why = "no GPU found";
    for (const auto& note : devices.notes) why += "; " + note;
    checks.add("host", "GPUs", Verdict::kWarn, why);
  } else if (devices.gpu_backend == "sim") {
    checks.add("host", "GPUs", Verdict::kWarn,
               fmt::format("{} SIMULATED GPU(s): readings come from a model, not hardware",
                           devices.gpus.size()));
  } else {
    std::string versions;
    if (!devices.driver_version.empty()) versions += ", driver " + devices.driver_version;
    if (!devices.nvml_version.empty()) versions += ", NVML " + devices.nvml_version;
    if (!devices.amdsmi_version.empty()) versions += ", AMD SMI " + devices.amdsmi_version;
    checks.add(
        "host", "GPUs", Verdict::kPass,
        fmt::format("{} GPU(s) through {}{}", devices.gpus.size(), devices.gpu_backend, versions));
  }
  if (devices.cpus.empty()) {
    checks.add("host", "CPU energy (RAPL)", Verdict::kWarn,
               "no readable RAPL package: CPU energy is not measured (see `zeus show-env`)");
  } else {
    checks.add("host", "CPU energy (RAPL)", Verdict::kPass,
               fmt::format("{} readable package(s)", devices.cpus.size()));
  }
  if (devices.gpus.empty()) return;
  if (devices.gpu_backend == "sim") {
    checks.add("host", "settings could be changed", Verdict::kPass,
               "simulated GPUs take settings without privileges");
  } else if (devices.zeusd) {
    const device::ZeusdStatus& z = *devices.zeusd;
    if (z.can("gpu-control")) {
      checks.add("host", "settings could be changed", Verdict::kPass,
                 fmt::format("through zeusd at {}", z.endpoint));
    } else {
      checks.add(
          "host", "settings could be changed", Verdict::kWarn,
          fmt::format("no: zeusd at {} {}; power limits and clocks are read-only (ask its "
                      "operator for the gpu-control group or scope)",
                      z.endpoint,
                      !z.auth_error.empty() ? "refused the token: " + z.auth_error
                      : z.auth_required     ? std::string("gives this token no gpu-control scope")
                                            : std::string("does not serve gpu-control")));
    }
  } else if (::geteuid() == 0 || has_cap_sys_admin()) {
    checks.add("host", "settings could be changed", Verdict::kPass,
               ::geteuid() == 0 ? "directly (running as root)" : "directly (CAP_SYS_ADMIN)");
  } else {
    checks.add("host", "settings could be changed", Verdict::kWarn,
               "no: not root, no CAP_SYS_ADMIN and no zeusd; power limits and clocks are "
               "read-only (run as root, add the capability, or go through zeusd: "
               "docs/zeusd.md)");
  }
}

std::pair<Verdict, std::string> check_power_limit(device::Gpu& gpu) {
  const auto range = gpu.power_limit_constraints();
  const Milliwatts limit = gpu.power_limit();
  std::string def = "?";
  try {
    def = fmt::format("{:.0f}", to_watts(gpu.default_power_limit()).value());
  } catch (const Error&) {
    // Informational only: some drivers do not report a default limit.
  }
  const std::string detail =
      fmt::format("{:.0f} W (range {:.0f}-{:.0f} W, default {} W)", to_watts(limit).value(),
                  to_watts(range.min).value(), to_watts(range.max).value(), def);
  if (range.min > range.max || limit < range.min || limit > range.max) {
    return {Verdict::kFail, detail + ": the limit is outside its own range"};
  }
  return {Verdict::kPass, detail};
}

std::pair<Verdict, std::string> check_clocks(device::Gpu& gpu) {
  const auto memory = gpu.supported_memory_clocks();
  if (memory.empty()) return {Verdict::kFail, "the driver lists no memory clock"};
  const auto [mem_lo, mem_hi] = std::minmax_element(memory.begin(), memory.end());
  const auto graphics = gpu.supported_graphics_clocks(*mem_hi);
  if (graphics.empty()) {
    return {Verdict::kFail,
            fmt::format("no graphics clock listed at memory clock {} MHz", mem_hi->value())};
  }
  const auto [gfx_lo, gfx_hi] = std::minmax_element(graphics.begin(), graphics.end());
  return {Verdict::kPass,
          fmt::format("{} memory clock(s) {}-{} MHz; {} graphics clock(s) {}-{} MHz at {} MHz",
                      memory.size(), mem_lo->value(), mem_hi->value(), graphics.size(),
                      gfx_lo->value(), gfx_hi->value(), mem_hi->value())};
}

std::pair<Verdict, std::string> check_persistence(device::Gpu& gpu) {
  if (gpu.persistence_mode()) return {Verdict::kPass, "enabled"};
  return {Verdict::kWarn,
          "disabled: the driver may unload between jobs and drop power limits and clock locks "
          "(enable it: nvidia-smi -pm 1)"};
}

// Mean wall time of `repetitions` calls of f, in microseconds.
template <class F>
double mean_call_us(int repetitions, F f) {
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < repetitions; ++k) f();
  const std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - start;
  return spent.count() / repetitions;
}

std::pair<Verdict, std::string> check_call_cost(device::Gpu& gpu, int repetitions) {
  std::string detail;
  double slowest = 0.0;
  const auto time = [&](const char* what, auto f) {
    try {
      const double us = mean_call_us(repetitions, f);
      slowest = std::max(slowest, us);
      detail += fmt::format("{}{} {:.1f} us", detail.empty() ? "" : ", ", what, us);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotSupported) throw;
    }
  };
  time("energy counter", [&] { gpu.total_energy(); });
  time("instant power", [&] { gpu.power(device::PowerDomain::kDeviceInstant); });
  time("average power", [&] { gpu.power(device::PowerDomain::kDeviceAverage); });
  time("temperature", [&] { gpu.temperature(); });
  if (detail.empty()) return {Verdict::kSkip, "no reading is supported"};
  detail = fmt::format("per call ({} calls each): {}", repetitions, detail);
  if (slowest > kSlowCallMicroseconds) {
    return {Verdict::kWarn, detail +
                                "; a call over 1 ms makes short windows and fast sampling "
                                "costly (is the GPU in a low-power state, or persistence "
                                "mode off?)"};
  }
  return {Verdict::kPass, detail};
}

// The window: the counters before and after, and a power timeline of every
// GPU over it.
struct WindowReadings {
  std::vector<std::optional<Joules>> before;
  std::vector<std::optional<Joules>> after;
  std::vector<std::string> counter_errors;
  std::unique_ptr<PowerMonitor> power;
  device::PowerDomain domain = device::PowerDomain::kDeviceInstant;
  Seconds start{0.0};
  Seconds end{0.0};
};

std::optional<Joules> read_counter(device::Gpu& gpu, std::string& error) {
  try {
    if (!gpu.supports_energy_counter()) {
      error = "this GPU has no energy counter; its energy comes from power readings";
      return std::nullopt;
    }
    return gpu.total_energy();
  } catch (const Error& e) {
    error = e.what();
    return std::nullopt;
  }
}

// Starts a power timeline of every GPU for the window; returns why there is
// none when it cannot start ("no GPU" when there is no GPU).
std::string start_power_timeline(const std::vector<std::shared_ptr<device::Gpu>>& gpus,
                                 Clock& clock, WindowReadings& w) {
  std::vector<int> indices;
  for (std::size_t i = 0; i < gpus.size(); ++i) indices.push_back(static_cast<int>(i));
  std::string power_error = "no GPU";
  if (!gpus.empty()) {
    try {
      PowerMonitorOptions o;
      o.clock = &clock;
      o.interval = kPowerInterval;
      w.power = std::make_unique<PowerMonitor>(
          gpus, indices, std::vector<std::shared_ptr<device::Cpu>>{}, std::vector<int>{}, o);
      w.domain = w.power->domains().front();
    } catch (const Error& e) {
      power_error = e.what();
    }
  }
  return power_error;
}

// Reads the counters, runs the user's command (or waits out the window),
// and reads the counters again, sampling power at both ends.
void measure_window(const std::vector<std::shared_ptr<device::Gpu>>& gpus,
                    const SelftestOptions& options, Clock& clock, SelftestReport& report,
                    Checks& checks, WindowReadings& w) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    w.before[i] = read_counter(*gpus[i], w.counter_errors[i]);
  }
  if (w.power) w.power->sample_now();
  w.start = clock.now();
  if (options.workload) {
    report.workload_exit_code = options.workload();
    if (*report.workload_exit_code != 0) {
      checks.add("host", "your command", Verdict::kWarn,
                 fmt::format("exited {}: the window may not hold the load you meant to test",
                             *report.workload_exit_code));
    }
  } else {
    clock.sleep_until(w.start + options.window);
  }
  w.end = clock.now();
  if (w.power) {
    w.power->sample_now();
    w.power->stop();
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (w.before[i]) w.after[i] = read_counter(*gpus[i], w.counter_errors[i]);
  }
}

// GPU i's counter over the window, in joules, once checked that it moved
// forward; none when it could not be read.
std::optional<double> check_counter_moves(const std::string& label, const WindowReadings& w,
                                          std::size_t i, double seconds, Checks& checks) {
  if (!w.before[i] || !w.after[i]) {
    checks.add(label, "energy counter moves", Verdict::kSkip, w.counter_errors[i]);
    return std::nullopt;
  }
  const double delta = (*w.after[i] - *w.before[i]).value();
  if (delta > 0.0) {
    checks.add(label, "energy counter moves", Verdict::kPass,
               fmt::format("+{:.3f} J in {:.2f} s ({:.1f} W on average)", delta, seconds,
                           delta / std::max(seconds, 1e-9)));
  } else {
    checks.add(label, "energy counter moves", Verdict::kFail,
               fmt::format("{} in {:.2f} s: the counter {} (a driver problem; report it "
                           "with `zeus show-env --json`)",
                           delta < 0.0 ? "went backwards" : "did not move", seconds,
                           delta < 0.0 ? "is not monotonic" : "is stuck"));
  }
  return delta;
}

void check_counter_vs_power(const std::string& label, const WindowReadings& w, std::size_t i,
                            std::optional<double> counter_j, const std::string& power_error,
                            Checks& checks) {
  std::optional<double> integral_j;
  if (w.power) {
    if (auto e = w.power->gpu_energy(static_cast<int>(i), w.domain, w.start, w.end)) {
      integral_j = e->value();
    }
  }
  if (!integral_j) {
    checks.add(label, "counter vs integrated power", Verdict::kSkip,
               w.power ? std::string("no power samples") : power_error);
  } else if (!counter_j) {
    checks.add(label, "counter vs integrated power", Verdict::kSkip,
               fmt::format("no counter to compare; {} power integrates to {:.3f} J",
                           device::power_domain_name(w.domain), *integral_j));
  } else if (*counter_j < kNegligibleJoules && *integral_j < kNegligibleJoules) {
    checks.add(label, "counter vs integrated power", Verdict::kSkip,
               "too little energy in the window to compare");
  } else {
    const double ratio = *counter_j / std::max(*integral_j, 1e-12);
    const std::string detail = fmt::format(
        "counter {:.3f} J, {} power sampled every {:.0f} ms integrates to {:.3f} J (ratio "
        "{:.3f})",
        *counter_j, device::power_domain_name(w.domain), w.power->interval().count() * 1000.0,
        *integral_j, ratio);
    const double off = ratio > 0.0 ? std::max(ratio, 1.0 / ratio) : HUGE_VAL;
    if (off <= kAgree) {
      checks.add(label, "counter vs integrated power", Verdict::kPass, detail);
    } else if (off <= kSuspicious) {
      checks.add(label, "counter vs integrated power", Verdict::kWarn,
                 detail +
                     "; they disagree by more than 15%: a load that changes faster than "
                     "the sampling, or a window too short for the counter's steps");
    } else {
      checks.add(label, "counter vs integrated power", Verdict::kFail,
                 detail +
                     "; one of the two is wrong (a driver problem; report it with "
                     "`zeus show-env --json`)");
    }
  }
}

void check_window(const device::DeviceInventory& devices, const SelftestOptions& options,
                  Clock& clock, SelftestReport& report, Checks& checks) {
  const auto& gpus = devices.gpus;
  WindowReadings w;
  w.before.resize(gpus.size());
  w.after.resize(gpus.size());
  w.counter_errors.resize(gpus.size());
  const std::string power_error = start_power_timeline(gpus, clock, w);
  measure_window(gpus, options, clock, report, checks, w);
  report.window_length = w.end - w.start;
  const double seconds = report.window_length.count();

  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string label = gpu_label(i);
    const std::optional<double> counter_j = check_counter_moves(label, w, i, seconds, checks);
    check_counter_vs_power(label, w, i, counter_j, power_error, checks);
  }
}

void check_window_cost(const device::DeviceInventory& devices, int repetitions, Checks& checks) {
  checks.run("host", "measurement window cost", [&]() -> std::pair<Verdict, std::string> {
    if (devices.gpus.empty() && devices.cpus.empty()) {
      return {Verdict::kSkip, "nothing to measure"};
    }
    // These windows are microseconds long, shorter than any counter's step:
    // approximating them from instant power (as a user of short windows
    // would) avoids the short-window warning and makes this an upper bound.
    EnergyMonitorOptions o;
    o.approx_instant_energy = true;
    EnergyMonitor monitor(devices, o);
    const double us = mean_call_us(repetitions, [&] {
      monitor.begin_window("selftest", false);
      monitor.end_window("selftest", false);
    });
    return {Verdict::kPass,
            fmt::format("begin_window + end_window over {} GPU(s) and {} CPU(s): {:.1f} us "
                        "(with approx_instant_energy)",
                        devices.gpus.size(), devices.cpus.size(), us)};
  });
}

void check_writes(const std::shared_ptr<device::Gpu>& gpu, const std::string& label,
                  Checks& checks) {
  checks.run_required(
      label, "power limit set and restored", [&]() -> std::pair<Verdict, std::string> {
        const auto range = gpu->power_limit_constraints();
        const Milliwatts original = gpu->power_limit();
        const Milliwatts target = original != range.min ? range.min : range.max;
        device::GpuSettingsGuard guard({gpu});
        guard.set_power_limit(0, target);
        const Milliwatts set = gpu->power_limit();
        guard.restore_gpu(0);
        const Milliwatts restored = gpu->power_limit();
        const std::string detail =
            fmt::format("{:.0f} W -> {:.0f} W -> {:.0f} W", to_watts(original).value(),
                        to_watts(set).value(), to_watts(restored).value());
        if (set != target) return {Verdict::kFail, detail + ": the new limit did not take"};
        if (restored != original) return {Verdict::kFail, detail + ": the restore did not take"};
        return {Verdict::kPass, detail};
      });
  checks.run_required(label, "clock lock set and reset", [&]() -> std::pair<Verdict, std::string> {
    const auto memory = gpu->supported_memory_clocks();
    if (memory.empty()) return {Verdict::kSkip, "no clock table"};
    const auto graphics =
        gpu->supported_graphics_clocks(*std::max_element(memory.begin(), memory.end()));
    if (graphics.empty()) return {Verdict::kSkip, "no graphics clock table"};
    const auto [lo, hi] = std::minmax_element(graphics.begin(), graphics.end());
    device::GpuSettingsGuard guard({gpu});
    guard.set_gpu_locked_clocks(0, *lo, *hi);
    guard.restore_gpu(0);
    return {Verdict::kPass, fmt::format("graphics clocks locked to {}-{} MHz, then reset",
                                        lo->value(), hi->value())};
  });
}

}  // namespace

const char* selftest_verdict_name(SelftestVerdict verdict) {
  switch (verdict) {
    case SelftestVerdict::kPass:
      return "pass";
    case SelftestVerdict::kWarn:
      return "warn";
    case SelftestVerdict::kFail:
      return "fail";
    case SelftestVerdict::kSkip:
      return "skip";
  }
  return "skip";
}

bool SelftestReport::failed() const {
  return std::any_of(checks.begin(), checks.end(),
                     [](const SelftestCheck& c) { return c.verdict == SelftestVerdict::kFail; });
}

SelftestReport run_selftest(const device::DeviceInventory& devices,
                            const SelftestOptions& options) {
  if (!(options.window.count() > 0.0 && options.window.count() <= 3600.0)) {
    throw_error(ErrorCode::kInvalidArgument, "the selftest window must be in (0, 3600] s");
  }
  if (options.call_repetitions < 1 || options.call_repetitions > 100000) {
    throw_error(ErrorCode::kInvalidArgument,
                "the selftest's call repetitions must be in [1, 100000]");
  }
  Clock& clock = options.clock != nullptr ? *options.clock : SteadyClock::instance();
  SelftestReport report;
  Checks checks;
  check_host(devices, checks);
  for (std::size_t i = 0; i < devices.gpus.size(); ++i) {
    device::Gpu& gpu = *devices.gpus[i];
    const std::string label = gpu_label(i);
    checks.run(label, "power limit", [&] { return check_power_limit(gpu); });
    checks.run(label, "clock tables", [&] { return check_clocks(gpu); });
    checks.run(label, "persistence mode", [&] { return check_persistence(gpu); });
    checks.run(label, "driver call cost",
               [&] { return check_call_cost(gpu, options.call_repetitions); });
  }
  check_window_cost(devices, options.call_repetitions, checks);
  check_window(devices, options, clock, report, checks);
  if (options.write) {
    for (std::size_t i = 0; i < devices.gpus.size(); ++i) {
      check_writes(devices.gpus[i], gpu_label(i), checks);
    }
  }
  report.checks = checks.take();
  return report;
}

nlohmann::json to_json(const SelftestReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : report.checks) {
    checks.push_back({{"device", c.device},
                      {"check", c.name},
                      {"verdict", selftest_verdict_name(c.verdict)},
                      {"detail", c.detail}});
  }
  nlohmann::json j = {
      {"checks", checks}, {"window_s", report.window_length.count()}, {"failed", report.failed()}};
  j["workload_exit_code"] = report.workload_exit_code ? nlohmann::json(*report.workload_exit_code)
                                                      : nlohmann::json(nullptr);
  return j;
}

}  // namespace zeus::monitor
