// Shared helpers for the pipeline-frequency runtime tests: temporary
// directories, a small solved frontier, and a server on loopback.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "http/server.h"
#include "support/temp_dir.h"
#include "zeus/device/forwarding_gpu.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency::testing {

// A fresh directory under the system temp dir (mkdtemp), removed on destruction.
using ::zeus::testing::TempDir;

// A two-stage profile (frequencies 1410, 1200, 1005, 810 MHz; lower is slower
// and cheaper) and its frontier for 3 microbatches (τ = 1 ms, P_b = 60 W,
// convex cost model), written to DIR/plans.json.
pipeline_frequency::StageProfile two_stage_profile();
std::string write_two_stage_frontier(const std::string& dir);

// The sim GPU's clocks: 1410 down to 210 MHz in 15 MHz steps.
std::vector<Megahertz> a100_clocks();

// Path of a file under the project's data/perseus-sosp24-emulation.
std::string fixture(const std::string& relative);

// A Gpu that forwards to another and records clock and power-limit calls;
// set_gpu_locked_clocks can be held (it blocks until released) or made to
// fail. Thread-safe.
class RecordingGpu final : public device::ForwardingGpu {
 public:
  explicit RecordingGpu(std::shared_ptr<device::Gpu> inner)
      : device::ForwardingGpu(std::move(inner)) {}
  std::vector<Megahertz> locks();  // the max of each successful set_gpu_locked_clocks
  int resets();                    // reset_gpu_locked_clocks calls
  int memory_resets();
  std::optional<Megahertz> memory_lock();
  // While held, set_gpu_locked_clocks blocks (after counting itself in
  // blocked_calls()) until release().
  void hold();
  void release();
  int blocked_calls();
  void wait_for_blocked_call();               // until a call is blocked in the driver
  void fail_at(Megahertz f, ErrorCode code);  // set_gpu_locked_clocks(f, f) throws

  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_gpu_locked_clocks() override;
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_memory_locked_clocks() override;

 private:
  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::vector<Megahertz> locks_;
  int resets_ = 0, memory_resets_ = 0;
  std::optional<Megahertz> memory_lock_;
  bool held_ = false;
  int blocked_ = 0;
  std::optional<std::pair<Megahertz, ErrorCode>> fail_;
};

// Options that write no dumps (JobManagerOptions' default writes into ./dump,
// the test's working directory).
JobManagerOptions no_dumps();

// A JobManager behind an HTTP server on 127.0.0.1:<any port>.
struct RunningServer {
  explicit RunningServer(std::shared_ptr<const SchedulerFactory> factory,
                         JobManagerOptions options = no_dumps());
  ~RunningServer();
  std::string url() const;
  JobManager manager;
  std::unique_ptr<http::Server> server;
  int port = 0;
};

}  // namespace zeus::pipeline_frequency::testing
