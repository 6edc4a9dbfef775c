// Where a server's plans come from: upstream's lowtime plan files
// (freqs_pipeline_%05d.py), a `zeus perseus plan` file (plan.json), or a
// `zeus perseus solve` frontier (plans.json) with a target. Upstream evaluates
// the plan file as Python; here it is parsed as data by a small strict parser
// of the one literal shape lowtime writes. Plain functions; no shared state.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "zeus/optimizer/pipeline_frequency/server/scheduler.h"

namespace zeus::pipeline_frequency {

// A lowtime plan file: a list (or tuple) of per-stage lists of
// (instruction, frequency) pairs, e.g.
//   [
//   [('forward', 1410), ('backward', 1395)],
//   [('forward', 1380), ('backward', 1410)],
//   ]
//   # Iteration 12 total cost with P2P: 5656.3
// Accepted: Python comments, whitespace, trailing commas, lists or tuples at
// every level, strings in single or double quotes without escapes, decimal
// integers (underscores allowed). Anything else is kParse naming the source,
// line and column: nothing in the file is ever executed.
struct LowtimePlan {
  StagePlan stages;
  std::optional<int> iteration;    // "# Iteration N ..." when present
  std::optional<double> energy_j;  // "... total cost with P2P: X" when present
};
LowtimePlan parse_lowtime_plan(std::string_view text, const std::string& source);
// Reads PATH (a regular file ending in ".py", as upstream requires).
LowtimePlan read_lowtime_plan(const std::string& path);

// The stages of a `zeus perseus plan` output ({"stages": [{"stage": 0,
// "frequencies": [["forward", 1410], ...]}, ...]}).
StagePlan parse_plan_json(std::string_view text, const std::string& source);

// The stages of point i of a frontier.
StagePlan stage_plan(const pipeline_frequency::StoredSolution& solution, std::size_t i);

// What a --solution path names.
enum class SolutionKind {
  kLowtimePlan,  // *.py
  kPlan,         // a plan.json of one point
  kFrontier,     // a solve directory or its plans.json
};
// Decides by name and, for JSON, by content. kNotFound for a missing path,
// kInvalidArgument for anything else.
SolutionKind solution_kind(const std::string& path);
// DIR/plans.json for a directory, the path itself otherwise.
std::string frontier_file(const std::string& path);

}  // namespace zeus::pipeline_frequency
