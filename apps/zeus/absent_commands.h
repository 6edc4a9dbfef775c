// The commands of the full build that a reduced one (pip's default, ZEUS_MINIMAL,
// a ZEUS_WITH_* switch off) leaves out, with the switches they need, so that
// `zeus simulate` in such a build says what is missing and how to get it
// instead of "unknown command". Its own file, including no part's headers:
// every configuration compiles it (unlike the command files it speaks for).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zeus::cli {

struct OptionalCommand {
  std::string path;                // "simulate", "perseus serve"
  std::string what;                // what it is, for the message
  std::vector<std::string> needs;  // the ZEUS_WITH_* switches its parts need
};

// Every command that some configuration leaves out.
const std::vector<OptionalCommand>& optional_commands();

// The message for `path` when it is an optional command and one of the
// switches it needs is among `options_off` (this build's: ZEUS_OPTIONS_OFF),
// else nullopt (a name no build has, or one this build has).
std::optional<std::string> absent_command_message(const std::string& path,
                                                  const std::vector<std::string>& options_off);

// The switches this build was configured without (from CMake).
std::vector<std::string> options_off_in_this_build();

}  // namespace zeus::cli
