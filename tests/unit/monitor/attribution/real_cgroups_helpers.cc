#include "real_cgroups.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution::testing {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::int64_t ns(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::int64_t now_ns(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return ns(t);
}

// The child's whole life: wait for the start byte, burn, report, sleep.
[[noreturn]] void burn(int start_fd, int done_fd, double duty, std::int64_t period_ns,
                       int periods) {
  char byte = 0;
  ssize_t n = 0;
  while ((n = ::read(start_fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) ::_exit(0);  // the test ended before starting the burn
  const std::int64_t wall_start = now_ns(CLOCK_MONOTONIC);
  const std::int64_t cpu_start = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  for (int k = 1; k <= periods; ++k) {
    const auto cpu_target = cpu_start + static_cast<std::int64_t>(duty * period_ns * k);
    while (now_ns(CLOCK_PROCESS_CPUTIME_ID) < cpu_target) {
    }
    const std::int64_t wake = wall_start + period_ns * k;
    const timespec until{static_cast<time_t>(wake / 1'000'000'000), wake % 1'000'000'000};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
    }
  }
  [[maybe_unused]] const ssize_t written = ::write(done_fd, &byte, 1);
  for (;;) ::pause();
}

}  // namespace

std::string counter_hierarchy(const std::string& cgroup_root) {
  switch (ConsumerReader("/proc", cgroup_root).mode()) {
    case CgroupMode::kUnified:
      return cgroup_root;
    case CgroupMode::kLegacy:
    case CgroupMode::kHybrid:
      return std::filesystem::exists(cgroup_root + "/cpuacct/cpuacct.usage")
                 ? cgroup_root + "/cpuacct"
                 : cgroup_root + "/cpu,cpuacct";
    case CgroupMode::kNone:
      break;
  }
  return "";
}

std::unique_ptr<RealCgroup> RealCgroup::create(const std::string& hierarchy,
                                               const std::string& name, std::string& why) {
  if (hierarchy.empty()) {
    why = "no cgroup hierarchy with CPU counters is mounted";
    return nullptr;
  }
  const std::string dir = hierarchy + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    why = errno_text("cannot create cgroup " + dir + " (needs root and a writable cgroup fs)");
    return nullptr;
  }
  return std::unique_ptr<RealCgroup>(new RealCgroup(dir, "/" + name));
}

RealCgroup::~RealCgroup() {
  // Members that were just killed leave the cgroup asynchronously.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::cerr << errno_text("could not remove test cgroup " + dir_) << "\n";
}

void RealCgroup::add(pid_t pid) const {
  const std::string file = dir_ + "/cgroup.procs";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(errno_text("open " + file));
  const std::string text = std::to_string(pid);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const std::string error = ok ? "" : errno_text("write " + text + " to " + file);
  ::close(fd);
  if (!ok) throw std::runtime_error(error);
}

Burner::Burner(double duty, std::chrono::microseconds period, int periods)
    : budget_(static_cast<std::int64_t>(duty * static_cast<double>(period.count()) * periods)) {
  int start[2], done[2];
  if (::pipe2(start, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  if (::pipe2(done, O_CLOEXEC) != 0) {
    ::close(start[0]);
    ::close(start[1]);
    throw std::runtime_error(errno_text("pipe"));
  }
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    // Only the parent's ends may keep the pipes open, and a test that dies
    // must not leave a burner behind.
    ::close(start[1]);
    ::close(done[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    burn(start[0], done[1], duty, period.count() * 1000, periods);
  }
  ::close(start[0]);
  ::close(done[1]);
  start_fd_ = start[1];
  done_fd_ = done[0];
  if (pid_ < 0) {
    stop();
    throw std::runtime_error(errno_text("fork"));
  }
}

Burner::~Burner() { stop(); }

void Burner::start() {
  const char byte = 1;
  if (::write(start_fd_, &byte, 1) != 1) throw std::runtime_error(errno_text("start burner"));
}

bool Burner::wait_done(std::chrono::milliseconds timeout) {
  pollfd fd{done_fd_, POLLIN, 0};
  return ::poll(&fd, 1, static_cast<int>(timeout.count())) == 1 && (fd.revents & POLLIN) != 0;
}

void Burner::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  for (int* fd : {&start_fd_, &done_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

}  // namespace zeus::attribution::testing
