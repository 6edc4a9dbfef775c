// File helpers with the guarantees the project relies on.
#pragma once

#include <string>
#include <string_view>

namespace zeus {

// Writes `contents` to `path` so that a crash at any point leaves either the old
// file or the complete new one: write a temporary file in the same directory,
// fsync it, rename it over `path`, fsync the directory. Creates missing parent
// directories. ErrorCode::kIo on failure (the old file is untouched).
void write_file_atomically(const std::string& path, std::string_view contents);

// Reads a whole file; ErrorCode::kIo naming the path when it cannot.
std::string read_file(const std::string& path);

// Reads a small sysfs-style file and trims trailing whitespace. Returns false
// (and sets errno) instead of throwing, for hot paths and probing.
bool read_small_file(const std::string& path, std::string& out);

}  // namespace zeus
