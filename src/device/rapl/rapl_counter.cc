#include "device/rapl/rapl_counter.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "zeus/util/error.h"

namespace zeus::rapl_internal {
namespace {

[[noreturn]] void throw_errno(const std::string& path, int err, const char* what) {
  if (err == EACCES || err == EPERM) {
    throw_error(ErrorCode::kNoPermission,
                fmt::format("cannot {} {}: {}", what, path, kNoPermissionHint));
  }
  if (err == ENOENT || err == ENODEV) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot {} {}: the file vanished ({}); was the RAPL driver "
                            "unloaded or the powercap tree unmounted?",
                            what, path, errno_text(err)));
  }
  throw_error(ErrorCode::kIo, fmt::format("cannot {} {}: {}", what, path, errno_text(err)));
}

}  // namespace

bool parse_uint(const char* begin, const char* end, std::uint64_t& out) {
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc() || ptr == begin) return false;
  for (; ptr != end; ++ptr) {
    if (*ptr != '\n' && *ptr != ' ' && *ptr != '\t' && *ptr != '\r') return false;
  }
  return true;
}

std::uint64_t read_uint_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path, errno, "open");
  char buf[64];
  const ssize_t n = ::pread(fd, buf, sizeof(buf), 0);
  const int err = errno;
  ::close(fd);
  if (n < 0) throw_errno(path, err, "read");
  std::uint64_t value = 0;
  if (!parse_uint(buf, buf + n, value)) {
    throw_error(ErrorCode::kParse, fmt::format("{}: expected an unsigned integer, got '{}'", path,
                                               std::string(buf, static_cast<std::size_t>(n))));
  }
  return value;
}

RaplCounter::RaplCounter(std::string energy_path, std::uint64_t max_energy_range_uj)
    : path_(std::move(energy_path)), range_uj_(max_energy_range_uj) {
  std::lock_guard lock(mu_);
  open_locked();
  last_raw_ = read_raw_locked();
}

RaplCounter::~RaplCounter() {
  if (fd_ >= 0) ::close(fd_);
}

void RaplCounter::open_locked() {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw_errno(path_, errno, "open");
}

bool RaplCounter::try_pread_locked(std::uint64_t& out, int& err, bool& empty) {
  char buf[32];
  const ssize_t n = ::pread(fd_, buf, sizeof(buf), 0);
  err = n < 0 ? errno : 0;
  empty = n == 0;
  if (n <= 0) return false;
  if (!parse_uint(buf, buf + n, out)) {
    throw_error(ErrorCode::kParse, fmt::format("{}: expected an unsigned integer, got '{}'", path_,
                                               std::string(buf, static_cast<std::size_t>(n))));
  }
  return true;
}

std::uint64_t RaplCounter::read_raw_locked() {
  std::uint64_t raw = 0;
  int err = 0;
  bool empty = false;
  if (fd_ >= 0 && try_pread_locked(raw, err, empty)) return raw;
  // The open descriptor failed (sysfs gives ENODEV once the zone is removed)
  // or read nothing: reopen once, so a replaced file keeps working and a
  // vanished or root-only one gives the reason from open().
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  open_locked();
  if (try_pread_locked(raw, err, empty)) return raw;
  ::close(fd_);
  fd_ = -1;
  if (empty) throw_error(ErrorCode::kIo, fmt::format("{} read as empty", path_));
  throw_errno(path_, err, "read");
}

std::uint64_t RaplCounter::read_uj() {
  std::lock_guard lock(mu_);
  const std::uint64_t raw = read_raw_locked();
  if (raw < last_raw_) offset_uj_ += range_uj_ + 1;
  last_raw_ = raw;
  return offset_uj_ + raw;
}

}  // namespace zeus::rapl_internal
