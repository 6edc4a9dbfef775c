#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <utility>

#include "monitor/attribution/proc_text.h"
#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution {
namespace {

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// A cgroup path from /proc may come from another cgroup namespace ("/../x"):
// no component may climb out of the hierarchy's root.
bool stays_inside(std::string_view path) {
  if (path.find('\0') != std::string_view::npos) return false;
  for (std::size_t start = 0;;) {
    const std::size_t slash = path.find('/', start);
    if (path.substr(start, slash - start) == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::optional<std::uint64_t> usage_usec(std::string_view cpu_stat) {
  constexpr std::string_view kKey = "usage_usec ";
  while (!cpu_stat.empty()) {
    const std::size_t newline = cpu_stat.find('\n');
    const std::string_view line = cpu_stat.substr(0, newline);
    if (line.starts_with(kKey)) return detail::parse_u64(line.substr(kKey.size()));
    cpu_stat.remove_prefix(newline == std::string_view::npos ? cpu_stat.size() : newline + 1);
  }
  return std::nullopt;
}

std::string_view without_newline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

std::uint64_t clock_ticks_per_second() {
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<std::uint64_t>(ticks) : 100;  // 100: Linux's USER_HZ
}

}  // namespace

const char* cgroup_mode_name(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kUnified:
      return "unified";
    case CgroupMode::kLegacy:
      return "legacy";
    case CgroupMode::kHybrid:
      return "hybrid";
    case CgroupMode::kNone:
      return "none";
  }
  return "unknown";
}

ConsumerReader::ConsumerReader(std::string proc_root, std::string cgroup_root)
    : proc_root_(std::move(proc_root)), cgroup_root_(std::move(cgroup_root)) {
  if (is_file(cgroup_root_ + "/cgroup.controllers")) {
    mode_ = CgroupMode::kUnified;
    cpu_hierarchy_ = cgroup_root_;
    return;
  }
  // systemd mounts cpu and cpuacct together as "cpu,cpuacct"; other setups
  // mount cpuacct alone.
  for (const char* dir : {"/cpuacct", "/cpu,cpuacct"}) {
    if (is_file(cgroup_root_ + dir + "/cpuacct.usage")) {
      cpu_hierarchy_ = cgroup_root_ + dir;
      mode_ = is_directory(cgroup_root_ + "/unified") ? CgroupMode::kHybrid : CgroupMode::kLegacy;
      return;
    }
  }
  mode_ = CgroupMode::kNone;
}

std::vector<std::uint32_t> ConsumerReader::pids() const {
  std::vector<std::uint32_t> pids;
  DIR* dir = ::opendir(proc_root_.c_str());
  if (dir == nullptr) return pids;
  while (const dirent* entry = ::readdir(dir)) {
    const auto pid = detail::parse_u64(entry->d_name);
    if (pid && *pid > 0 && *pid <= std::numeric_limits<std::uint32_t>::max()) {
      pids.push_back(static_cast<std::uint32_t>(*pid));
    }
  }
  ::closedir(dir);
  return pids;
}

std::optional<ProcessInfo> ConsumerReader::process(std::uint32_t pid) const {
  // Every file is read through one descriptor of /proc/<pid>: once that
  // process exits, reads fail instead of reaching a new process given the pid.
  const std::string dir = proc_root_ + "/" + std::to_string(pid);
  const detail::Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) return std::nullopt;
  const auto stat_text = detail::read_small_file(dir_fd.get(), "stat");
  const auto stat = stat_text ? detail::parse_proc_stat(*stat_text, pid) : std::nullopt;
  const auto comm = detail::read_small_file(dir_fd.get(), "comm");
  if (!stat || !comm) return std::nullopt;
  std::optional<std::string> cgroup;
  if (const auto text = detail::read_small_file(dir_fd.get(), "cgroup")) {
    cgroup = detail::counter_cgroup(*text, mode_);
  } else if (mode_ == CgroupMode::kNone) {
    cgroup = "";  // a kernel without cgroups has no /proc/<pid>/cgroup
  }
  if (!cgroup) return std::nullopt;
  static const std::uint64_t kTicksPerSecond = clock_ticks_per_second();
  return ProcessInfo{pid,
                     stat->start_ticks,
                     std::string(without_newline(*comm)),
                     std::move(*cgroup),
                     detail::ticks_to_us(stat->cpu_ticks, kTicksPerSecond),
                     stat->ppid};
}

std::optional<std::uint64_t> ConsumerReader::cgroup_cpu_time_us(std::string_view cgroup) const {
  if (mode_ == CgroupMode::kNone || !stays_inside(cgroup)) return std::nullopt;
  while (cgroup.starts_with('/')) cgroup.remove_prefix(1);
  std::string dir = cpu_hierarchy_;
  if (!cgroup.empty()) dir.append("/").append(cgroup);
  if (mode_ == CgroupMode::kUnified) {
    const auto text = detail::read_small_file(AT_FDCWD, dir + "/cpu.stat");
    return text ? usage_usec(*text) : std::nullopt;
  }
  const auto text = detail::read_small_file(AT_FDCWD, dir + "/cpuacct.usage");
  const auto ns = text ? detail::parse_u64(without_newline(*text)) : std::nullopt;
  if (!ns) return std::nullopt;
  return *ns / 1000;
}

bool ConsumerReader::cgroup_has_children(std::string_view cgroup) const {
  if (mode_ == CgroupMode::kNone || !stays_inside(cgroup)) return false;
  while (cgroup.starts_with('/')) cgroup.remove_prefix(1);
  std::string dir = cpu_hierarchy_;
  if (!cgroup.empty()) dir.append("/").append(cgroup);
  // Child cgroups are the only subdirectories of a cgroup directory.
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) return true;
  }
  return false;
}

}  // namespace zeus::attribution
