#include "unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "zeus/optimizer/pipeline_frequency/server/http_api.h"

namespace zeus::pipeline_frequency::testing {

pipeline_frequency::StageProfile two_stage_profile() {
  using pipeline_frequency::Instruction;
  std::vector<pipeline_frequency::ProfileEntry> entries;
  const int freqs[] = {1410, 1200, 1005, 810};
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 4; ++k) {
      // Stage 1 is heavier: stage 0's computations have slack to slow down.
      const double base = s == 0 ? 0.010 : 0.016;
      const double t = base * (1.0 + 0.25 * k);
      // Convex in time: each step down saves less energy than the one before.
      const double e = (s == 0 ? 3.0 : 5.0) * (1.0 - 0.2 * k + 0.03 * k * k);
      entries.push_back({s, Instruction::kForward, Megahertz(freqs[k]), Seconds(t), Joules(e)});
      entries.push_back(
          {s, Instruction::kBackward, Megahertz(freqs[k]), Seconds(2 * t), Joules(2 * e)});
    }
  }
  return pipeline_frequency::StageProfile::from_entries(std::move(entries),
                                                        "two-stage test profile");
}

std::string write_two_stage_frontier(const std::string& dir) {
  pipeline_frequency::PlannerOptions o;
  o.microbatches = 3;
  o.unit_time = Seconds(0.001);
  o.p_blocking = Watts(60.0);
  o.cost_model = pipeline_frequency::CostModelKind::kConvex;
  const auto solution = pipeline_frequency::solve_pipeline(two_stage_profile(), o);
  pipeline_frequency::write_solution(solution, dir);
  return dir + "/plans.json";
}

std::vector<Megahertz> a100_clocks() {
  std::vector<Megahertz> out;
  for (int f = 1410; f >= 210; f -= 15) out.emplace_back(f);
  return out;
}

std::string fixture(const std::string& relative) {
  return std::string(ZEUS_SOURCE_DIR) + "/data/perseus-sosp24-emulation/" + relative;
}

std::vector<Megahertz> RecordingGpu::locks() {
  std::lock_guard lock(mutex_);
  return locks_;
}
int RecordingGpu::resets() {
  std::lock_guard lock(mutex_);
  return resets_;
}
int RecordingGpu::memory_resets() {
  std::lock_guard lock(mutex_);
  return memory_resets_;
}
std::optional<Megahertz> RecordingGpu::memory_lock() {
  std::lock_guard lock(mutex_);
  return memory_lock_;
}
void RecordingGpu::hold() {
  std::lock_guard lock(mutex_);
  held_ = true;
}
void RecordingGpu::release() {
  {
    std::lock_guard lock(mutex_);
    held_ = false;
  }
  changed_.notify_all();
}
int RecordingGpu::blocked_calls() {
  std::lock_guard lock(mutex_);
  return blocked_;
}
void RecordingGpu::wait_for_blocked_call() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return blocked_ > 0; });
}
void RecordingGpu::fail_at(Megahertz f, ErrorCode code) {
  std::lock_guard lock(mutex_);
  fail_ = {f, code};
}

void RecordingGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  {
    std::unique_lock lock(mutex_);
    if (fail_ && fail_->first == max) {
      throw Error(fail_->second, fmt::format("injected failure at {} MHz", max.value()));
    }
    if (held_) {
      ++blocked_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !held_; });
    }
  }
  inner().set_gpu_locked_clocks(min, max);
  std::lock_guard lock(mutex_);
  locks_.push_back(max);
}

void RecordingGpu::reset_gpu_locked_clocks() {
  inner().reset_gpu_locked_clocks();
  std::lock_guard lock(mutex_);
  ++resets_;
}

void RecordingGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  inner().set_memory_locked_clocks(min, max);
  std::lock_guard lock(mutex_);
  memory_lock_ = max;
}

void RecordingGpu::reset_memory_locked_clocks() {
  inner().reset_memory_locked_clocks();
  std::lock_guard lock(mutex_);
  ++memory_resets_;
  memory_lock_.reset();
}

JobManagerOptions no_dumps() {
  JobManagerOptions o;
  o.dump_data = false;
  return o;
}

RunningServer::RunningServer(std::shared_ptr<const SchedulerFactory> factory,
                             JobManagerOptions options)
    : manager(std::move(factory), std::move(options)) {
  http::Router router;
  add_routes(router, manager);
  http::ServerOptions so;
  so.threads = 2;
  server = std::make_unique<http::Server>(std::move(router), so);
  port = server->listen_tcp("127.0.0.1", 0);
  server->start();
}

RunningServer::~RunningServer() {
  manager.shutdown();
  server->shutdown();
}

std::string RunningServer::url() const { return "http://127.0.0.1:" + std::to_string(port); }

}  // namespace zeus::pipeline_frequency::testing
