// What `zeus perseus serve` serves, from upstream's environment variables
// (ZEUS_PFO_*) and our flags, and the scheduler factory it makes. Plain
// values and functions; no shared state.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"
#include "zeus/util/units.h"

namespace zeus::pipeline_frequency {

struct ServerSettings {
  // PointSolution, PointSolution3D (one schedule per stage, copied to its
  // data- and tensor-parallel ranks), StragglerAware, StragglerAware3D.
  std::string scheduler = "PointSolution";
  // A lowtime plan file (.py), a `zeus perseus plan` JSON file, or a
  // `zeus perseus solve` directory / its plans.json.
  std::string solution_path;
  // With a frontier: fastest, min-energy, straggler:<s> or straggler:<x>x
  // (required for PointSolution; StragglerAware starts there, default
  // min-energy).
  std::string target;
  double straggler_tolerance = 0.03;  // see StragglerOptions
  std::string log_level = "info";
  bool dump_data = true;
  std::string dump_dir = "./dump";
  Seconds max_job_idle_time{24.0 * 3600};  // upstream: a week (see JobManagerOptions)
};

// Applies the ZEUS_PFO_* variables that are set (read through `getenv`) on
// top of `base`: SCHEDULER, SCHEDULER_ARGS (JSON object with solution_path
// and, ours, target and straggler_tolerance), LOG_LEVEL, DUMP_DATA (true/
// false/1/0/yes/no/on/off), DUMP_DIR, MAX_JOB_IDLE_TIME (seconds).
// kInvalidArgument naming the variable for a bad value.
ServerSettings apply_environment(ServerSettings base,
                                 const std::function<const char*(const char*)>& getenv);

// The scheduler factory the settings describe and a line saying what it
// serves. Reads and checks the solution now, so a bad plan stops the server
// at start (kNotFound, kParse or kInvalidArgument naming the file).
struct SchedulerSetup {
  std::shared_ptr<const SchedulerFactory> factory;
  std::string description;
};
SchedulerSetup make_scheduler(const ServerSettings& settings);

}  // namespace zeus::pipeline_frequency
