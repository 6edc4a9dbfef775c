// The zeus command line: parses flags, runs the chosen subcommand, maps errors
// to exit codes (2 for bad input, 1 for other failures).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "command_registry.h"
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return zeus::kExitUsage;
  } catch (const zeus::Error& e) {
    std::fprintf(stderr, "zeus: error: %s\n", e.what());
    return zeus::exit_code_for(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zeus: error: %s\n", e.what());
    return zeus::kExitFailure;
  }
  return exit_code();
}
