#include "zeus/optimizer/pipeline_frequency/planner/frontier_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "zeus/optimizer/pipeline_frequency/planner/dag.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

// Capacities are int64 in units of 1e-6 J (lowtime's FP_ERROR), so flooring
// matches lowtime and cuts are exact. "Cannot cross" arcs get kInf: large
// enough that no real cut reaches it, small enough that sums never overflow.
constexpr std::int64_t kInf = 10'000'000'000'000LL;  // 1e7 J
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max() / 4;

std::int64_t to_units(double joules) {
  const double units = std::floor(std::abs(joules) / 1e-6);
  if (!(units < 1e15)) return kInf / 10;  // absurd step cost; still finite
  return static_cast<std::int64_t>(units);
}

}  // namespace

// The solver state for one problem: the AOA graph as flat arrays, per-arc flow
// bounds and flow (kept between steps to warm-start the next max flow), and the
// op durations. Single-threaded; lives for one solve_frontier call.
class FrontierSolver {
 public:
  FrontierSolver(const FrontierProblem& problem, const SolverOptions& options)
      : problem_(problem), options_(options) {
    for (std::size_t i = 0; i < problem.ops.size(); ++i) {
      if (problem.ops[i].costs().empty()) {
        throw_error(ErrorCode::kInvalidArgument, fmt::format("op {} has an empty cost curve", i));
      }
    }
    g_ = AoaGraph::from_aon(static_cast<int>(problem.ops.size()), problem.edges);
    build_tables();
  }

  Frontier run();

 private:
  void build_tables();
  std::int64_t arc_duration(int e) const {
    const int op = op_[static_cast<std::size_t>(e)];
    return op < 0 ? 0 : dur_[static_cast<std::size_t>(op)];
  }
  std::int64_t compute_cpm();  // fills early_/late_, returns T
  void set_bounds();           // from critical arcs and durations
  bool repair_flow();          // phase 1: a feasible flow from the previous one
  void maximize_flow();        // phase 2: s -> t max flow; leaves in_s_ = source side
  std::int64_t dinic();        // multi-source/sink max flow on supply_/demand_
  std::int64_t augment(int source, std::int64_t limit);  // blocking flow from one source
  bool bfs();
  double total_cost() const;
  void self_check(std::int64_t cut_value) const;

  std::int64_t residual(int a) const {
    const auto e = static_cast<std::size_t>(a >> 1);
    return (a & 1) ? f_[e] - lb_[e] : ub_[e] - f_[e];
  }
  void push(int a, std::int64_t x) {
    const auto e = static_cast<std::size_t>(a >> 1);
    if (a & 1) {
      f_[e] -= x;
    } else {
      f_[e] += x;
    }
  }

  const FrontierProblem& problem_;
  const SolverOptions& options_;
  AoaGraph g_;
  int n_ = 0;        // AOA nodes
  int m_graph_ = 0;  // AOA arcs; arcs m_graph_ and m_graph_+1 are t->s and s->t
  std::vector<int> tail_, head_, op_;
  std::vector<int> adj_begin_, adj_arc_, adj_to_;
  std::vector<std::int64_t> lb_, ub_, f_;
  std::vector<char> critical_;
  std::vector<std::int64_t> dur_, dmin_, dmax_;
  std::vector<std::size_t> delta_begin_;  // per op, into delta_
  std::vector<std::int64_t> delta_;       // units of c(d-1)-c(d) for d in (min, max]
  std::vector<std::int64_t> early_, late_;
  // Max-flow scratch.
  std::vector<std::int64_t> supply_, demand_;
  std::vector<int> sources_, level_, iter_, queue_;
  std::vector<int> path_arcs_, path_nodes_;  // augment()'s explicit DFS stack
  int found_level_ = 0;
};

