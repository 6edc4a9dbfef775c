#include "zeus/optimizer/pipeline_frequency/emulation/stage_worker.h"

#include <fmt/format.h>

#include <memory>

#include "optimizer/pipeline_frequency/emulation/line_channel.h"
#include "optimizer/pipeline_frequency/emulation/profiled_gpu.h"
#include "util/json.h"
#include "zeus/optimizer/pipeline_frequency/client/pipeline_frequency_optimizer.h"
#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

using nlohmann::json;
using pipeline_frequency::Instruction;
using pipeline_frequency_internal::LineChannel;

// Waits for the neighbour's message about microbatch `mb` and returns the
// emulated time it carries.
Seconds receive_from(LineChannel& channel, const char* kind, int mb) {
  const json m = channel.receive();
  if (m.value("kind", "") != kind || m.value("microbatch", -1) != mb) {
    throw_error(ErrorCode::kInternal,
                fmt::format("expected {} of microbatch {}, got {}", kind, mb, m.dump()));
  }
  return Seconds(m.at("time").get<double>());
}

void run(LineChannel& control, const StageChannels& ch) {
  const json config = control.receive();
  const JsonObject c(config, "emulation config");
  const int stage = static_cast<int>(c.integer("stage", 0, 9999));
  const int stages = static_cast<int>(c.integer("num_stages", 1, 10000));
  const int microbatches = static_cast<int>(c.integer("microbatches", 1, 1'000'000));
  const int iterations = static_cast<int>(c.integer("iterations", 1, 1'000'000));
  const Seconds timeout(c.number("timeout_s", 1.0, 1e6));
  const auto profile = pipeline_frequency::StageProfile::read_file(c.string("profile", 4096));
  ManualClock clock(Seconds(0.0));
  auto gpu =
      std::make_shared<ProfiledGpu>(profile, stage, Watts(c.number("p_blocking_w", 0, 1e4)), clock);
  std::optional<LineChannel> previous, next;
  if (ch.previous >= 0) previous.emplace(ch.previous, fmt::format("stage {}", stage - 1), timeout);
  if (ch.next >= 0) next.emplace(ch.next, fmt::format("stage {}", stage + 1), timeout);

  PipelineFrequencyOptimizerOptions o;
  o.rank = stage;
  o.pp_rank = stage;
  o.pp_degree = stages;
  o.world_size = stages;
  o.server_url = c.string("server_url", 4096);
  o.report_every = static_cast<int>(c.integer("report_every", 0, 1'000'000));
  o.clock = &clock;
  if (c.has("job_metadata")) o.job_metadata = c.string("job_metadata", 256);
  // The caller's collective: rank 0 hands its id to the driver, which passes
  // it on to every other stage.
  o.broadcast_job_id = [&control](const std::optional<std::string>& id) {
    if (id) {
      control.send({{"type", "job_id"}, {"job_id", *id}});
      return *id;
    }
    const json m = control.receive();
    return m.at("job_id").get<std::string>();
  };
  const auto order = pipeline_frequency::one_f_one_b_order(stage, stages, microbatches);
  {
    PipelineFrequencyOptimizer optimizer(gpu, o);
    for (int k = 0; k < iterations; ++k) {
      const Seconds start = clock.now();
      const Joules energy_start = gpu->total_energy();
      json scheduled = json::array(), ran = json::array();
      for (const auto& e : optimizer.schedule().frequencies)
        scheduled.push_back(e.frequency.value());
      optimizer.on_step_begin();
      for (const auto& [instruction, mb] : order) {
        if (instruction == Instruction::kForward && previous) {
          clock.sleep_until(receive_from(*previous, "forward", mb));
        }
        if (instruction == Instruction::kBackward && next) {
          clock.sleep_until(receive_from(*next, "backward", mb));
        }
        optimizer.on_instruction_begin(pipeline_frequency::instruction_name(instruction));
        // The emulated kernel starts once the clock is set: a real GPU would run
        // its first microseconds at the old clock, which the model ignores.
        optimizer.controller().flush();
        ran.push_back(gpu->run(instruction).value());
        optimizer.on_instruction_end(pipeline_frequency::instruction_name(instruction));
        const json out = {{"kind", pipeline_frequency::instruction_name(instruction)},
                          {"microbatch", mb},
                          {"time", clock.now().count()}};
        if (instruction == Instruction::kForward && next) next->send(out);
        if (instruction == Instruction::kBackward && previous) previous->send(out);
      }
      control.send({{"type", "finished"}, {"iteration", k}, {"time", clock.now().count()}});
      const json barrier = control.receive();
      clock.sleep_until(Seconds(barrier.at("time").get<double>()));
      const Joules energy = gpu->total_energy() - energy_start;
      const Seconds time = clock.now() - start;
      optimizer.on_step_end();
      control.send({{"type", "measured"},
                    {"iteration", k},
                    {"time_s", time.count()},
                    {"energy_j", energy.value()},
                    {"scheduled", std::move(scheduled)},
                    {"ran", std::move(ran)}});
    }
  }
  // The optimizer is gone: its controller must have put the clocks back.
  control.send({{"type", "done"}, {"clocks_restored", !gpu->clocks_locked()}});
}

}  // namespace

int run_stage_worker(const StageChannels& channels) {
  LineChannel control(channels.control, "the emulation driver", Seconds(600.0));
  try {
    run(control, channels);
    return 0;
  } catch (const std::exception& e) {
    try {
      control.send({{"type", "error"}, {"message", e.what()}});
    } catch (const std::exception&) {
    }
    return 1;
  }
}

}  // namespace zeus::pipeline_frequency
