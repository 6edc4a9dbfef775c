// Issue 20, safe by default: zeusd refuses signing keys others can read or
// that are too short, says loudly when anyone may control GPUs, and makes or
// names the socket's directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "unit/zeusd/zeusd_test_helpers.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"
#include "zeus/zeusd/jwt.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kGoodKey = "0123456789abcdef0123456789abcdef0123456789";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

TEST(SigningKey, ReadableByGroupOrOthersIsRefusedWithTheFix) {
  const std::string dir = make_temp_dir("zeusd_key_mode");
  const std::string path = write_signing_key(dir, kGoodKey);
  EXPECT_EQ(read_signing_key(path), kGoodKey);  // 0600 is accepted
  for (const auto mode : {0644, 0640, 0604, 0620, 0602}) {
    ASSERT_EQ(::chmod(path.c_str(), static_cast<mode_t>(mode)), 0);
    const std::string why = error_of([&] { read_signing_key(path); });
    EXPECT_THAT(why, HasSubstr("chmod 600 " + path)) << std::oct << mode;
  }
  // The daemon refuses to start with it.
  DaemonOptions o;
  o.signing_key_path = path;
  o.socket_path = dir + "/s.sock";
  EXPECT_THAT(error_of([&] { Daemon d(o, {}); }), HasSubstr("can read or change it"));
  fs::remove_all(dir);
}

// A 0600 key in a folder anyone may write to can be swapped for the
// attacker's own key: the daemon refuses it (the class: files run as root
// that others can change).
TEST(SigningKey, InAFolderOthersMayWriteIsRefused) {
  const std::string dir = make_temp_dir("zeusd_key_dir");
  DaemonOptions o;
  o.signing_key_path = write_signing_key(dir, kGoodKey);
  o.socket_path = dir + "/s.sock";
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  try {
    Daemon d(o, {});
    ADD_FAILURE() << "started with a key in a world-writable folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoPermission);
    EXPECT_THAT(e.what(), HasSubstr("world-writable without the sticky bit"));
    EXPECT_THAT(e.what(), HasSubstr("signing key file"));
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_NO_THROW(Daemon(o, {}));
  fs::remove_all(dir);
}

TEST(SigningKey, ShorterThan32BytesIsRefused) {
  const std::string dir = make_temp_dir("zeusd_key_short");
  const std::string path = write_signing_key(dir, "hello\n");
  const std::string why = error_of([&] { read_signing_key(path); });
  EXPECT_THAT(why, HasSubstr("is 5 bytes; use at least 32 random bytes"));
  EXPECT_THAT(why, HasSubstr("openssl rand -base64 32"));
  write_signing_key(dir, std::string(31, 'k') + "\n\n");  // whitespace does not count
  EXPECT_THAT(error_of([&] { read_signing_key(path); }), HasSubstr("is 31 bytes"));
  write_signing_key(dir, std::string(32, 'k'));
  EXPECT_EQ(read_signing_key(path), std::string(32, 'k'));
  fs::remove_all(dir);
}

// Starts a daemon with `o` and counts the start-up warnings about control
// without authentication.
std::size_t open_control_warnings(DaemonOptions o) {
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kInfo);
  FakeNode node;
  RunningDaemon d(std::move(o), node.devices);
  return sink->count(log::Level::kWarn, "gpu-control is enabled without authentication");
}

TEST(OpenControl, IsWarnedAboutWhenAnyLocalUserMayChangeGpus) {
  DaemonOptions o;
  o.num_workers = 1;
  EXPECT_EQ(open_control_warnings(o), 1u);  // the defaults: 0666, no key
  o.socket_permissions = 0660;              // a group decides who may connect
  EXPECT_EQ(open_control_warnings(o), 0u);
  o.socket_permissions = 0666;
  o.enabled = {ApiGroup::kGpuRead, ApiGroup::kCpuRead};  // nothing to control
  EXPECT_EQ(open_control_warnings(o), 0u);
  o.enabled = {ApiGroup::kGpuControl};
  const std::string keydir = make_temp_dir("zeusd_open_key");
  o.signing_key_path = write_signing_key(keydir, kGoodKey);  // tokens decide
  EXPECT_EQ(open_control_warnings(o), 0u);
  fs::remove_all(keydir);
}

TEST(SocketDirectory, IsCreatedWhenAskedAndNamedWhenMissing) {
  FakeNode node;
  const std::string dir = make_temp_dir("zeusd_rundir");
  DaemonOptions o;
  o.num_workers = 1;
  o.socket_path = dir + "/run/zeusd/zeusd.sock";  // two levels missing
  o.create_socket_directory = true;
  {
    Daemon d(o, node.devices);
    try {
      d.start();
      ADD_FAILURE() << "created a directory whose parent is missing";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNotFound);
      EXPECT_THAT(e.what(), HasSubstr("mkdir -p -m 755 " + dir + "/run/zeusd"));
    }
  }
  EXPECT_FALSE(fs::exists(dir + "/run"));
  fs::create_directory(dir + "/run");
  {
    o.create_socket_directory = false;
    Daemon d(o, node.devices);
    EXPECT_THROW(d.start(), Error);  // not asked to create it
  }
  {
    o.create_socket_directory = true;
    Daemon d(o, node.devices);
    d.start();
    struct stat st {};
    ASSERT_EQ(::stat((dir + "/run/zeusd").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    EXPECT_EQ(http::Client(d.api_url()).get("/discover").status, 200);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::zeusd::testing