void FrontierSolver::build_tables() {
  n_ = g_.num_nodes;
  m_graph_ = g_.num_arcs();
  tail_ = g_.tail;
  head_ = g_.head;
  op_ = g_.op;
  // Special arcs joining source and sink, used only while repairing the flow.
  tail_.push_back(g_.sink);
  head_.push_back(g_.source);
  op_.push_back(-1);
  tail_.push_back(g_.source);
  head_.push_back(g_.sink);
  op_.push_back(-1);
  const int m = m_graph_ + 2;
  adj_begin_.assign(static_cast<std::size_t>(n_) + 1, 0);
  for (int e = 0; e < m; ++e) {
    ++adj_begin_[static_cast<std::size_t>(tail_[static_cast<std::size_t>(e)]) + 1];
    ++adj_begin_[static_cast<std::size_t>(head_[static_cast<std::size_t>(e)]) + 1];
  }
  for (int v = 0; v < n_; ++v) {
    adj_begin_[static_cast<std::size_t>(v) + 1] += adj_begin_[static_cast<std::size_t>(v)];
  }
  adj_arc_.assign(static_cast<std::size_t>(2 * m), 0);
  adj_to_.assign(static_cast<std::size_t>(2 * m), 0);
  std::vector<int> fill(adj_begin_.begin(), adj_begin_.end() - 1);
  for (int e = 0; e < m; ++e) {
    const int t = tail_[static_cast<std::size_t>(e)], h = head_[static_cast<std::size_t>(e)];
    auto& ft = fill[static_cast<std::size_t>(t)];
    adj_arc_[static_cast<std::size_t>(ft)] = 2 * e;
    adj_to_[static_cast<std::size_t>(ft)] = h;
    ++ft;
    auto& fh = fill[static_cast<std::size_t>(h)];
    adj_arc_[static_cast<std::size_t>(fh)] = 2 * e + 1;
    adj_to_[static_cast<std::size_t>(fh)] = t;
    ++fh;
  }
  lb_.assign(static_cast<std::size_t>(m), 0);
  ub_.assign(static_cast<std::size_t>(m), 0);
  f_.assign(static_cast<std::size_t>(m), 0);
  critical_.assign(static_cast<std::size_t>(m), 0);

  const std::size_t nops = problem_.ops.size();
  dur_.resize(nops);
  dmin_.resize(nops);
  dmax_.resize(nops);
  delta_begin_.resize(nops);
  // One delta table per distinct cost table: a pipeline has 2 x stages
  // tables shared by all its ops, so memory does not grow with microbatches.
  std::map<const void*, std::size_t> table_begin;
  for (std::size_t i = 0; i < nops; ++i) {
    const auto& c = problem_.ops[i];
    dmin_[i] = c.min_duration();
    dmax_[i] = c.max_duration();
    dur_[i] = dmax_[i];
    const auto [it, inserted] = table_begin.emplace(c.table_id(), delta_.size());
    delta_begin_[i] = it->second;
    if (!inserted) continue;
    for (std::int64_t d = dmin_[i] + 1; d <= dmax_[i]; ++d) {
      delta_.push_back(to_units(c.at(d - 1) - c.at(d)));
    }
  }
  early_.assign(static_cast<std::size_t>(n_), 0);
  late_.assign(static_cast<std::size_t>(n_), 0);
  supply_.assign(static_cast<std::size_t>(n_), 0);
  demand_.assign(static_cast<std::size_t>(n_), 0);
  level_.assign(static_cast<std::size_t>(n_), -1);
  iter_.assign(static_cast<std::size_t>(n_), 0);
  queue_.reserve(static_cast<std::size_t>(n_));
}

std::int64_t FrontierSolver::compute_cpm() {
  // Nodes are topologically numbered and arcs sorted by tail: one pass each way.
  std::fill(early_.begin(), early_.end(), 0);
  for (int e = 0; e < m_graph_; ++e) {
    const auto t = static_cast<std::size_t>(tail_[static_cast<std::size_t>(e)]);
    const auto h = static_cast<std::size_t>(head_[static_cast<std::size_t>(e)]);
    early_[h] = std::max(early_[h], early_[t] + arc_duration(e));
  }
  const std::int64_t T = early_[static_cast<std::size_t>(g_.sink)];
  std::fill(late_.begin(), late_.end(), T);
  for (int e = m_graph_ - 1; e >= 0; --e) {
    const auto t = static_cast<std::size_t>(tail_[static_cast<std::size_t>(e)]);
    const auto h = static_cast<std::size_t>(head_[static_cast<std::size_t>(e)]);
    late_[t] = std::min(late_[t], late_[h] - arc_duration(e));
  }
  return T;
}

