// The per-device worker: commands run one at a time in arrival order, on the
// worker's thread, or on the caller's while the worker is idle.
#include "zeusd/device_worker.h"

#include <gtest/gtest.h>

#include <future>
#include <vector>

namespace zeus::zeusd {
namespace {

TEST(DeviceWorker, PostedTasksRunInOrderOnTheWorkerThread) {
  DeviceWorker w("gpu0");
  std::vector<int> order;
  std::promise<std::thread::id> where;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(w.post([&order, i] { order.push_back(i); }));
  ASSERT_TRUE(w.post([&where] { where.set_value(std::this_thread::get_id()); }));
  EXPECT_NE(where.get_future().get(), std::this_thread::get_id());
  w.stop();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(DeviceWorker, AnIdleWorkerLetsTheCallerRunTheTask) {
  // Fails if run_here_or_post always queues (the saving is lost) or runs
  // the task anywhere but on the caller's thread.
  DeviceWorker w("gpu0");
  std::thread::id ran_on;
  ASSERT_TRUE(w.run_here_or_post([&] { ran_on = std::this_thread::get_id(); }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(DeviceWorker, ABusyWorkerQueuesTheTaskBehindTheRunningOne) {
  // Fails if run_here_or_post runs a task beside a running one (two commands
  // interleaved on a GPU) or ahead of tasks queued before it.
  DeviceWorker w("gpu0");
  std::promise<void> release;
  std::promise<void> started;
  std::vector<int> order;
  ASSERT_TRUE(w.post([&] {
    started.set_value();
    release.get_future().wait();
    order.push_back(1);
  }));
  started.get_future().wait();
  ASSERT_TRUE(w.post([&] { order.push_back(2); }));
  std::thread::id ran_on;
  ASSERT_TRUE(w.run_here_or_post([&] {
    ran_on = std::this_thread::get_id();
    order.push_back(3);
  }));
  EXPECT_TRUE(order.empty());  // queued, not run here
  release.set_value();
  w.stop();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(DeviceWorker, TasksPostedDuringAnInlineTaskRunAfterIt) {
  DeviceWorker w("gpu0");
  std::vector<int> order;
  std::mutex m;
  const auto note = [&](int i) {
    std::lock_guard lock(m);
    order.push_back(i);
  };
  std::promise<void> posted;
  std::thread other;
  ASSERT_TRUE(w.run_here_or_post([&] {
    other = std::thread([&] {
      EXPECT_TRUE(w.post([&] { note(2); }));
      posted.set_value();
    });
    posted.get_future().wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // give the worker a chance
    note(1);
  }));
  other.join();
  w.stop();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(DeviceWorker, StopDrainsTheQueueAndRefusesLaterTasks) {
  DeviceWorker w("gpu0");
  int ran = 0;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.post([&] { ++ran; }));
  w.stop();
  EXPECT_EQ(ran, 3);
  EXPECT_FALSE(w.post([&] { ++ran; }));
  EXPECT_FALSE(w.run_here_or_post([&] { ++ran; }));
  EXPECT_EQ(ran, 3);
}

TEST(DeviceWorker, AThrowingTaskDoesNotStopTheWorker) {
  DeviceWorker w("gpu0");
  EXPECT_TRUE(w.run_here_or_post([] { throw std::runtime_error("boom"); }));
  EXPECT_TRUE(w.post([] { throw std::runtime_error("boom"); }));
  std::promise<void> done;
  ASSERT_TRUE(w.post([&] { done.set_value(); }));
  EXPECT_EQ(done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

}  // namespace
}  // namespace zeus::zeusd
