// The C++ client against a served BSO: a training loop on a simulated GPU
// whose time is a ManualClock, so epochs take no real time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/device/devices.h"
#include "zeus/optimizer/batch_size/client/client.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

using http::Method;
using testing::call;
using ::testing::HasSubstr;

struct SimTraining {
  SimTraining() {
    device::DiscoveryOptions d;
    d.gpu_backend = "sim";
    d.sim_gpus = 2;
    d.clock = &clock;
    d.cpus = false;
    devices = device::discover_devices(d);
    monitor::EnergyMonitorOptions o;
    o.clock = &clock;
    monitor = std::make_unique<monitor::EnergyMonitor>(devices, o);
  }
  ManualClock clock;
  device::DeviceInventory devices;
  std::unique_ptr<monitor::EnergyMonitor> monitor;
};

JobSpec spec(const std::string& id) {
  JobSpec s;
  s.job_id = id;
  s.job_id_prefix = "c";
  s.batch_sizes = {32, 64, 128};
  s.default_batch_size = 64;
  s.max_epochs = 10;
  s.mab_seed = 1;
  return s;
}

TEST(BatchSizeClientTest, TrainsReportsAndStopsWhenConverged) {
  testing::TempDir d;
  testing::ServedBso server("sqlite:///" + d.path() + "/bso.db");
  SimTraining t;
  BatchSizeOptimizer opt(*t.monitor, server.url(), spec("c-1"));
  EXPECT_EQ(opt.job().number_of_gpus, 2);
  EXPECT_GT(opt.job().max_power, 0.0);
  EXPECT_EQ(std::fmod(opt.job().max_power, 2.0), 0.0);  // whole watts x 2 GPUs
  EXPECT_FALSE(opt.job().gpu_model.empty());
  EXPECT_EQ(opt.get_batch_size(), 64);
  EXPECT_EQ(opt.get_batch_size(), 64);  // cached: one trial
  opt.on_train_begin();
  t.clock.advance(Seconds(100));
  EXPECT_FALSE(opt.on_evaluate(0.1).stop_train);
  t.clock.advance(Seconds(100));
  const auto r = opt.on_evaluate(0.7);
  EXPECT_TRUE(r.stop_train);
  EXPECT_TRUE(r.converged);
  EXPECT_TRUE(opt.training_finished());
  // The server stored the cumulative time and a positive energy.
  auto c = server.client();
  int status = 0;
  const auto again = call(c, Method::kPost, "/report",
                          {{"job_id", "c-1"},
                           {"batch_size", 64},
                           {"trial_number", 1},
                           {"time", 1.0},
                           {"energy", 1.0},
                           {"metric", 0.0},
                           {"current_epoch", 1}},
                          &status);
  EXPECT_EQ(again["converged"], true);  // the stored outcome
}

TEST(BatchSizeClientTest, AbandonedRunMarksItsTrialFailed) {
  testing::TempDir d;
  testing::ServedBso server("sqlite:///" + d.path() + "/bso.db");
  SimTraining t;
  int first = 0;
  try {
    BatchSizeOptimizer opt(*t.monitor, server.url(), spec("c-2"));
    first = opt.get_batch_size();
    opt.on_train_begin();
    throw std::runtime_error("the training script crashed");
  } catch (const std::runtime_error&) {
  }
  BatchSizeOptimizer next(*t.monitor, server.url(), spec("c-2"));
  EXPECT_EQ(next.get_batch_size(), first);  // explored again, not skipped
  EXPECT_EQ(next.trial()->trial_number, 2);
}

TEST(BatchSizeClientTest, NotConvergingThrowsAndOnlyRankZeroAsks) {
  testing::TempDir d;
  testing::ServedBso server("sqlite:///" + d.path() + "/bso.db");
  SimTraining t;
  BatchSizeOptimizer opt(*t.monitor, server.url(), spec("c-3"));
  opt.get_batch_size();
  opt.on_train_begin();
  for (int e = 1; e < 10; ++e) {
    t.clock.advance(Seconds(10));
    ASSERT_FALSE(opt.on_evaluate(0.1).stop_train);
  }
  t.clock.advance(Seconds(10));
  try {
    opt.on_evaluate(0.1);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    EXPECT_THAT(e.what(), HasSubstr("max_epochs"));
  }
  ClientOptions rank1;
  rank1.rank = 1;
  BatchSizeOptimizer other(*t.monitor, server.url(), spec("c-3"), rank1);
  EXPECT_THROW(other.get_batch_size(), Error);
  auto different = spec("c-3");
  different.eta_knob = 0.9;
  try {
    BatchSizeOptimizer clash(*t.monitor, server.url(), different);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
  }
}

TEST(BatchSizeClientTest, RetriesTransportErrorsThenGivesUp) {
  SimTraining t;
  auto sink = std::make_shared<log::CapturingSink>();
  log::ScopedSink scoped(sink, log::Level::kWarn);
  ClientOptions o;
  o.attempts = 3;
  o.retry_delay = Seconds(0.01);
  try {
    BatchSizeOptimizer opt(*t.monitor, "http://127.0.0.1:1", spec("c-4"), o);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
  EXPECT_EQ(sink->count(log::Level::kWarn, "retrying"), 2u);
}

}  // namespace
}  // namespace zeus::batch_size