void FrontierSolver::set_bounds() {
  for (int e = 0; e < m_graph_; ++e) {
    const auto ue = static_cast<std::size_t>(e);
    const std::int64_t d = arc_duration(e);
    const bool crit = early_[static_cast<std::size_t>(tail_[ue])] + d ==
                      late_[static_cast<std::size_t>(head_[ue])];
    critical_[ue] = crit;
    std::int64_t lb = 0, ub = 0;
    if (crit) {
      const int op = op_[ue];
      if (op < 0) {
        ub = kInf;
      } else {
        const auto o = static_cast<std::size_t>(op);
        const std::int64_t lo = dmin_[o], hi = dmax_[o];
        const std::int64_t* delta = delta_.data() + delta_begin_[o] - (lo + 1);  // delta[d]
        if (lo == hi) {
          ub = kInf;
        } else if (d == lo) {
          lb = delta[d + 1];
          ub = kInf;
        } else if (d == hi) {
          ub = delta[d];
        } else {
          lb = delta[d + 1];
          ub = delta[d] + 1;  // lowtime's +1e-6 slack keeps ub >= lb for near-linear fits
        }
      }
    }
    lb_[ue] = lb;
    ub_[ue] = ub;
  }
}

bool FrontierSolver::bfs() {
  std::fill(level_.begin(), level_.end(), -1);
  queue_.clear();
  for (int s : sources_) {
    if (supply_[static_cast<std::size_t>(s)] > 0 && level_[static_cast<std::size_t>(s)] < 0) {
      level_[static_cast<std::size_t>(s)] = 0;
      queue_.push_back(s);
    }
  }
  found_level_ = std::numeric_limits<int>::max();
  for (std::size_t qi = 0; qi < queue_.size(); ++qi) {
    const int u = queue_[qi];
    const int lu = level_[static_cast<std::size_t>(u)];
    if (lu >= found_level_) continue;  // deeper nodes cannot be on a shortest path
    if (demand_[static_cast<std::size_t>(u)] > 0) {
      found_level_ = lu;
      continue;
    }
    const int end = adj_begin_[static_cast<std::size_t>(u) + 1];
    for (int k = adj_begin_[static_cast<std::size_t>(u)]; k < end; ++k) {
      const int v = adj_to_[static_cast<std::size_t>(k)];
      if (level_[static_cast<std::size_t>(v)] < 0 &&
          residual(adj_arc_[static_cast<std::size_t>(k)]) > 0) {
        level_[static_cast<std::size_t>(v)] = lu + 1;
        queue_.push_back(v);
      }
    }
  }
  return found_level_ != std::numeric_limits<int>::max();
}

