#include "monitor/attribution/proc_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <vector>

namespace zeus::attribution::detail {
namespace {

// Reads to the end; false on a failed read or more than max_bytes.
bool read_all(int fd, std::size_t max_bytes, std::string& out) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;  // ESRCH: the process exited while we read
    if (n == 0) return true;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) return false;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

// Splits on single spaces; /proc/<pid>/stat separates its fields that way.
std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> fields;
  while (!text.empty()) {
    const std::size_t end = text.find(' ');
    fields.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return fields;
}

bool has_controller(std::string_view list, std::string_view wanted) {
  for (std::size_t start = 0;;) {
    const std::size_t comma = list.find(',', start);
    if (list.substr(start, comma - start) == wanted) return true;
    if (comma == std::string_view::npos) return false;
    start = comma + 1;
  }
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> read_small_file(int dir_fd, const std::string& name,
                                           std::size_t max_bytes) {
  // O_NONBLOCK: a FIFO planted in a tree must not hang the reader.
  Fd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return std::nullopt;
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  std::string text;
  if (!read_all(fd.get(), max_bytes, text)) return std::nullopt;
  return text;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<StatFields> parse_proc_stat(std::string_view text, std::uint32_t pid) {
  // "pid (comm) state ...": comm may hold spaces and ')', so the fields start
  // after the LAST ')'.
  const std::size_t open = text.find(" (");
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  if (parse_u64(text.substr(0, open)) != pid) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  if (rest.empty() || rest.front() != ' ') return std::nullopt;
  rest.remove_prefix(1);
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const std::vector<std::string_view> fields = split_spaces(rest);
  if (fields.size() < 20) return std::nullopt;
  const auto utime = parse_u64(fields[14 - 3]);
  const auto stime = parse_u64(fields[15 - 3]);
  const auto start = parse_u64(fields[22 - 3]);
  const auto ppid = parse_u64(fields[4 - 3]);
  if (!utime || !stime || !start || !ppid || *ppid > 0xffffffffULL || *utime + *stime < *utime) {
    return std::nullopt;
  }
  return StatFields{static_cast<std::uint32_t>(*ppid), *start, *utime + *stime};
}

std::optional<std::string> counter_cgroup(std::string_view text, CgroupMode mode) {
  const bool v1 = mode == CgroupMode::kLegacy || mode == CgroupMode::kHybrid;
  std::string found;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty()) continue;
    // "hierarchy-id:controllers:path"; the path itself may hold ':'.
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return std::nullopt;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const bool match =
        v1 ? has_controller(controllers, "cpuacct") : id == "0" && controllers.empty();
    if (match) found = line.substr(second + 1);
  }
  return found;
}

std::uint64_t ticks_to_us(std::uint64_t ticks, std::uint64_t ticks_per_second) {
  if (ticks_per_second == 0) return 0;
  return ticks / ticks_per_second * 1'000'000 +
         ticks % ticks_per_second * 1'000'000 / ticks_per_second;
}

}  // namespace zeus::attribution::detail
