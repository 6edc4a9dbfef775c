// `zeus selftest`: checks of this host's GPUs, RAPL and privileges, for a
// user on a new machine or a bug report (src/monitor/selftest.h).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string>

#include "command_registry.h"
#include "monitor/selftest.h"
#include "util/process.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::cli::selftest_command {
namespace {

struct SelftestFlags {
  bool json = false;
  bool write = false;
  double window_s = 2.0;
  int repetitions = 100;
  std::vector<std::string> command;
};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

void print_table(const zeus::monitor::SelftestReport& report) {
  std::size_t device_width = 6;
  std::size_t check_width = 5;
  for (const auto& c : report.checks) {
    device_width = std::max(device_width, c.device.size());
    check_width = std::max(check_width, c.name.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:<7} {}\n", "device", device_width, "check", check_width, "verdict",
             "detail");
  for (const auto& c : report.checks) {
    // Details carry device names and driver messages: escaped.
    fmt::print("{:<{}}  {:<{}}  {:<7} {}\n", c.device, device_width, c.name, check_width,
               upper(zeus::monitor::selftest_verdict_name(c.verdict)),
               zeus::printable(c.detail, 2000));
  }
  const auto count = [&](zeus::monitor::SelftestVerdict v) {
    return std::count_if(report.checks.begin(), report.checks.end(),
                         [v](const zeus::monitor::SelftestCheck& c) { return c.verdict == v; });
  };
  fmt::print("{} pass, {} warn, {} fail, {} skipped; window {:.2f} s{}\n",
             count(zeus::monitor::SelftestVerdict::kPass),
             count(zeus::monitor::SelftestVerdict::kWarn),
             count(zeus::monitor::SelftestVerdict::kFail),
             count(zeus::monitor::SelftestVerdict::kSkip), report.window_length.count(),
             report.workload_exit_code
                 ? fmt::format(" (the command exited {})", *report.workload_exit_code)
                 : std::string());
}

void run(const SelftestFlags& f) {
  const auto devices = zeus::device::discover_devices();
  zeus::monitor::SelftestOptions o;
  o.window = zeus::Seconds(f.window_s);
  o.call_repetitions = f.repetitions;
  o.write = f.write;
  if (!f.command.empty()) {
    o.workload = [&f] { return zeus::run_forwarding_signals(f.command); };
  }
  const auto report = zeus::monitor::run_selftest(devices, o);
  if (f.json) {
    std::cout << zeus::monitor::to_json(report).dump(2) << "\n";
  } else {
    print_table(report);
  }
  std::cout.flush();
  if (!std::cout) zeus::throw_error(zeus::ErrorCode::kIo, "cannot write the report to stdout");
  if (report.failed()) zeus::cli::set_exit_code(zeus::kExitFailure);
}

void setup(CLI::App& root) {
  auto f = std::make_shared<SelftestFlags>();
  auto* cmd = root.add_subcommand(
      "selftest",
      "Check this host's GPUs, RAPL and privileges: counters, counter vs integrated power, call "
      "costs, limits, clocks (read-only unless --write)");
  cmd->add_flag("--json", f->json, "Print one JSON object instead of the table");
  cmd->add_flag("--write", f->write,
                "Also set and restore a power limit and a GPU clock lock on every GPU, and check "
                "the restore (needs root, CAP_SYS_ADMIN or zeusd; a signal restores too)");
  cmd->add_option("--window", f->window_s,
                  "Seconds of the measured window when no command is given (0-3600]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 3600.0));
  cmd->add_option("--repetitions", f->repetitions, "Calls timed per driver call [1, 100000]")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("command", f->command,
                  "Command whose run is the measured window, after `--` (your own load: the "
                  "counter is compared with integrated power under it)");
  cmd->footer(
      "Exit code 1 when a check fails, 0 otherwise (warnings included).\n"
      "Example: zeus selftest -- python train.py --steps 200");
  cmd->callback([f] { run(*f); });
}

const bool registered = zeus::cli::register_command(12, &setup);

}  // namespace
}  // namespace zeus::cli::selftest_command