// Sends up to `limit` from `source` along shortest residual paths to nodes at
// found_level_ with demand. An explicit stack instead of recursion: a path can
// be as long as the pipeline (millions of nodes), far deeper than a thread's
// stack. iter_ is the current-arc pointer of Dinic's algorithm.
std::int64_t FrontierSolver::augment(int source, std::int64_t limit) {
  std::int64_t pushed = 0;
  path_arcs_.clear();
  path_nodes_.clear();
  int u = source;
  for (;;) {
    const auto uu = static_cast<std::size_t>(u);
    bool dead_end = false;
    if (level_[uu] == found_level_) {
      std::int64_t x = std::min(limit - pushed, demand_[uu]);
      for (int a : path_arcs_) x = std::min(x, residual(a));
      if (x > 0) {
        for (int a : path_arcs_) push(a, x);
        demand_[uu] -= x;
        pushed += x;
      }
      if (pushed == limit) return pushed;
      // Resume at the tail of the first saturated arc; if none saturated,
      // this node's demand is used up and it is a dead end.
      std::size_t cut_at = path_arcs_.size();
      for (std::size_t i = 0; i < path_arcs_.size(); ++i) {
        if (residual(path_arcs_[i]) == 0) {
          cut_at = i;
          break;
        }
      }
      if (cut_at < path_arcs_.size()) {
        u = path_nodes_[cut_at];
        path_arcs_.resize(cut_at);
        path_nodes_.resize(cut_at);
        continue;
      }
      dead_end = true;
    } else {
      const int lu = level_[uu];
      const int end = adj_begin_[uu + 1];
      int& k = iter_[uu];
      for (; k < end; ++k) {
        const int v = adj_to_[static_cast<std::size_t>(k)];
        if (level_[static_cast<std::size_t>(v)] == lu + 1 &&
            residual(adj_arc_[static_cast<std::size_t>(k)]) > 0) {
          break;
        }
      }
      if (k < end) {
        path_arcs_.push_back(adj_arc_[static_cast<std::size_t>(k)]);
        path_nodes_.push_back(u);
        u = adj_to_[static_cast<std::size_t>(k)];
        continue;
      }
      dead_end = true;
    }
    if (dead_end) {
      if (path_arcs_.empty()) return pushed;
      // Retreat and skip the arc that led here.
      u = path_nodes_.back();
      path_arcs_.pop_back();
      path_nodes_.pop_back();
      ++iter_[static_cast<std::size_t>(u)];
    }
  }
}

std::int64_t FrontierSolver::dinic() {
  std::int64_t total = 0;
  while (bfs()) {
    std::copy(adj_begin_.begin(), adj_begin_.end() - 1, iter_.begin());
    bool progress = false;
    for (int s : sources_) {
      auto& sup = supply_[static_cast<std::size_t>(s)];
      if (sup <= 0 || level_[static_cast<std::size_t>(s)] != 0) continue;
      const std::int64_t got = augment(s, sup);
      if (got > 0) progress = true;
      sup -= got;
      total += got;
    }
    if (!progress) break;
  }
  return total;
}

bool FrontierSolver::repair_flow() {
  // Clamp the previous flow into the new bounds; the imbalances that creates
  // are routed away by a max flow (source and sink are one free node here).
  std::vector<std::int64_t>& excess = supply_;  // reuse as scratch, rebuilt below
  std::fill(excess.begin(), excess.end(), 0);
  for (int e = 0; e < m_graph_; ++e) {
    const auto ue = static_cast<std::size_t>(e);
    f_[ue] = std::clamp(f_[ue], lb_[ue], ub_[ue]);
    excess[static_cast<std::size_t>(head_[ue])] += f_[ue];
    excess[static_cast<std::size_t>(tail_[ue])] -= f_[ue];
  }
  const auto s = static_cast<std::size_t>(g_.source), t = static_cast<std::size_t>(g_.sink);
  excess[s] = 0;
  excess[t] = 0;
  std::int64_t total = 0;
  sources_.clear();
  std::fill(demand_.begin(), demand_.end(), 0);
  for (int v = 0; v < n_; ++v) {
    const auto uv = static_cast<std::size_t>(v);
    if (excess[uv] > 0) {
      sources_.push_back(v);
      total += excess[uv];
    } else if (excess[uv] < 0) {
      demand_[uv] = -excess[uv];
      excess[uv] = 0;
      total -= demand_[uv];
    }
  }
  // No supply and a zero total means no demand either: the flow is feasible.
  if (sources_.empty() && total == 0) return true;
  // The free source/sink node absorbs the net imbalance.
  if (total > 0) {
    demand_[t] += total;
  } else if (total < 0) {
    supply_[t] += -total;
    sources_.push_back(g_.sink);
  }
  const auto ts = static_cast<std::size_t>(m_graph_), st = static_cast<std::size_t>(m_graph_ + 1);
  lb_[ts] = lb_[st] = 0;
  ub_[ts] = ub_[st] = kInf;
  f_[ts] = f_[st] = 0;
  dinic();
  bool feasible = true;
  for (int v : sources_) feasible = feasible && supply_[static_cast<std::size_t>(v)] == 0;
  for (int v = 0; v < n_ && feasible; ++v) feasible = demand_[static_cast<std::size_t>(v)] == 0;
  ub_[ts] = ub_[st] = 0;
  f_[ts] = f_[st] = 0;
  std::fill(supply_.begin(), supply_.end(), 0);
  std::fill(demand_.begin(), demand_.end(), 0);
  return feasible;
}

