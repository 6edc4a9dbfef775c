// The closed loop: does the runtime save the energy the frontier promises?
// run_emulation solves the frontier of a stage profile, then runs scenarios,
// each with a real pipeline-frequency server on loopback and S stage workers
// (processes, or threads in tests) whose PipelineFrequencyOptimizer and
// FrequencyController drive ProfiledGpus over HTTP, and compares what the
// GPUs' energy counters measured with what the frontier predicted:
//   all max frequency | fastest plan (T_min) | minimum energy (T*)
// and, with a straggler holding every pipeline to T':
//   all max frequency | T* (waits for the straggler) | StragglerAware's switch
// (the server sees the long iterations in the results and moves to the
// slowest plan that meets T'). Emulated time makes the numbers exact and the
// same on any machine.
#pragma once

#include <string>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/emulation/stage_worker.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"

namespace zeus::pipeline_frequency {

struct EmulationOptions {
  std::string profile;  // stage profile CSV
  int microbatches = 12;
  Seconds unit_time{0.001};
  Watts p_blocking{83.64};
  pipeline_frequency::CostModelKind cost_model = pipeline_frequency::CostModelKind::kExponential;
  int iterations = 2;  // measured iterations per scenario (deterministic: 2 show it repeats)
  // T' = straggler_slowdown x T_min; 0: no straggler scenarios.
  double straggler_slowdown = 1.25;
  double straggler_tolerance = 0.03;  // StragglerAware's detection threshold
  std::string work_dir;               // plans.json and the server's dumps go here (required)
  // The program that runs one stage (run_stage_worker) as its own process,
  // e.g. {"/path/to/zeus", "perseus", "emulate-stage"}; it gets
  // "--control-fd 3 --previous-fd 4|-1 --next-fd 5|-1" appended. Empty: a
  // thread per stage (tests).
  std::vector<std::string> worker_command;
  Seconds timeout{120.0};  // real time any one message may take
};

// One scenario's steady-state iteration, measured and predicted.
struct ScenarioResult {
  std::string name;            // "all max frequency", "fastest (T_min)", ...
  bool straggler = false;      // every pipeline waits until T'
  Seconds planned_time{0};     // the plan's iteration time (T' when waiting for a straggler)
  Joules predicted_energy{0};  // the frontier's energy (plus blocking power until T')
  Seconds measured_time{0};
  Joules measured_energy{0};             // sum over stages of the GPUs' counters
  std::vector<Seconds> iteration_times;  // every measured iteration
  std::vector<Joules> iteration_energies;
  bool followed_schedule = true;  // every computation ran at its scheduled frequency
  bool clocks_restored = true;    // every stage's GPU was unlocked at the end
};

struct EmulationReport {
  int num_stages = 0;
  int microbatches = 0;
  Seconds t_min{0};
  Seconds t_star{0};
  Seconds t_prime{0};  // 0 without a straggler
  std::vector<ScenarioResult> scenarios;
  std::string solution_dir;  // frontier.csv, plans.json
  // Saving of scenario i against its baseline (all max frequency, with or
  // without the straggler), measured and predicted; 0 for the baselines.
  double measured_saving(std::size_t i) const;
  double predicted_saving(std::size_t i) const;
  std::size_t baseline(std::size_t i) const;
};

// kInvalidArgument for bad options; a failing stage's message as kInternal.
EmulationReport run_emulation(const EmulationOptions& options);

// The claims a run must support, each with its verdict:
//  * every computation ran at its scheduled frequency and every GPU's clocks
//    were unlocked at the end;
//  * each plan's measured saving against all-max frequency is within
//    `tolerance` (absolute, 0.02 = 2 points) of the frontier's prediction;
//  * each plan's measured iteration time is within its planned time plus the
//    planner's quantization (under one unit time per computation on the
//    critical path: 2(M + S - 1) of them);
//  * with a straggler: the iteration finishes by T' and the StragglerAware
//    plan saves more than T* does against all-max frequency.
struct EmulationCheck {
  std::string claim;
  bool passed = false;
};
std::vector<EmulationCheck> check_emulation(const EmulationReport& report, Seconds unit_time,
                                            double tolerance = 0.02);

// The table people read (plain text, one row per scenario).
std::string emulation_table(const EmulationReport& report);
// report.json: every number of the report.
std::string emulation_json(const EmulationReport& report);
// DIR/emulation.png and .svg: the frontier with the measured points (gnuplot;
// kNotFound when it is missing).
void render_emulation_plot(const EmulationReport& report, const std::string& dir);

}  // namespace zeus::pipeline_frequency
