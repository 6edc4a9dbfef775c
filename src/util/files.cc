#include "zeus/util/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <random>

#include "zeus/util/error.h"

namespace zeus {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void throw_io(const std::string& what, const std::string& path, int err = errno) {
  throw_error(ErrorCode::kIo, fmt::format("{} '{}': {}", what, path, errno_text(err)));
}

// Writes all of `contents` to `fd`; false with errno set on failure.
bool write_all(int fd, std::string_view contents) {
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {  // a pipe reader that is slow: wait, bounded by the reader
        ::usleep(1000);
        continue;
      }
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

// The path a (possibly dangling) chain of symbolic links ends at, so the
// file behind the link is written instead of the link being replaced.
fs::path follow_links(const fs::path& path) {
  fs::path current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(current.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) throw_io("cannot read the link", current.string());
    const fs::path next(std::string(buf, static_cast<std::size_t>(n)));
    current = next.is_absolute() ? next : current.parent_path() / next;
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("'{}': too many levels of symbolic links", path.string()));
}

// Character devices (/dev/null, a terminal) and pipes are written in place:
// there is nothing to replace atomically, and replacing them would be wrong.
void write_in_place(const std::string& path, std::string_view contents, bool is_fifo) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (is_fifo ? O_NONBLOCK : 0));
  if (fd < 0) {
    if (errno == ENXIO) {
      throw_error(ErrorCode::kIo, fmt::format("cannot write '{}': nobody reads that pipe", path));
    }
    throw_io("cannot open", path);
  }
  if (!write_all(fd, contents)) {
    const int saved = errno;
    ::close(fd);
    throw_io("cannot write", path, saved);
  }
  if (::close(fd) != 0) throw_io("cannot write", path);
}

std::string temporary_name(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937 rng{std::random_device{}()};
  return fmt::format(".{}.tmp{}-{}-{:08x}", target.filename().string(), ::getpid(),
                     counter.fetch_add(1), rng());
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view contents) {
  if (path.empty()) throw_error(ErrorCode::kInvalidArgument, "empty output path");
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // follows links, magic ones too
  if (exists) {
    if (S_ISDIR(st.st_mode)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is a directory; give a file path", path));
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      write_in_place(path, contents, S_ISFIFO(st.st_mode));
      return;
    }
    if (!S_ISREG(st.st_mode)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is not a regular file (a block device or socket); refusing to "
                              "write it",
                              path));
    }
  }
  // The file behind any symbolic links; the new file takes its place.
  fs::path target = follow_links(fs::path(path));
  if (exists) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) != nullptr) target = resolved;
  }
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  }
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    tmp = (dir / temporary_name(target)).string();
    // 0666 and the process umask, like any newly created file.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) throw_io("cannot create a temporary file next to", path);
  }
  if (fd < 0) throw_io("cannot create a temporary file next to", path);
  const auto fail = [&](const char* what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw_io(what, path, saved);
  };
  if (exists) {
    // Keep the replaced file's permissions and (when allowed) its owner.
    if (::fchmod(fd, st.st_mode & 07777) != 0) fail("cannot set the mode of the new");
    if (::fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM) fail("cannot set the owner of");
  }
  if (!write_all(fd, contents)) fail("cannot write");
  if (::fsync(fd) != 0) fail("cannot flush");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw_io("cannot write", path, saved);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw_io("cannot move the new file into place at", path, saved);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
    throw_io("cannot stat", path, saved);
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
      throw_io("cannot read", path, saved);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

void check_output_path(const std::string& path) {
  const fs::path target = follow_links(fs::path(path));
  std::error_code ec;
  if (fs::is_directory(target, ec)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is a directory; give a file path to write", path));
  }
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  while (!fs::exists(dir, ec)) {
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  if (!fs::is_directory(dir, ec)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("cannot write '{}': '{}' is not a directory", path, dir.string()));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw_error(ErrorCode::kNoPermission,
                fmt::format("cannot write '{}': the folder '{}' is not writable ({}); choose "
                            "another path",
                            path, dir.string(), errno_text(errno)));
  }
}

AppendFile::AppendFile(const std::string& path) : path_(path) {
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd_ < 0) {
    if (errno == EISDIR) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is a directory; give a file to append to", path));
    }
    throw_io("cannot open for appending", path);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int saved = errno;
    ::close(fd_);
    throw_io("cannot inspect", path, saved);
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    was_empty_ = false;
    const int rd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (rd >= 0) {
      char buf[65536];
      ssize_t n;
      do {
        n = ::pread(rd, buf, sizeof(buf), 0);
      } while (n < 0 && errno == EINTR);
      ::close(rd);
      if (n > 0) {
        const std::string_view head(buf, static_cast<std::size_t>(n));
        first_line_ = std::string(head.substr(0, head.find('\n')));
        if (!first_line_.empty() && first_line_.back() == '\r') first_line_.pop_back();
      }
    }
  }
  // A device or pipe (/dev/stdout) counts as empty: it gets the header.
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(std::string_view text) {
  if (!write_all(fd_, text)) throw_io("cannot append to", path_);
}

}  // namespace zeus