void FrontierSolver::maximize_flow() {
  sources_.assign(1, g_.source);
  supply_[static_cast<std::size_t>(g_.source)] = kUnbounded;
  demand_[static_cast<std::size_t>(g_.sink)] = kUnbounded;
  dinic();
  // The last BFS found no path: level_ >= 0 marks the minimal source side.
  supply_[static_cast<std::size_t>(g_.source)] = 0;
  demand_[static_cast<std::size_t>(g_.sink)] = 0;
}

double FrontierSolver::total_cost() const {
  double sum = 0.0;
  for (std::size_t i = 0; i < dur_.size(); ++i) sum += problem_.ops[i].at(dur_[i]);
  return sum;
}

void FrontierSolver::self_check(std::int64_t cut_value) const {
  std::vector<std::int64_t> net(static_cast<std::size_t>(n_), 0);
  for (int e = 0; e < m_graph_; ++e) {
    const auto ue = static_cast<std::size_t>(e);
    if (f_[ue] < lb_[ue] || f_[ue] > ub_[ue]) {
      throw_error(ErrorCode::kInternal, fmt::format("self-check: arc {} flow out of bounds", e));
    }
    net[static_cast<std::size_t>(head_[ue])] += f_[ue];
    net[static_cast<std::size_t>(tail_[ue])] -= f_[ue];
  }
  for (int v = 0; v < n_; ++v) {
    if (v != g_.source && v != g_.sink && net[static_cast<std::size_t>(v)] != 0) {
      throw_error(ErrorCode::kInternal, fmt::format("self-check: node {} unbalanced", v));
    }
  }
  const std::int64_t value = net[static_cast<std::size_t>(g_.sink)];
  if (value != cut_value) {
    throw_error(ErrorCode::kInternal,
                fmt::format("self-check: max flow {} != cut value {}", value, cut_value));
  }
}

