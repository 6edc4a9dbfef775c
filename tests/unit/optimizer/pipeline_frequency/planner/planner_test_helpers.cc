#include "unit/optimizer/pipeline_frequency/planner/planner_test_helpers.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace zeus::pipeline_frequency::testing {

CostCurve table(const std::map<std::int64_t, double>& costs) {
  std::vector<std::int64_t> x;
  std::vector<double> y;
  for (const auto& [d, c] : costs) {
    x.push_back(d);
    y.push_back(c);
  }
  return convex_hull_curve(x, y);
}

std::vector<double> energies(const Frontier& frontier) {
  std::vector<double> out;
  for (const auto& p : frontier.points()) out.push_back(p.effective_energy);
  return out;
}

std::vector<std::int64_t> times(const Frontier& frontier) {
  std::vector<std::int64_t> out;
  for (const auto& p : frontier.points()) out.push_back(p.time);
  return out;
}

void expect_frontier_invariants(const FrontierProblem& problem, const Frontier& frontier) {
  const auto& pts = frontier.points();
  ASSERT_FALSE(pts.empty());
  EXPECT_EQ(frontier.stop_reason(), "");
  std::vector<std::int64_t> slowest, fastest;
  for (const auto& c : problem.ops) {
    slowest.push_back(c.max_duration());
    fastest.push_back(c.min_duration());
  }
  EXPECT_EQ(pts.front().time, critical_path_length(problem, slowest));
  EXPECT_EQ(pts.back().time, critical_path_length(problem, fastest));
  EXPECT_EQ(frontier.t_min_bound(), pts.back().time);
  std::vector<std::int64_t> d = frontier.durations(0);
  int bad_steps = 0, bad_energy = 0, bad_cp = 0, bad_range = 0, bad_cut = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    for (const auto& [op, nd] : frontier.changes(i)) d[static_cast<std::size_t>(op)] = nd;
    if (i > 0) {
      if (pts[i].time != pts[i - 1].time - 1) ++bad_steps;
      if (pts[i].cost_change < -1e-9) ++bad_energy;
      if (pts[i].num_speed_up < 1) ++bad_cut;
      // Each cut arc is floored to 1e-6 and interior ones carry +1e-6 slack.
      const double tol = 2e-6 * (pts[i].num_speed_up + pts[i].num_slow_down) + 1e-9;
      if (std::abs(static_cast<double>(pts[i].cut_value) * 1e-6 - pts[i].cost_change) > tol) {
        ++bad_cut;
      }
    }
    for (std::size_t k = 0; k < d.size(); ++k) {
      if (d[k] < problem.ops[k].min_duration() || d[k] > problem.ops[k].max_duration()) {
        ++bad_range;
      }
    }
    if (critical_path_length(problem, d) != pts[i].time) ++bad_cp;
  }
  EXPECT_EQ(bad_steps, 0) << "steps that do not lower T by exactly one unit";
  EXPECT_EQ(bad_energy, 0) << "steps where the effective energy dropped";
  EXPECT_EQ(bad_cp, 0) << "plans whose critical path differs from their T";
  EXPECT_EQ(bad_range, 0) << "durations outside [min, max]";
  EXPECT_EQ(bad_cut, 0) << "cut value != energy change, or no forward cut arc";
  const auto last = frontier.durations(pts.size() - 1);
  EXPECT_EQ(last, d);
}

std::string fixture(const std::string& relative) {
  return std::string(ZEUS_SOURCE_DIR) + "/data/perseus-sosp24-emulation/" + relative;
}

}  // namespace zeus::pipeline_frequency::testing
