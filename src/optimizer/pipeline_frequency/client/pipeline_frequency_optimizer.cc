#include "zeus/optimizer/pipeline_frequency/client/pipeline_frequency_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {

namespace {

void check_shape(const PipelineFrequencyOptimizerOptions& o) {
  const auto bad = [](const std::string& what) { throw_error(ErrorCode::kInvalidArgument, what); };
  if (o.pp_degree < 1 || o.dp_degree < 1 || o.tp_degree < 1) bad("every degree must be >= 1");
  if (static_cast<std::int64_t>(o.pp_degree) * o.dp_degree * o.tp_degree != o.world_size) {
    bad(fmt::format("world_size {} is not pp_degree x dp_degree x tp_degree ({} x {} x {})",
                    o.world_size, o.pp_degree, o.dp_degree, o.tp_degree));
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    bad(fmt::format("rank {} is outside the world of {} ranks", o.rank, o.world_size));
  }
  if (o.pp_rank < 0 || o.pp_rank >= o.pp_degree || o.dp_rank < 0 || o.dp_rank >= o.dp_degree ||
      o.tp_rank < 0 || o.tp_rank >= o.tp_degree) {
    bad(fmt::format("(dp_rank {}, pp_rank {}, tp_rank {}) is outside the degrees ({}, {}, {})",
                    o.dp_rank, o.pp_rank, o.tp_rank, o.dp_degree, o.pp_degree, o.tp_degree));
  }
  if (o.report_every < 0) bad("report_every must be >= 0");
  if (!o.job_id && !o.broadcast_job_id && o.world_size > 1) {
    bad(
        fmt::format("rank {} of {} cannot learn the job id: give job_id, or broadcast_job_id (the "
                    "collective that sends rank 0's id to every rank)",
                    o.rank, o.world_size));
  }
}

}  // namespace

PipelineFrequencyOptimizer::PipelineFrequencyOptimizer(std::shared_ptr<device::Gpu> gpu,
                                                       PipelineFrequencyOptimizerOptions options)
    : gpu_(std::move(gpu)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : SteadyClock::instance()),
      server_((check_shape(options_), options_.server_url), options_.http) {
  if (!gpu_) throw_error(ErrorCode::kInvalidArgument, "no GPU to control");
  // Rank 0 registers the job; the id reaches everyone through the caller.
  std::optional<std::string> id = options_.job_id;
  if (!id && options_.rank == 0) {
    JobInfo job;
    job.pp_degree = options_.pp_degree;
    job.dp_degree = options_.dp_degree;
    job.tp_degree = options_.tp_degree;
    job.world_size = options_.world_size;
    job.job_metadata = options_.job_metadata;
    id = server_.register_job(job);
  }
  if (!options_.job_id && options_.broadcast_job_id) id = options_.broadcast_job_id(id);
  if (!id || id->empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("rank {} did not receive the job id", options_.rank));
  }
  job_id_ = *id;

  // The graphics clocks at the highest memory clock, fastest first.
  const auto memory = gpu_->supported_memory_clocks();
  if (memory.empty()) throw_error(ErrorCode::kNotSupported, "the GPU reports no memory clocks");
  RankInfo info;
  info.rank = options_.rank;
  info.dp_rank = options_.dp_rank;
  info.pp_rank = options_.pp_rank;
  info.tp_rank = options_.tp_rank;
  info.available_frequencies =
      gpu_->supported_graphics_clocks(*std::max_element(memory.begin(), memory.end()));
  std::sort(info.available_frequencies.begin(), info.available_frequencies.end(), std::greater<>());
  server_.register_rank(job_id_, info);

  controller_ = std::make_unique<FrequencyController>(gpu_, options_.controller);
  energy_counter_ = gpu_->supports_energy_counter();
  fetch_schedule();
  step_start_ = clock_.now();
  if (energy_counter_) energy_start_ = gpu_->total_energy();
}

PipelineFrequencyOptimizer::~PipelineFrequencyOptimizer() = default;

void PipelineFrequencyOptimizer::fetch_schedule() {
  schedule_ = server_.schedule(job_id_, options_.rank);
  next_ = 0;
  log::debug("pipeline frequency optimizer: rank {} got a schedule of {} instructions",
             options_.rank, schedule_.frequencies.size());
}

void PipelineFrequencyOptimizer::on_step_begin() {
  if (options_.report_every == 0) return;
  step_start_ = clock_.now();
  if (energy_counter_) energy_start_ = gpu_->total_energy();
}

void PipelineFrequencyOptimizer::on_instruction_begin(std::string_view name) {
  if (next_ >= schedule_.frequencies.size()) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("the schedule holds {} instructions per iteration but the iteration "
                            "runs more ('{}'): does the training's pipeline schedule or "
                            "microbatch count differ from the plan's?",
                            schedule_.frequencies.size(), printable(name)));
  }
  const ScheduleEntry& e = schedule_.frequencies[next_];
  if (e.instruction != name) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("instruction {} of the iteration is '{}' but the schedule expects "
                            "'{}'",
                            next_, printable(name), printable(e.instruction)));
  }
  ++next_;
  controller_->set_frequency(e.frequency);
}

void PipelineFrequencyOptimizer::on_instruction_end(std::string_view) {}

void PipelineFrequencyOptimizer::on_step_end() {
  if (next_ != schedule_.frequencies.size()) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("the iteration ended after {} of the schedule's {} instructions "
                            "(next expected: '{}')",
                            next_, schedule_.frequencies.size(),
                            printable(schedule_.frequencies[next_].instruction)));
  }
  next_ = 0;
  ++iterations_;
  if (options_.report_every == 0) return;
  const Seconds now = clock_.now();
  pending_.iter_time.push_back(now - step_start_);
  if (energy_counter_) {
    const Joules e = gpu_->total_energy();
    pending_.iter_energy.push_back(e - energy_start_);
    energy_start_ = e;
  }
  step_start_ = now;
  if (iterations_ % options_.report_every == 0) report();
}

void PipelineFrequencyOptimizer::report() {
  pending_.rank = options_.rank;
  server_.report_result(job_id_, pending_);
  pending_ = ProfilingResult{};
  fetch_schedule();
  // Waiting for the other ranks is not part of the next iteration.
  step_start_ = clock_.now();
  if (energy_counter_) energy_start_ = gpu_->total_energy();
}

}  // namespace zeus::pipeline_frequency
