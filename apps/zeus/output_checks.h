// Pre-flight checks of output paths for the CLI commands, so a long run is
// not thrown away at the end because its output cannot be written, and a
// checked flush of stdout (a full disk there is an error, not a silent loss).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::cli {

namespace fs = std::filesystem;

// kInvalidArgument before a server starts when its --port-file cannot be
// written: a supervisor waiting for that file would wait forever. Its folder
// must exist (a port file is not worth creating folders for).
inline void check_port_file(const std::string& path) {
  if (path.empty()) return;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("--port-file {}: the folder {} does not exist",
                                  zeus::printable(path), zeus::printable(dir.string())));
  }
  zeus::check_output_path(path);
}

// kInvalidArgument before any work when `dir` cannot become an output directory: a file
// in its place, or no write permission where it would be created.
inline void check_output_dir(const std::string& dir, const std::string& flag,
                             std::initializer_list<const char*> files) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (fs::exists(p, ec) && !fs::is_directory(p, ec)) {
    zeus::throw_error(
        zeus::ErrorCode::kInvalidArgument,
        fmt::format("{} {}: exists and is not a directory", flag, zeus::printable(dir)));
  }
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();  // nearest existing ancestor
  if (!fs::is_directory(p, ec)) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{} {}: {} is not a directory", flag, zeus::printable(dir),
                                  zeus::printable(p.string())));
  }
  if (::access(p.c_str(), W_OK | X_OK) != 0) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{} {}: cannot write into {}: {}", flag, zeus::printable(dir),
                                  zeus::printable(p.string()), zeus::errno_text(errno)));
  }
  for (const char* name : files) {
    if (fs::is_directory(fs::path(dir) / name, ec)) {
      zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                        fmt::format("{} {}: {} is a directory", flag, zeus::printable(dir), name));
    }
  }
}

inline void check_output_file(const std::string& path, const std::string& flag) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    zeus::throw_error(
        zeus::ErrorCode::kInvalidArgument,
        fmt::format("{} {}: is a directory, expected a file", flag, zeus::printable(path)));
  }
  const fs::path parent = fs::absolute(path, ec).parent_path();
  if (fs::exists(parent, ec) && !fs::is_directory(parent, ec)) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("{} {}: {} is not a directory", flag, zeus::printable(path),
                                  zeus::printable(parent.string())));
  }
}

inline void flush_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    zeus::throw_error(zeus::ErrorCode::kIo,
                      fmt::format("cannot write to standard output: {}", zeus::errno_text(errno)));
  }
}

}  // namespace zeus::cli
