// A fake /proc and cgroup tree in a temporary directory, for ConsumerReader
// tests: files are written exactly as the kernel shows them, one helper per
// shape, so each test states only what it varies.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "support/temp_dir.h"

namespace zeus::attribution::testing {

// A /proc/<pid>/stat line; the fields around the ones ConsumerReader reads
// (14 utime, 15 stime, 22 starttime) hold distinct values, so reading a
// neighbour by mistake shows.
inline std::string stat_line(std::uint32_t pid, const std::string& comm, std::uint64_t utime,
                             std::uint64_t stime, std::uint64_t start_ticks) {
  return std::to_string(pid) + " (" + comm + ") S 1 " + std::to_string(pid) +
         " 1 0 -1 4194560 1201 0 3 0 " + std::to_string(utime) + " " + std::to_string(stime) +
         " 901 902 20 0 1 0 " + std::to_string(start_ticks) +
         " 10473472 828 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
}

class FakeTree {
 public:
  FakeTree() : dir_("zeus_consumers") {
    std::filesystem::create_directories(proc());
    std::filesystem::create_directories(cgroup());
  }

  std::string proc() const { return dir_.path() + "/proc"; }
  std::string cgroup() const { return dir_.path() + "/cgroup"; }
  std::string root() const { return dir_.path(); }

  // Writes `text` to `relative` under the temporary directory, parents created.
  void write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path path = dir_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
  void remove(const std::string& relative) const { std::filesystem::remove_all(dir_ / relative); }

  // A process with its stat, comm (with the kernel's newline) and cgroup files.
  void add_process(std::uint32_t pid, const std::string& comm, const std::string& cgroup_file,
                   std::uint64_t utime = 150, std::uint64_t stime = 50,
                   std::uint64_t start_ticks = 4242) const {
    const std::string dir = "proc/" + std::to_string(pid);
    write(dir + "/stat", stat_line(pid, comm, utime, stime, start_ticks));
    write(dir + "/comm", comm + "\n");
    write(dir + "/cgroup", cgroup_file);
  }

  // The hierarchies each cgroup mode is detected from.
  void make_unified() const { write("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n"); }
  void make_v1(const std::string& hierarchy = "cpuacct") const {
    write("cgroup/" + hierarchy + "/cpuacct.usage", "987654321000\n");
  }
  void make_hybrid() const {
    make_v1();
    write("cgroup/unified/cgroup.controllers", "");
  }

 private:
  zeus::testing::TempDir dir_;
};

// CPU time in microseconds of `ticks` clock ticks on this machine.
inline std::uint64_t ticks_us(std::uint64_t ticks) {
  return ticks * 1'000'000 / static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK));
}

}  // namespace zeus::attribution::testing
