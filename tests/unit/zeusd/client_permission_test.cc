// An ordinary user whose account may not open zeusd's socket (the unit makes
// it 660, group zeusd) is told to join the group, not to start a daemon that
// is already running. Runs the client in a child process as uid 65534.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "zeus/device/zeusd_backend.h"
#include "zeus/util/error.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What ZeusdConnection says in a child running as `uid` (code, then text).
std::string connect_as(unsigned uid, const std::string& socket) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string said = "connected";
    if (::setgid(65534) != 0 || ::setuid(uid) != 0) ::_exit(101);
    try {
      device::ZeusdConnection c(device::ZeusdConfig{"unix:" + socket, socket, ""});
    } catch (const Error& e) {
      said = std::string(error_code_name(e.code())) + ": " + e.what();
    }
    (void)!::write(fds[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

TEST(ZeusdClientChildProcess, ASocketThisUserMayNotOpenSaysToJoinTheGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the client as another user";
  DaemonOptions o;
  o.socket_permissions = 0660;  // as the unit: root and the zeusd group only
  RunningDaemon d(o, FakeNode().devices);
  ASSERT_EQ(::chmod(d.dir.c_str(), 0755), 0);  // the directory is not what refuses
  const std::string said = connect_as(65534, d.dir + "/zeusd.sock");
  EXPECT_THAT(said, HasSubstr("no_permission: "));
  EXPECT_THAT(said, HasSubstr("adduser $USER zeusd"));
  EXPECT_THAT(said, Not(HasSubstr("Start it")));
  // No daemon at all: then starting one is the advice.
  const std::string none = connect_as(0, d.dir + "/absent.sock");
  EXPECT_THAT(none, HasSubstr("Start it"));
  EXPECT_THAT(none, Not(HasSubstr("adduser")));
}

}  // namespace
}  // namespace zeus::zeusd::testing
