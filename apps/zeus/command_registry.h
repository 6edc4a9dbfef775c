// Subcommands register themselves here from their own files, so the CLI's main
// never changes when a part adds a command. Each setup function adds its
// subcommand(s) to the root app and installs callbacks that call the library.
// A command file, <name>_command.cc, keeps its names in namespace
// zeus::cli::<name>_command: the command files compile as one translation
// unit (CMakeLists.txt, "The zeus CLI").
#pragma once

#include <CLI/CLI.hpp>

namespace zeus::cli {

using CommandSetup = void (*)(CLI::App& root);

// Registers a setup function; `order` sorts the commands in --help. Returns
// true so it can initialize a namespace-scope constant.
bool register_command(int order, CommandSetup setup);

// A callback may set the process exit status (e.g. the wrapped command's).
void set_exit_code(int code);

}  // namespace zeus::cli
