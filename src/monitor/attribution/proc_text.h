// The small text files of /proc and the cgroup filesystems, read and parsed
// without exceptions: a process or cgroup can disappear between any two reads,
// and that is an ordinary outcome (nullopt), not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution::detail {

// A file descriptor, closed on every return path; negative when the open failed.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The whole file `name` relative to the directory `dir_fd` (AT_FDCWD for an
// absolute or cwd-relative path), at most `max_bytes`; nullopt when it cannot
// be opened or read (gone, no permission) or is longer than that.
std::optional<std::string> read_small_file(int dir_fd, const std::string& name,
                                           std::size_t max_bytes = 64 * 1024);

// A decimal number that is the whole of `text`; nullopt otherwise.
std::optional<std::uint64_t> parse_u64(std::string_view text);

// The fields of /proc/<pid>/stat this part uses, in clock ticks.
struct StatFields {
  std::uint32_t ppid = 0;         // field 4
  std::uint64_t start_ticks = 0;  // field 22
  std::uint64_t cpu_ticks = 0;    // fields 14 + 15 (utime + stime)
};
// Parses /proc/<pid>/stat; nullopt when it is malformed or names another pid.
std::optional<StatFields> parse_proc_stat(std::string_view text, std::uint32_t pid);

// The cgroup path in /proc/<pid>/cgroup that holds the CPU counters in `mode`
// ("" when the file lists no such hierarchy); nullopt when a line is malformed.
std::optional<std::string> counter_cgroup(std::string_view text, CgroupMode mode);

// Clock ticks to microseconds, without overflow for any tick count that fits.
std::uint64_t ticks_to_us(std::uint64_t ticks, std::uint64_t ticks_per_second);

}  // namespace zeus::attribution::detail
