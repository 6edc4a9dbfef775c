// Shared helpers for the Perseus tests: tiny problems from {duration: cost}
// tables and the frontier invariants of the reference (§5.2).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "zeus/optimizer/pipeline_frequency/planner/frontier_solver.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"

namespace zeus::pipeline_frequency::testing {

// A cost curve from an exact {duration: cost} table (convex hull, so exact for
// convex tables).
CostCurve table(const std::map<std::int64_t, double>& costs);

// Effective energies of the frontier, slowest first.
std::vector<double> energies(const Frontier& frontier);
std::vector<std::int64_t> times(const Frontier& frontier);

// Checks the invariants of a solved frontier with gtest assertions: unit steps,
// T_max/T_min, monotone energy, each plan's critical path equals its T,
// durations in range, cut value equals the energy change.
void expect_frontier_invariants(const FrontierProblem& problem, const Frontier& frontier);

// A fresh directory under the system temp dir (mkdtemp), removed on destruction.
using ::zeus::testing::TempDir;

// Path of a fixture file under the project's data/perseus-sosp24-emulation.
std::string fixture(const std::string& relative);

}  // namespace zeus::pipeline_frequency::testing