Frontier FrontierSolver::run() {
  Frontier fr;
  // T_min: every op at its fastest duration.
  for (std::size_t i = 0; i < dur_.size(); ++i) dur_[i] = dmin_[i];
  fr.t_min_bound_ = compute_cpm();
  for (std::size_t i = 0; i < dur_.size(); ++i) dur_[i] = dmax_[i];
  std::int64_t T = compute_cpm();
  fr.initial_ = dur_;
  double energy = total_cost();
  fr.points_.push_back({T, energy, 0.0, 0, 0, 0});
  fr.change_begin_.push_back(0);
  const std::int64_t expected = T - fr.t_min_bound_;

  std::vector<int> speed_up, slow_down;
  while (T > fr.t_min_bound_) {
    set_bounds();
    if (!repair_flow()) {
      fr.stop_reason_ = fmt::format(
          "at T={} no feasible flow satisfies the lower bounds (the cost model is not convex "
          "at the current durations); the frontier stops here",
          T);
      break;
    }
    maximize_flow();
    speed_up.clear();
    slow_down.clear();
    std::int64_t cut = 0;
    bool blocked = false;
    for (int e = 0; e < m_graph_; ++e) {
      const auto ue = static_cast<std::size_t>(e);
      if (!critical_[ue]) continue;
      const bool in_t = level_[static_cast<std::size_t>(tail_[ue])] >= 0;
      const bool in_h = level_[static_cast<std::size_t>(head_[ue])] >= 0;
      if (in_t && !in_h) {
        cut = std::min(cut + ub_[ue], kUnbounded);  // a blocked cut may sum kInf arcs
        const int op = op_[ue];
        if (op < 0 || dur_[static_cast<std::size_t>(op)] <= dmin_[static_cast<std::size_t>(op)]) {
          blocked = true;
        } else {
          speed_up.push_back(op);
        }
      } else if (!in_t && in_h) {
        cut -= lb_[ue];
        slow_down.push_back(e);
      }
    }
    if (blocked || speed_up.empty()) {
      fr.stop_reason_ = fmt::format(
          "at T={} every cut crosses an op that cannot be sped up; the frontier stops here", T);
      break;
    }
    if (options_.self_check) self_check(cut);
    const std::size_t log_start = fr.change_log_.size();
    for (int op : speed_up) {
      auto& d = dur_[static_cast<std::size_t>(op)];
      --d;
      fr.change_log_.emplace_back(op, d);
    }
    int slowed = 0;
    for (int e : slow_down) {
      const int op = op_[static_cast<std::size_t>(e)];
      // Dummies are never lengthened; an op already at its slowest is left as
      // is (classical PD) instead of stopping the run as lowtime does.
      if (op < 0) continue;
      auto& d = dur_[static_cast<std::size_t>(op)];
      if (d >= dmax_[static_cast<std::size_t>(op)]) continue;
      ++d;
      ++slowed;
      fr.change_log_.emplace_back(op, d);
    }
    const std::int64_t next_t = compute_cpm();
    const double next_energy = total_cost();
    fr.change_begin_.push_back(log_start);
    fr.points_.push_back({next_t, next_energy, next_energy - energy, cut,
                          static_cast<int>(speed_up.size()), slowed});
    energy = next_energy;
    if (next_t >= T) {
      fr.stop_reason_ = fmt::format("at T={} the step did not shorten the critical path", T);
      break;
    }
    T = next_t;
    if (options_.progress) {
      options_.progress(static_cast<std::int64_t>(fr.points_.size()) - 1, expected);
    }
  }
  return fr;
}

std::vector<std::int64_t> Frontier::durations(std::size_t i) const {
  std::vector<std::int64_t> d = initial_;
  const std::size_t end = i + 1 < change_begin_.size() ? change_begin_[i + 1] : change_log_.size();
  for (std::size_t k = 0; k < end; ++k) {
    d[static_cast<std::size_t>(change_log_[k].first)] = change_log_[k].second;
  }
  return d;
}

std::vector<std::pair<int, std::int64_t>> Frontier::changes(std::size_t i) const {
  if (i == 0 || i >= change_begin_.size()) return {};
  const std::size_t end = i + 1 < change_begin_.size() ? change_begin_[i + 1] : change_log_.size();
  return {change_log_.begin() + static_cast<std::ptrdiff_t>(change_begin_[i]),
          change_log_.begin() + static_cast<std::ptrdiff_t>(end)};
}

std::int64_t critical_path_length(const FrontierProblem& problem,
                                  const std::vector<std::int64_t>& durations) {
  if (durations.size() != problem.ops.size()) {
    throw_error(ErrorCode::kInvalidArgument, "one duration per op is needed");
  }
  const AoaGraph g = AoaGraph::from_aon(static_cast<int>(problem.ops.size()), problem.edges);
  std::vector<std::int64_t> early(static_cast<std::size_t>(g.num_nodes), 0);
  for (int e = 0; e < g.num_arcs(); ++e) {
    const auto ue = static_cast<std::size_t>(e);
    const std::int64_t d = g.op[ue] < 0 ? 0 : durations[static_cast<std::size_t>(g.op[ue])];
    auto& h = early[static_cast<std::size_t>(g.head[ue])];
    h = std::max(h, early[static_cast<std::size_t>(g.tail[ue])] + d);
  }
  return early[static_cast<std::size_t>(g.sink)];
}

Frontier solve_frontier(const FrontierProblem& problem, const SolverOptions& options) {
  FrontierSolver solver(problem, options);
  return solver.run();
}

}  // namespace zeus::pipeline_frequency
