// File helpers with the guarantees the project relies on.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zeus {

// The one way the project writes a whole output file (profiles, plans,
// reports). For a regular file (or a new one) a crash at any point leaves
// either the old file or the complete new one: write a temporary file in the
// same directory, fsync it, rename it over the target, fsync the directory.
// A symbolic link is followed: the file it points to is replaced, the link
// stays. An existing file keeps its mode (and owner, when allowed); a new one
// gets 0666 minus the umask. Character devices and pipes (/dev/stdout,
// /dev/null) are written in place; directories, block devices and sockets are
// refused (kInvalidArgument). Creates missing parent directories. kIo on any
// failed write (e.g. a full disk); the old file is untouched.
void write_file_atomically(const std::string& path, std::string_view contents);

// Largest input file the project reads by default (traces, profiles, models).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;

// Reads a whole regular file of at most `max_bytes`. ErrorCode::kIo naming the
// path when it is missing or unreadable; kInvalidArgument when it is a
// directory, not a regular file (FIFO, device, socket: never opened in a way
// that blocks) or larger than `max_bytes`.
std::string read_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

// Reads a small sysfs-style file and trims trailing whitespace. Returns false
// (and sets errno) instead of throwing, for hot paths and probing.
bool read_small_file(const std::string& path, std::string& out);

}  // namespace zeus
