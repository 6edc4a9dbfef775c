// The files of a solved pipeline: frontier.csv (time,energy per step) and
// plans.json (every point's GPU frequencies as a change log), reading
// plans.json back, and the per-stage plan JSON of one point. The format is
// documented in docs/perseus.md. Plain functions; no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"

namespace zeus::pipeline_frequency {

// frontier.csv: "time,energy" rows for points 1..n (the fixtures' convention:
// the T_max start is not a row).
std::string frontier_csv(const PerseusSolution& solution);
// plans.json ("zeus-perseus-plans/1"): point 0 lists every op's frequency,
// later points only the ops whose frequency changed. Written without building
// a document in memory (large pipelines have millions of entries).
std::string plans_json(const PerseusSolution& solution);
// Both files under `dir` (created), through write_file_atomically.
void write_solution(const PerseusSolution& solution, const std::string& dir);

// A solution read back from plans.json. Every op has a frequency at point 0,
// op ids and stages are consistent, numbers are finite and in range.
struct StoredSolution {
  int num_stages = 0;
  int num_microbatches = 0;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  Seconds unit_time{0.0};
  Watts p_blocking{0.0};
  std::vector<PipelineOp> ops;                // in plans.json op order
  std::vector<std::vector<int>> stage_order;  // op ids per stage
  std::vector<PlanPoint> points;
  std::vector<std::vector<std::pair<int, Megahertz>>> changes;  // per point
  // Every op's frequency at point i; kInvalidArgument if i is out of range.
  std::vector<Megahertz> frequencies(std::size_t i) const;
};

// Parses plans.json text; kParse/kInvalidArgument (a FieldError naming the
// field) for anything malformed, inconsistent or out of range.
StoredSolution parse_plans_json(std::string_view text, const std::string& source);
// DIR/plans.json; kNotFound (saying what DIR should be) when it is missing.
StoredSolution read_solution(const std::string& dir);

// Every stage's instructions in execution order with their frequency at
// point i (what a rank of that stage runs in one iteration).
std::vector<std::vector<std::pair<Instruction, Megahertz>>> stage_frequencies(
    const StoredSolution& solution, std::size_t i);

// The per-stage schedule JSON for point i: {"stages": [{"stage": s,
// "frequencies": [["forward", 1410], ...]}, ...], ...}.
std::string plan_json(const StoredSolution& solution, std::size_t i, std::string_view target);

}  // namespace zeus::pipeline_frequency
