// The SQLite store answers a change only once the write-ahead log is synced
// past it, and its syncs overlap: this binary's own fdatasync() stands in for
// libc's (the store's calls resolve to it) and can hold or fail the syncs of
// the log, so the tests see what is answered while a sync is in flight.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/util/error.h"

namespace {

enum class SyncMode { kPass, kHold, kFail };

struct SyncControl {
  std::mutex mutex;
  std::condition_variable changed;
  SyncMode mode = SyncMode::kPass;
  int held = 0;  // syncs of the log waiting in kHold now
};
SyncControl& control() {
  static SyncControl c;
  return c;
}

bool is_log(int fd) {
  char link[64];
  char target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  const std::string path(target, static_cast<std::size_t>(n));
  return path.size() > 4 && path.ends_with("-wal");
}

}  // namespace

extern "C" int fdatasync(int fd) {
  if (is_log(fd)) {
    SyncControl& c = control();
    std::unique_lock lock(c.mutex);
    if (c.mode == SyncMode::kFail) {
      errno = EIO;
      return -1;
    }
    if (c.mode == SyncMode::kHold) {
      ++c.held;
      c.changed.notify_all();
      c.changed.wait(lock, [&] { return c.mode != SyncMode::kHold; });
      --c.held;
    }
  }
  return static_cast<int>(::syscall(SYS_fdatasync, fd));
}

namespace zeus::batch_size {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

void set_mode(SyncMode m) {
  std::lock_guard lock(control().mutex);
  control().mode = m;
  control().changed.notify_all();
}
bool wait_held(int n) {
  std::unique_lock lock(control().mutex);
  return control().changed.wait_for(lock, 10s, [&] { return control().held >= n; });
}

struct Opened {
  TempDir dir;
  std::unique_ptr<Store> store = open_store("sqlite:///" + dir.path() + "/bso.db");
  Service service{*store};
  ~Opened() {
    set_mode(SyncMode::kPass);
    store->close();
  }
};

Outcome wait(std::future<Outcome>& f) {
  EXPECT_EQ(f.wait_for(10s), std::future_status::ready);
  return f.get();
}

std::future<Outcome> register_job(Service& s, int j) {
  auto p = std::make_shared<std::promise<Outcome>>();
  s.register_job(parse_job_spec(testing::workload_spec(j)),
                 [p](Outcome o) { p->set_value(std::move(o)); });
  return p->get_future();
}
std::future<Outcome> next(Service& s, int j) {
  auto p = std::make_shared<std::promise<Outcome>>();
  s.next_batch_size(w1::job_id(j), std::nullopt, [p](Outcome o) { p->set_value(std::move(o)); });
  return p->get_future();
}

// A batch size is a new trial (a write): its answer waits for the log's
// sync, so an answered trial survives a power loss.
TEST(SqliteDurability, ATrialIsAnsweredOnlyOnceTheLogIsSynced) {
  Opened o;
  auto r = register_job(o.service, 0);
  ASSERT_EQ(wait(r).status, 201);
  set_mode(SyncMode::kHold);
  auto f = next(o.service, 0);
  ASSERT_TRUE(wait_held(1)) << "the trial's commit was not synced";
  EXPECT_EQ(f.wait_for(300ms), std::future_status::timeout) << "answered before the log was synced";
  set_mode(SyncMode::kPass);
  const Outcome out = wait(f);
  EXPECT_FALSE(out.error);
  EXPECT_EQ(out.status, 200);
}

// A commit made while a sync is in flight gets a sync of its own at once
// (not after the one in flight): two syncs are held together, and each
// answer waits only for its own.
TEST(SqliteDurability, ACommitDuringASyncIsSyncedWithoutWaitingForIt) {
  Opened o;
  auto r0 = register_job(o.service, 0);
  auto r1 = register_job(o.service, 1);
  ASSERT_EQ(wait(r0).status, 201);
  ASSERT_EQ(wait(r1).status, 201);
  set_mode(SyncMode::kHold);
  auto first = next(o.service, 0);
  ASSERT_TRUE(wait_held(1));
  auto second = next(o.service, 1);
  EXPECT_TRUE(wait_held(2)) << "the second commit's sync waited for the first";
  EXPECT_EQ(second.wait_for(100ms), std::future_status::timeout);
  set_mode(SyncMode::kPass);
  EXPECT_EQ(wait(first).status, 200);
  EXPECT_EQ(wait(second).status, 200);
}

// A failed sync may have lost what was written: its requests get an error,
// and so does every later one (the store cannot promise durability again).
TEST(SqliteDurability, AFailedSyncIsAnErrorAndTheStoreRefusesWhatFollows) {
  Opened o;
  auto r = register_job(o.service, 0);
  ASSERT_EQ(wait(r).status, 201);
  set_mode(SyncMode::kFail);
  auto f = next(o.service, 0);
  const Outcome out = wait(f);
  ASSERT_TRUE(out.error) << "a trial whose sync failed was answered";
  try {
    std::rethrow_exception(out.error);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
  set_mode(SyncMode::kPass);
  auto again = register_job(o.service, 1);
  EXPECT_TRUE(wait(again).error) << "the store went on after a failed sync";
}

}  // namespace
}  // namespace zeus::batch_size
