// The zeus command line: parses flags, runs the chosen subcommand, maps errors
// to exit codes (zeus::exit_code_for: 2 for bad input, 1 for other failures),
// and fails when the output could not be written (a full disk, a closed pipe).
// A command this build left out (absent_commands.h) says how to get it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absent_commands.h"
#include "command_registry.h"
#include "numeric_flags.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::cli {
namespace {

std::vector<std::pair<int, CommandSetup>>& registry() {
  static std::vector<std::pair<int, CommandSetup>> commands;
  return commands;
}

int& exit_code() {
  static int code = 0;
  return code;
}

}  // namespace

bool register_command(int order, CommandSetup setup) {
  registry().emplace_back(order, setup);
  return true;
}

void set_exit_code(int code) { exit_code() = code; }

namespace {

// The first word that should name a subcommand and does not, with the app it
// was given to, so `zeus bogus` says which command is unknown.
std::optional<std::pair<std::string, CLI::App*>> unknown_subcommand(CLI::App& root, int argc,
                                                                    char** argv) {
  CLI::App* app = &root;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.starts_with("-")) return std::nullopt;  // flags first: CLI11 reports those
    if (app->get_subcommands({}).empty()) return std::nullopt;
    CLI::App* next = nullptr;
    try {
      next = app->get_subcommand(arg);
    } catch (const CLI::OptionNotFound&) {
      return std::pair{arg, app};
    }
    app = next;
  }
  return std::nullopt;
}

// Flushes stdout and reports a failed write: results that never reached the
// user are a failure, never a silent success.
bool output_written() {
  std::cout.flush();
  const bool ok = std::cout.good() && std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  if (!ok) {
    std::fprintf(stderr, "zeus: error: could not write the output to stdout: %s\n",
                 zeus::errno_text(errno).c_str());
  }
  return ok;
}

}  // namespace

}  // namespace zeus::cli

int main(int argc, char** argv) {
  using namespace zeus::cli;
  CLI::App app{
      "Zeus in C++: measure and optimize the energy of deep-learning work on GPUs and CPUs",
      "zeus"};
  app.set_version_flag("--version", std::string("zeus ") + ZEUS_VERSION);
  app.require_subcommand(1);
  std::sort(registry().begin(), registry().end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, setup] : registry()) setup(app);
  require_finite_numbers(app);

  if (const auto unknown = unknown_subcommand(app, argc, argv)) {
    // A command of the full build that this one left out says so, and how to get it.
    std::string path = unknown->first;
    for (const CLI::App* a = unknown->second; a != nullptr && a->get_parent() != nullptr;
         a = a->get_parent()) {
      path = a->get_name() + " " + path;
    }
    if (const auto absent = absent_command_message(path, options_off_in_this_build())) {
      std::fprintf(stderr, "zeus: error: %s\n", absent->c_str());
      return zeus::kExitUsage;
    }
    std::vector<std::string> names;
    for (const CLI::App* sub : unknown->second->get_subcommands({})) {
      names.push_back(sub->get_name());
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::fprintf(stderr,
                 "zeus: error: unknown command '%s'; the commands here are: %s (see --help)\n",
                 zeus::printable(unknown->first).c_str(), list.c_str());
    return zeus::kExitUsage;
  }
  int code = 0;
  try {
    app.parse(argc, argv);
    code = exit_code();
  } catch (const CLI::CallForHelp& e) {
    code = app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    code = app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    code = app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    code = zeus::kExitUsage;
  } catch (const zeus::Error& e) {
    std::fprintf(stderr, "zeus: error: %s\n", e.what());
    code = zeus::exit_code_for(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zeus: error: %s\n", e.what());
    code = zeus::kExitFailure;
  }
  if (!output_written() && code == 0) code = zeus::kExitFailure;
  return code;
}
