// PipelineFrequencyOptimizer: the per-rank side of Perseus, as upstream's.
// At construction rank 0 registers the job with the server; every rank learns
// the job id (the caller's collective, or an explicit id), registers with its
// GPU's graphics clocks, starts a FrequencyController and fetches its
// schedule: one iteration's (instruction, frequency) list. Hooks:
//  * on_instruction_begin(name): the next entry must be `name`; its frequency
//    is handed to the controller, which applies it off this thread;
//  * on_step_end(): the schedule must be exhausted; it rewinds. With
//    report_every = N > 0 it also measures the iteration (time on the clock,
//    energy from the GPU's counter) and every N iterations reports a
//    ProfilingResult and fetches the next schedule (a reacting server, e.g.
//    StragglerAware, may hand out another plan); upstream fetches once.
// The GPU's settings come back when the optimizer is destroyed or the process
// exits (the controller's GpuSettingsGuard).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/http/client.h"
#include "zeus/optimizer/pipeline_frequency/client/frequency_controller.h"
#include "zeus/optimizer/pipeline_frequency/client/server_client.h"
#include "zeus/optimizer/pipeline_frequency/common/messages.h"
#include "zeus/util/clock.h"

namespace zeus::pipeline_frequency {

struct PipelineFrequencyOptimizerOptions {
  // This rank and the job's shape (world_size = pp * dp * tp).
  int rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
  int dp_degree = 1, pp_degree = 1, tp_degree = 1, world_size = 1;
  std::string server_url;                   // "http://host:port" or "unix:/path"
  std::optional<std::string> job_metadata;  // appended to the job id
  // How ranks agree on the job id. Either every rank is given it (then nobody
  // registers the job), or `broadcast_job_id` is the caller's collective: it
  // is called on every rank, with the id on rank 0 and nullopt elsewhere, and
  // returns rank 0's id everywhere (torch's broadcast_object_list, MPI_Bcast).
  // A single-rank job needs neither.
  std::optional<std::string> job_id;
  std::function<std::string(const std::optional<std::string>&)> broadcast_job_id;
  int report_every = 0;    // iterations per ProfilingResult; 0: never (upstream)
  Clock* clock = nullptr;  // iteration times for reports; nullptr: SteadyClock
  http::ClientOptions http = ServerClient::default_options();
  FrequencyControllerOptions controller;
};

// Every hook is for the training thread only.
class PipelineFrequencyOptimizer {
 public:
  // Throws what registration or the controller's start-up throw:
  // kInvalidArgument (bad shape, no way to learn the job id), the server's
  // refusals (ServerClient), the GPU's (kNoPermission...).
  PipelineFrequencyOptimizer(std::shared_ptr<device::Gpu> gpu,
                             PipelineFrequencyOptimizerOptions options);
  ~PipelineFrequencyOptimizer();

  void on_step_begin();
  // kFailedPrecondition unless every scheduled instruction ran.
  void on_step_end();
  // kFailedPrecondition when `name` is not the next scheduled instruction or
  // the schedule is used up; rethrows the controller's last error.
  void on_instruction_begin(std::string_view name);
  void on_instruction_end(std::string_view name);  // nothing to do

  const std::string& job_id() const { return job_id_; }
  const FrequencySchedule& schedule() const { return schedule_; }
  FrequencyController& controller() { return *controller_; }
  int iterations() const { return iterations_; }

 private:
  void fetch_schedule();
  void report();

  const std::shared_ptr<device::Gpu> gpu_;
  const PipelineFrequencyOptimizerOptions options_;
  Clock& clock_;
  ServerClient server_;
  std::string job_id_;
  std::unique_ptr<FrequencyController> controller_;
  FrequencySchedule schedule_;
  std::size_t next_ = 0;  // index of the next instruction in schedule_
  int iterations_ = 0;
  bool energy_counter_ = false;
  Seconds step_start_{0};
  Joules energy_start_{0};
  ProfilingResult pending_;  // measurements not reported yet
};

}  // namespace zeus::pipeline_frequency
