// Shared helpers for the pipeline-frequency runtime tests: temporary
// directories, a small solved frontier, and a server on loopback.
#pragma once

#include <memory>
#include <string>

#include "zeus/http/server.h"
#include "zeus/perseus/planner.h"
#include "zeus/pipeline_frequency/server/job_manager.h"

namespace zeus::pipeline_frequency::testing {

// A fresh directory under the system temp dir (mkdtemp), removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A two-stage profile (frequencies 1410, 1200, 1005, 810 MHz; lower is slower
// and cheaper) and its frontier for 3 microbatches (τ = 1 ms, P_b = 60 W,
// convex cost model), written to DIR/plans.json.
perseus::StageProfile two_stage_profile();
std::string write_two_stage_frontier(const std::string& dir);

// The sim GPU's clocks: 1410 down to 210 MHz in 15 MHz steps.
std::vector<Megahertz> a100_clocks();

// Path of a file under the project's data/perseus-sosp24-emulation.
std::string fixture(const std::string& relative);

// A JobManager behind an HTTP server on 127.0.0.1:<any port>.
struct RunningServer {
  explicit RunningServer(std::shared_ptr<const SchedulerFactory> factory,
                         JobManagerOptions options = {});
  ~RunningServer();
  std::string url() const;
  JobManager manager;
  std::unique_ptr<http::Server> server;
  int port = 0;
};

}  // namespace zeus::pipeline_frequency::testing
