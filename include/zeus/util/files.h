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

// Checks, before long work starts, that write_file_atomically(path) can
// succeed: kInvalidArgument when `path` is a directory or its parent is not
// one, kNoPermission when the folder that would hold it (or the nearest
// existing ancestor, for folders still to create) is not writable.
void check_output_path(const std::string& path);

// Largest input file the project reads by default (traces, profiles, models).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;

// Reads a whole regular file of at most `max_bytes`. ErrorCode::kIo naming the
// path when it is missing or unreadable; kInvalidArgument when it is a
// directory, not a regular file (FIFO, device, socket: never opened in a way
// that blocks) or larger than `max_bytes`.
std::string read_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

// The one way the project appends to a file (CSV logs): opened once with
// O_APPEND (created with 0666 minus the umask when missing; symbolic links
// followed; directories refused with kInvalidArgument), every append checked.
// kIo naming the path on any failed write (e.g. a full disk), so a log never
// loses rows silently. Not thread-safe: the owner serializes appends.
class AppendFile {
 public:
  explicit AppendFile(const std::string& path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // The file's first line (without the newline) as it was when opened; empty
  // for a new or empty file. Read from at most the first 64 KiB.
  const std::string& first_line() const { return first_line_; }
  // Whether the file was empty (or new) when opened.
  bool was_empty() const { return was_empty_; }
  void append(std::string_view text);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool was_empty_ = true;
  std::string first_line_;
};

}  // namespace zeus
