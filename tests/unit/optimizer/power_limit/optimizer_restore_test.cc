// The optimizer's settings come back on every exit path: exception, signal,
// exit(). Through GpuSettingsGuard (tests/unit/device/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "unit/optimizer/power_limit/test_support.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"

namespace zeus {
namespace {

using namespace zeus::literals;
using testing::SimRig;

TEST(OptimizerRestore, ExceptionUnwindingRestores) {
  SimRig rig;
  rig.sims[0]->set_power_limit(260000_mW);
  auto train = [&] {
    power_limit::GlobalPowerLimitOptimizerOptions o;
    o.warmup_steps = 1;
    o.profile_steps = 2;
    power_limit::GlobalPowerLimitOptimizer opt(*rig.monitor, o);
    for (int i = 0; i < 10; ++i) {
      opt.on_step_begin();
      rig.step(10);
    }
    EXPECT_LT(rig.sims[0]->power_limit(), 300000_mW);
    EXPECT_TRUE(rig.sims[0]->persistence_mode());
    throw std::runtime_error("training diverged");
  };
  EXPECT_THROW(train(), std::runtime_error);
  EXPECT_EQ(rig.sims[0]->power_limit(), 260000_mW);
  EXPECT_FALSE(rig.sims[0]->persistence_mode());
}

// What a child process reported through its record pipe.
struct ChildResult {
  int status = 0;
  std::vector<std::string> lines;  // "L <mW>", "P <0|1>"
  std::string last_limit() const {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (it->starts_with("L ")) return *it;
    }
    return "";
  }
  std::string last_persistence() const {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (it->starts_with("P ")) return *it;
    }
    return "";
  }
};

std::string read_all(int fd) {
  std::string out;
  char buf[256];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Forks a child that starts the optimizer on a sim GPU whose original limit is
// 260 W, profiles until a lower limit is set, then runs `ending` (signal
// itself, exit, ...). Setter calls come back through a pipe written as they
// happen, so they survive the child's death.
template <class Ending>
ChildResult run_child(Ending ending, int signal_from_parent = 0) {
  int rec[2], ready[2];
  if (::pipe(rec) != 0 || ::pipe(ready) != 0) throw std::runtime_error("pipe");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::close(rec[0]);
    ::close(ready[0]);
    ::alarm(20);  // a broken restore must not hang the suite: SIGALRM then fails the test
    // Leaked on purpose: exit() must find them alive.
    auto* rig = new SimRig();
    rig->sims[0]->set_power_limit(260000_mW);
    rig->gpus[0]->set_record_fd(rec[1]);
    power_limit::GlobalPowerLimitOptimizerOptions o;
    o.warmup_steps = 1;
    o.profile_steps = 2;
    auto* opt = new power_limit::GlobalPowerLimitOptimizer(*rig->monitor, o);
    while (rig->sims[0]->power_limit() >= 250000_mW) {
      opt->on_step_begin();
      rig->step(10);
    }
    [[maybe_unused]] const ssize_t n = ::write(ready[1], "r", 1);
    ending();
    ::_exit(3);  // the ending should not return
  }
  ::close(rec[1]);
  ::close(ready[1]);
  char c = 0;
  const ssize_t got = ::read(ready[0], &c, 1);
  if (got == 1 && signal_from_parent != 0) ::kill(pid, signal_from_parent);
  ChildResult r;
  std::istringstream lines(read_all(rec[0]));
  for (std::string line; std::getline(lines, line);) r.lines.push_back(line);
  ::waitpid(pid, &r.status, 0);
  ::close(rec[0]);
  ::close(ready[0]);
  return r;
}

class RestoreOnSignal : public ::testing::TestWithParam<int> {};

TEST_P(RestoreOnSignal, ChildKilledBySignalEndsAtOriginalSettings) {
  const int sig = GetParam();
  const ChildResult r = run_child(
      [] {
        for (;;) ::pause();
      },
      sig);
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status;
  EXPECT_EQ(WTERMSIG(r.status), sig) << "the signal is re-raised with its default action";
  ASSERT_GE(r.lines.size(), 3u);
  EXPECT_EQ(r.lines.front(), "P 1");
  EXPECT_EQ(r.last_limit(), "L 260000");
  EXPECT_EQ(r.last_persistence(), "P 0");
}

INSTANTIATE_TEST_SUITE_P(TermAndInt, RestoreOnSignal, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& param_info) {
                           return std::string(param_info.param == SIGTERM ? "SIGTERM" : "SIGINT");
                         });

TEST(RestoreOnExit, PlainExitRestoresThroughAtexit) {
  const ChildResult r = run_child([] { std::exit(7); });
  ASSERT_TRUE(WIFEXITED(r.status)) << "status " << r.status;
  EXPECT_EQ(WEXITSTATUS(r.status), 7);
  EXPECT_EQ(r.last_limit(), "L 260000");
  EXPECT_EQ(r.last_persistence(), "P 0");
}

TEST(RestoreOnExit, ChildWithoutRestoreWouldKeepTheLowLimit) {
  // Control for the tests above: _exit() skips every restore path, so the
  // record must end at the profiled limit, proving the records can tell.
  const ChildResult r = run_child([] { ::_exit(9); });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 9);
  EXPECT_NE(r.last_limit(), "L 260000");
  EXPECT_EQ(r.last_persistence(), "P 1");
}

}  // namespace
}  // namespace zeus
