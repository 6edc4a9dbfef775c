#include "absent_commands.h"

#include <fmt/format.h>

#include <algorithm>

#ifndef ZEUS_OPTIONS_OFF
#define ZEUS_OPTIONS_OFF ""
#endif

namespace zeus::cli {

const std::vector<OptionalCommand>& optional_commands() {
  static const std::vector<OptionalCommand> commands = {
      {"simulate", "the trace simulator", {"ZEUS_WITH_SIM"}},
      {"perseus", "the Perseus planner", {"ZEUS_WITH_PERSEUS"}},
      {"perseus serve", "the pipeline-frequency server", {"ZEUS_WITH_PERSEUS", "ZEUS_WITH_HTTP"}},
      {"perseus emulate",
       "the pipeline-frequency emulation",
       {"ZEUS_WITH_PERSEUS", "ZEUS_WITH_HTTP"}},
      {"perseus emulate-stage",
       "the pipeline-frequency emulation",
       {"ZEUS_WITH_PERSEUS", "ZEUS_WITH_HTTP"}},
      {"bso", "the batch-size optimizer service", {"ZEUS_WITH_HTTP", "ZEUS_WITH_BSO_SERVER"}},
      {"proxy", "the inference-server proxy", {"ZEUS_WITH_HTTP"}},
  };
  return commands;
}

std::optional<std::string> absent_command_message(const std::string& path,
                                                  const std::vector<std::string>& options_off) {
  const auto& all = optional_commands();
  const auto command =
      std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.path == path; });
  if (command == all.end()) return std::nullopt;
  std::vector<std::string> off;
  for (const auto& need : command->needs) {
    if (std::find(options_off.begin(), options_off.end(), need) != options_off.end()) {
      off.push_back(need);
    }
  }
  if (off.empty()) return std::nullopt;
  std::string names;
  std::string flags;
  for (const auto& o : off) {
    names += (names.empty() ? "" : " and ") + o;
    flags += (flags.empty() ? "-D" : " -D") + o + "=ON";
  }
  return fmt::format(
      "`zeus {}` is not in this build (built without {}: {}); to get it: reinstall with "
      "ZEUSCPP_FULL=1 (pip: ZEUSCPP_FULL=1 pip install --no-build-isolation --no-index <checkout>, "
      "after `sudo bash scripts/setup.sh`; docs/python.md), or configure CMake with {} "
      "(docs/install.md)",
      path, names, command->what, flags);
}

std::vector<std::string> options_off_in_this_build() {
  std::vector<std::string> out;
  std::string_view rest = ZEUS_OPTIONS_OFF;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (comma != 0) out.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace zeus::cli
