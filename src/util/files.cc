#include "zeus/util/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "zeus/util/error.h"

namespace zeus {
namespace {

[[noreturn]] void throw_io(const std::string& what, const std::string& path) {
  throw_error(ErrorCode::kIo, fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  }
  std::string tmp = (dir / ("." + target.filename().string() + ".tmpXXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw_io("cannot create a temporary file next to", path);
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      throw_io("cannot write", tmp);
    }
    written += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);  // mkstemp makes 0600; the result should read like any file
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    throw_io("cannot flush", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    throw_io("cannot move the new file into place at", path);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string read_file(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == EISDIR) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is a directory, not a file", path));
    }
    throw_io("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    throw_io("cannot stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw_error(ErrorCode::kInvalidArgument, fmt::format("'{}' is a directory, not a file", path));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("'{}' is not a regular file (a pipe, device or socket); give a file", path));
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is too large ({} bytes; at most {} are read)", path,
                            static_cast<std::uint64_t>(st.st_size), max_bytes));
  }
  std::string out;
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (true) {
    if (got == out.size()) {
      if (out.size() >= max_bytes) break;
      // The file grew after fstat (or reports size 0, like procfs): read on, bounded.
      out.resize(std::min(max_bytes, std::max<std::size_t>(out.size() * 2, 4096)));
    }
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      errno = saved;
      throw_io("cannot read", path);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

bool read_small_file(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[256];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof(buf));
  } while (n < 0 && errno == EINTR);
  const int saved = errno;
  ::close(fd);
  if (n < 0) {
    errno = saved;
    return false;
  }
  std::size_t len = static_cast<std::size_t>(n);
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t')) --len;
  out.assign(buf, len);
  return true;
}

}  // namespace zeus
