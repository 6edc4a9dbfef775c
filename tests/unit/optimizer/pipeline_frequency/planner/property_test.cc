// Property test: random small DAGs with convex integer cost tables against a
// brute-force optimum at every T. ZEUS_SLOW_TESTS=1 runs many more instances.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "unit/optimizer/pipeline_frequency/planner/planner_test_helpers.h"
#include "zeus/optimizer/pipeline_frequency/planner/frontier_solver.h"

namespace zeus::pipeline_frequency {
namespace {

struct Instance {
  FrontierProblem problem;
  std::vector<std::vector<double>> cost;  // cost[op][d - min]
  std::vector<std::int64_t> dmin;
};

Instance random_instance(std::mt19937& rng) {
  Instance in;
  std::uniform_int_distribution<int> n_ops(2, 6), lo(1, 3), len(0, 3), delta(0, 9), base(0, 20);
  std::bernoulli_distribution edge(0.4);
  const int n = n_ops(rng);
  for (int i = 0; i < n; ++i) {
    const int a = lo(rng), l = len(rng);
    // Convex, non-increasing: speed-up deltas grow as the op gets faster.
    std::vector<int> deltas(static_cast<std::size_t>(l));
    for (auto& d : deltas) d = delta(rng);
    std::sort(deltas.begin(), deltas.end());  // from the slow end
    std::vector<double> c(static_cast<std::size_t>(l) + 1);
    c[static_cast<std::size_t>(l)] = base(rng);
    for (int k = l - 1; k >= 0; --k) {
      c[static_cast<std::size_t>(k)] =
          c[static_cast<std::size_t>(k) + 1] + deltas[static_cast<std::size_t>(l - 1 - k)];
    }
    in.problem.ops.push_back(CostCurve(a, c));
    in.cost.push_back(c);
    in.dmin.push_back(a);
  }
  for (int u = 0; u < n; ++u) {
    for (int v = u + 1; v < n; ++v) {
      if (edge(rng)) in.problem.edges.emplace_back(u, v);
    }
  }
  return in;
}

// Minimum total cost for each critical-path length, over every duration choice.
std::map<std::int64_t, double> brute_force(const Instance& in) {
  const std::size_t n = in.cost.size();
  std::vector<std::size_t> idx(n, 0);
  std::map<std::int64_t, double> best;
  std::vector<std::int64_t> d(n);
  while (true) {
    double c = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      d[i] = in.dmin[i] + static_cast<std::int64_t>(idx[i]);
      c += in.cost[i][idx[i]];
    }
    // Ops are topologically numbered (edges go u < v).
    std::vector<std::int64_t> finish(n, 0);
    std::int64_t t = 0;
    for (std::size_t v = 0; v < n; ++v) {
      std::int64_t start = 0;
      for (const auto& [a, b] : in.problem.edges) {
        if (static_cast<std::size_t>(b) == v) {
          start = std::max(start, finish[static_cast<std::size_t>(a)]);
        }
      }
      finish[v] = start + d[v];
      t = std::max(t, finish[v]);
    }
    auto it = best.find(t);
    if (it == best.end() || c < it->second) best[t] = c;
    std::size_t k = 0;
    while (k < n && ++idx[k] == in.cost[k].size()) idx[k++] = 0;
    if (k == n) break;
  }
  // The optimum for a deadline T may use a faster plan: take running minima.
  double run = std::numeric_limits<double>::infinity();
  for (auto& [t, c] : best) {
    run = std::min(run, c);
    c = run;
  }
  return best;
}

TEST(PlannerPropertyTest, RandomDagsMatchBruteForceAtEveryT) {
  const char* slow = std::getenv("ZEUS_SLOW_TESTS");
  const int instances = slow && std::string(slow) == "1" ? 5000 : 300;
  std::mt19937 rng(20240917);
  int checked_points = 0;
  for (int k = 0; k < instances; ++k) {
    const Instance in = random_instance(rng);
    SCOPED_TRACE("instance " + std::to_string(k));
    SolverOptions o;
    o.self_check = true;
    const Frontier f = solve_frontier(in.problem, o);
    testing::expect_frontier_invariants(in.problem, f);
    const auto best = brute_force(in);
    for (const auto& p : f.points()) {
      ASSERT_TRUE(best.count(p.time));
      EXPECT_NEAR(p.effective_energy, best.at(p.time), 1e-9) << "T=" << p.time;
      ++checked_points;
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(checked_points, instances);
}

}  // namespace
}  // namespace zeus::pipeline_frequency
