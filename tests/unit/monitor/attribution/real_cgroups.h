// Real cgroups and CPU burners for tests that need the kernel's own
// accounting (root on a machine whose cgroup filesystem is writable).
//
//   std::string why;
//   auto group = RealCgroup::create(counter_hierarchy(), "zeus-test-x", why);
//   if (!group) GTEST_SKIP() << why;
//   Burner burner(0.75);        // declare after the cgroups it joins
//   group->add(burner.pid());
//   burner.start();
//   ASSERT_TRUE(burner.wait_done(std::chrono::seconds(30)));
//   ... read counters while the burner sleeps; destructors kill, reap, rmdir.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace zeus::attribution::testing {

// The directory ConsumerReader reads CPU counters under for `cgroup_root`
// (v2: the root; v1 and hybrid: its cpuacct hierarchy), "" where there is none.
std::string counter_hierarchy(const std::string& cgroup_root = "/sys/fs/cgroup");

// A cgroup made for one test, removed (rmdir) when destroyed. Processes are
// never moved out of it: kill and reap its members first (a Burner declared
// after it is destroyed before it).
class RealCgroup {
 public:
  // mkdir <hierarchy>/<name>; nullptr with `why` set where the filesystem is
  // absent, read-only or refuses.
  static std::unique_ptr<RealCgroup> create(const std::string& hierarchy, const std::string& name,
                                            std::string& why);
  ~RealCgroup();
  RealCgroup(const RealCgroup&) = delete;
  RealCgroup& operator=(const RealCgroup&) = delete;

  // Moves `pid` in (writes cgroup.procs); std::runtime_error when refused.
  void add(pid_t pid) const;
  // "/<name>": the path /proc/<pid>/cgroup shows and cgroup_cpu_time_us takes.
  const std::string& path() const { return path_; }
  // The directory in the cgroup filesystem.
  const std::string& dir() const { return dir_; }

 private:
  RealCgroup(std::string dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  std::string dir_;
  std::string path_;
};

// A child process that, once started, uses `duty` of every `period` in CPU
// time for `periods` periods (measured on its own CPU clock, so the total is
// duty × period × periods even on a busy machine), then says so and sleeps
// until it is killed: its counters can be read while it still exists.
class Burner {
 public:
  explicit Burner(double duty, std::chrono::microseconds period = std::chrono::milliseconds(10),
                  int periods = 150);
  ~Burner();  // stop()
  Burner(const Burner&) = delete;
  Burner& operator=(const Burner&) = delete;

  pid_t pid() const { return pid_; }
  // The CPU time the whole burn takes.
  std::chrono::microseconds cpu_budget() const { return budget_; }
  void start();
  // Whether the burn finished within `timeout`.
  bool wait_done(std::chrono::milliseconds timeout);
  // Kills and reaps the child; idempotent.
  void stop();

 private:
  pid_t pid_ = -1;
  int start_fd_ = -1;  // the parent writes one byte to start the burn
  int done_fd_ = -1;   // the child writes one byte when the burn is done
  std::chrono::microseconds budget_{0};
};

}  // namespace zeus::attribution::testing
