// One powercap energy_uj counter made monotone (internal to the RAPL backend).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace zeus::rapl_internal {

// The message given when energy_uj is root-only (and the zone's `problem`).
inline constexpr const char* kNoPermissionHint =
    "energy_uj is readable only by root since Linux 5.10 (CVE-2020-8694): run as root, grant "
    "read access (e.g. a udev rule or chmod), or read it through zeusd (run `zeusd serve` as "
    "root and set ZEUSD_SOCK_PATH; docs/zeusd.md)";

// A wrap-corrected energy_uj counter. Keeps the file open and re-reads it with
// pread(fd, .., 0), so a read is one system call. The cumulative value is
// `wrap offset + raw`; each decrease of the raw value adds one counter period
// (max_energy_range_uj + 1; the true modulus, so the error is at most one raw
// unit). Wraps are seen only if read() runs at least once per wrap period.
//
// Thread-safe: the mutex guards the descriptor and the wrap state, so the user
// and the keep-alive thread may call read() at the same time.
class RaplCounter {
 public:
  // Opens `energy_path` and takes a first reading. Throws zeus::Error:
  // kNoPermission (EACCES/EPERM), kIo (other open/read failures), kParse.
  RaplCounter(std::string energy_path, std::uint64_t max_energy_range_uj);
  ~RaplCounter();
  RaplCounter(const RaplCounter&) = delete;
  RaplCounter& operator=(const RaplCounter&) = delete;

  // Cumulative µJ since this counter was opened plus the first raw value.
  // Throws zeus::Error (kNoPermission, kIo, kParse) when the file can no longer
  // be read; the wrap state is kept, so a later successful read continues.
  std::uint64_t read_uj();

  const std::string& path() const { return path_; }
  std::uint64_t max_energy_range_uj() const { return range_uj_; }

 private:
  std::uint64_t read_raw_locked();
  bool try_pread_locked(std::uint64_t& out, int& err, bool& empty);
  void open_locked();

  const std::string path_;
  const std::uint64_t range_uj_;
  std::mutex mu_;
  int fd_ = -1;                  // guarded by mu_; -1 after a failed read
  std::uint64_t last_raw_ = 0;   // guarded by mu_
  std::uint64_t offset_uj_ = 0;  // guarded by mu_: sum of counter periods seen
};

// Reads a small sysfs text file holding one unsigned decimal number. Throws
// zeus::Error (kNoPermission, kIo, kParse) naming the file.
std::uint64_t read_uint_file(const std::string& path);

// Parses "<digits>[whitespace]"; false when the text is anything else.
bool parse_uint(const char* begin, const char* end, std::uint64_t& out);

}  // namespace zeus::rapl_internal
