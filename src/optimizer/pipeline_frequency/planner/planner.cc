#include "zeus/optimizer/pipeline_frequency/planner/planner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/parse.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

std::size_t menu_index(int stage, Instruction instruction) {
  return static_cast<std::size_t>(stage) * 2 + (instruction == Instruction::kForward ? 0 : 1);
}

}  // namespace

const OptionMenu& PerseusSolution::menu(int stage, Instruction instruction) const {
  return menus_.at(menu_index(stage, instruction));
}

const CurveInfo& PerseusSolution::curve_info(int stage, Instruction instruction) const {
  return infos_.at(menu_index(stage, instruction));
}

std::vector<Megahertz> PerseusSolution::frequencies(std::size_t i) const {
  const auto d = frontier_.durations(i);
  std::vector<Megahertz> out;
  out.reserve(d.size());
  for (std::size_t k = 0; k < d.size(); ++k) {
    out.push_back(menu(dag_.ops[k].stage, dag_.ops[k].instruction).frequency_for(d[k]));
  }
  return out;
}

namespace {

// Calibrated on the SOSP'24 profiles (docs/perseus.md, "Work estimate"):
// resident bytes per op / graph arc / graph node / frontier step / change,
// and solver time per graph arc per step, rounded up.
constexpr double kBytesPerOp = 200;
constexpr double kBytesPerArc = 140;
constexpr double kBytesPerNode = 90;
constexpr double kBytesPerStep = 300;
constexpr double kBytesPerChange = 60;
constexpr double kNanosecondsPerArcStep = 20;       // the graph fits in cache
constexpr double kNanosecondsPerArcStepLarge = 30;  // beyond kLargeGraphArcs it does not
constexpr std::int64_t kLargeGraphArcs = 200'000;

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{8} << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::uint64_t memory_limit(const SolveLimits& limits) {
  if (limits.max_memory_bytes > 0) return limits.max_memory_bytes;
  return physical_memory_bytes() / 10 * 8;
}

std::string bytes_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.0f} kB", bytes / 1e3);
}

std::string time_text(Seconds t) {
  const double s = t.count();
  if (s >= 86400.0 * 365) return fmt::format("{:.1f} years", s / (86400.0 * 365));
  if (s >= 2 * 86400.0) return fmt::format("{:.1f} days", s / 86400.0);
  if (s >= 3600.0) return fmt::format("{:.1f} h", s / 3600.0);
  if (s >= 60.0) return fmt::format("{:.1f} min", s / 60.0);
  return fmt::format("{:.1f} s", s);
}

void validate(const PlannerOptions& o) {
  if (o.microbatches < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--microbatches must be >= 1, got {}", o.microbatches));
  }
  const double tau = o.unit_time.count();
  if (!std::isfinite(tau) || !(tau > 0.0) || tau > kMaxUnitTimeS) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--unit-time must be a positive number of seconds up to {:g}, got {:g}",
                            kMaxUnitTimeS, tau));
  }
  const double pb = o.p_blocking.value();
  if (!std::isfinite(pb) || !(pb >= 0.0) || pb > kMaxBlockingPowerW) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--p-blocking must be between 0 and {:g} W (one GPU's power while it "
                            "waits), got {:g}",
                            kMaxBlockingPowerW, pb));
  }
}

std::vector<OptionMenu> build_menus(const StageProfile& profile, const PlannerOptions& o) {
  MenuOptions mo;
  mo.unit_time = o.unit_time;
  mo.p_blocking = o.p_blocking;
  mo.noise_retry = o.noise_retry;
  std::vector<OptionMenu> menus;
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
      try {
        menus.push_back(OptionMenu::build(profile.entries_for(s, ins), mo));
      } catch (const Error& e) {
        throw_error(e.code(), fmt::format("{}: stage {} {}: {}", profile.source(), s,
                                          instruction_name(ins), e.what()));
      }
    }
  }
  return menus;
}

// The graph part of the estimate, from sizes alone (before anything is built).
SolveEstimate estimate_graph(int stages, int microbatches, const std::vector<OptionMenu>& menus,
                             const PlannerOptions& o) {
  SolveEstimate e;
  e.stages = stages;
  e.microbatches = microbatches;
  e.unit_time = o.unit_time;
  const auto S = static_cast<std::int64_t>(stages), M = static_cast<std::int64_t>(microbatches);
  e.ops = 2 * S * M;
  const std::int64_t edges = S * (2 * M - 1) + 2 * (S - 1) * M;
  e.nodes = 2 * (e.ops + 2);
  e.arcs = (e.ops + 2) + edges + 4;
  double table_bytes = 0;  // cost curve and solver delta per (stage, instruction)
  std::int64_t longest_op = 0;
  for (const auto& m : menus) {
    table_bytes += 16.0 * static_cast<double>(m.max_duration() - m.min_duration() + 1);
    longest_op = std::max(longest_op, m.max_duration());
  }
  // Path lengths are sums of durations in int64: keep every sum far from overflow.
  if (static_cast<double>(longest_op) * static_cast<double>(e.ops) > 1e18) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("refusing to solve: {} ops of up to {} steps of {:g} s each cannot be "
                            "added up; use a larger --unit-time or fewer --microbatches",
                            e.ops, longest_op, o.unit_time.count()));
  }
  e.memory_bytes = static_cast<std::uint64_t>(
      kBytesPerOp * static_cast<double>(e.ops) + kBytesPerArc * static_cast<double>(e.arcs) +
      kBytesPerNode * static_cast<double>(e.nodes) + table_bytes);
  return e;
}

// Adds what the steps cost once T_max and T_min are known.
void estimate_steps(SolveEstimate& e, std::int64_t t_max, std::int64_t t_min) {
  e.t_max = t_max;
  e.t_min = t_min;
  e.steps = t_max - t_min;
  const double steps = static_cast<double>(e.steps);
  e.memory_bytes += static_cast<std::uint64_t>(
      steps * (kBytesPerStep + kBytesPerChange * 2.0 * static_cast<double>(e.stages)));
  const double ns = e.arcs > kLargeGraphArcs ? kNanosecondsPerArcStepLarge : kNanosecondsPerArcStep;
  e.time = Seconds(steps * static_cast<double>(e.arcs) * ns * 1e-9);
}

// Longest path of the AON DAG with the given per-op durations (Kahn's order).
std::int64_t longest_path(const PipelineDag& dag, const std::vector<std::int64_t>& duration) {
  const std::size_t n = dag.ops.size();
  std::vector<int> indeg(n, 0), begin(n + 1, 0), succ(dag.edges.size());
  for (const auto& [u, v] : dag.edges) {
    ++indeg[static_cast<std::size_t>(v)];
    ++begin[static_cast<std::size_t>(u) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<int> fill(begin.begin(), begin.end() - 1);
  for (const auto& [u, v] : dag.edges)
    succ[static_cast<std::size_t>(fill[static_cast<std::size_t>(u)]++)] = v;
  std::vector<std::int64_t> finish(n, 0), start(n, 0);
  std::vector<int> ready;
  ready.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (indeg[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::int64_t longest = 0;
  for (std::size_t qi = 0; qi < ready.size(); ++qi) {
    const auto u = static_cast<std::size_t>(ready[qi]);
    finish[u] = start[u] + duration[u];
    longest = std::max(longest, finish[u]);
    for (int k = begin[u]; k < begin[u + 1]; ++k) {
      const auto v = static_cast<std::size_t>(succ[static_cast<std::size_t>(k)]);
      start[v] = std::max(start[v], finish[u]);
      if (--indeg[v] == 0) ready.push_back(static_cast<int>(v));
    }
  }
  return longest;
}

std::pair<std::int64_t, std::int64_t> critical_path_bounds(const PipelineDag& dag,
                                                           const std::vector<OptionMenu>& menus) {
  std::vector<std::int64_t> slow, fast;
  slow.reserve(dag.ops.size());
  fast.reserve(dag.ops.size());
  for (const auto& op : dag.ops) {
    const auto& m = menus[menu_index(op.stage, op.instruction)];
    slow.push_back(m.max_duration());
    fast.push_back(m.min_duration());
  }
  return {longest_path(dag, slow), longest_path(dag, fast)};
}

}  // namespace

std::string SolveEstimate::summary() const {
  std::string out = fmt::format("{} stages x {} microbatches: {} ops, {} graph nodes, {} arcs",
                                stages, microbatches, ops, nodes, arcs);
  if (t_max > 0) {
    out += fmt::format("; {} steps of {:g} s (T_max {:g} s -> T_min {:g} s)", steps,
                       unit_time.count(), static_cast<double>(t_max) * unit_time.count(),
                       static_cast<double>(t_min) * unit_time.count());
  }
  out += fmt::format("; about {} of memory", bytes_text(static_cast<double>(memory_bytes)));
  if (t_max > 0) out += fmt::format(" and {} of solver time", time_text(time));
  return out;
}

void check_solve_limits(const SolveEstimate& e, const SolveLimits& limits) {
  const std::uint64_t mem = memory_limit(limits);
  std::string why;
  if (e.memory_bytes > mem) {
    why = fmt::format("it needs more memory than the {} this solve may use",
                      bytes_text(static_cast<double>(mem)));
  } else if (limits.max_time.count() > 0 && e.time > limits.max_time) {
    why = fmt::format("it would take longer than the limit of {}", time_text(limits.max_time));
  } else {
    return;
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("refusing to solve: {}. Estimate: {}. Steps grow with the iteration "
                          "time over --unit-time: a 10x larger --unit-time takes about 10x fewer "
                          "steps; fewer --microbatches make the graph smaller",
                          why, e.summary()));
}

SolveEstimate estimate_solve(const StageProfile& profile, const PlannerOptions& options) {
  validate(options);
  const auto menus = build_menus(profile, options);
  SolveEstimate e = estimate_graph(profile.num_stages(), options.microbatches, menus, options);
  // Measuring the critical paths needs the DAG itself: refuse one that
  // cannot be held at all before building it.
  SolveLimits graph_only = options.limits;
  graph_only.max_time = Seconds(0);
  check_solve_limits(e, graph_only);
  const auto dag = PipelineDag::build(profile.num_stages(), options.microbatches, options.schedule);
  const auto [t_max, t_min] = critical_path_bounds(dag, menus);
  estimate_steps(e, t_max, t_min);
  return e;
}

PerseusSolution solve_pipeline(const StageProfile& profile, const PlannerOptions& options) {
  validate(options);
  PerseusSolution sol;
  sol.unit_time_ = options.unit_time;
  sol.p_blocking_ = options.p_blocking;
  sol.cost_model_ = options.cost_model;
  const int S = profile.num_stages();
  sol.menus_ = build_menus(profile, options);
  sol.estimate_ = estimate_graph(S, options.microbatches, sol.menus_, options);
  {
    SolveLimits graph_only = options.limits;
    graph_only.max_time = Seconds(0);
    check_solve_limits(sol.estimate_, graph_only);
  }
  sol.dag_ = PipelineDag::build(S, options.microbatches, options.schedule);
  const auto [t_max, t_min] = critical_path_bounds(sol.dag_, sol.menus_);
  estimate_steps(sol.estimate_, t_max, t_min);
  check_solve_limits(sol.estimate_, options.limits);
  if (options.on_estimate) options.on_estimate(sol.estimate_);

  std::vector<CostCurve> curves;
  for (const auto& menu : sol.menus_) {
    CurveInfo info;
    curves.push_back(build_cost_curve(menu, options.cost_model, options.unit_time, &info));
    sol.infos_.push_back(info);
  }
  sol.problem_.edges = sol.dag_.edges;
  sol.problem_.ops.reserve(sol.dag_.ops.size());
  for (const auto& op : sol.dag_.ops) {
    sol.problem_.ops.push_back(curves[menu_index(op.stage, op.instruction)]);
  }
  SolverOptions so;
  so.progress = options.progress;
  sol.frontier_ = solve_frontier(sol.problem_, so);
  const Seconds tau = options.unit_time;
  const double stages = static_cast<double>(S);
  sol.points_.reserve(sol.frontier_.points().size());
  for (const auto& p : sol.frontier_.points()) {
    const Seconds t = static_cast<double>(p.time) * tau;
    sol.points_.push_back(
        {p.time, t, Joules(p.effective_energy) + stages * (options.p_blocking * t)});
  }
  double fastest = 0.0;
  for (const auto& c : sol.problem_.ops) fastest += c.at(c.min_duration());
  const std::int64_t tmin = sol.frontier_.t_min_bound();
  const Seconds tmin_s = static_cast<double>(tmin) * tau;
  sol.all_max_ = {tmin, tmin_s, Joules(fastest) + stages * (options.p_blocking * tmin_s)};
  // Inputs are bounded, so this holds; a result is never NaN or infinite.
  auto finite = [](const PlanPoint& p) {
    return std::isfinite(p.time.count()) && std::isfinite(p.energy.value());
  };
  if (!finite(sol.all_max_) || !std::all_of(sol.points_.begin(), sol.points_.end(), finite)) {
    throw_error(ErrorCode::kInternal, "the frontier has a non-finite time or energy");
  }
  return sol;
}

std::size_t select_fastest(const std::vector<PlanPoint>& points) {
  if (points.empty()) throw_error(ErrorCode::kInvalidArgument, "empty frontier");
  std::size_t best = 0;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (points[i].quant_time < points[best].quant_time) best = i;
  }
  return best;
}

std::size_t select_min_energy(const std::vector<PlanPoint>& points) {
  if (points.empty()) throw_error(ErrorCode::kInvalidArgument, "empty frontier");
  std::size_t best = 0;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& p = points[i];
    const auto& b = points[best];
    if (p.energy < b.energy || (p.energy == b.energy && p.quant_time < b.quant_time)) {
      best = i;
    }
  }
  return best;
}

Joules energy_with_wait(const PlanPoint& point, Seconds t_prime, int num_stages, Watts p_blocking) {
  const Seconds wait = std::max(Seconds(0.0), t_prime - point.time);
  return point.energy + static_cast<double>(num_stages) * (p_blocking * wait);
}

std::size_t select_straggler(const std::vector<PlanPoint>& points, Seconds t_prime,
                             StragglerRule rule) {
  const std::size_t fastest = select_fastest(points);
  std::size_t best = points.size();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    // Tolerate the rounding of quant_time * τ against a user-given T'.
    if (p.time > t_prime * (1.0 + 1e-12)) continue;
    if (best == points.size()) {
      best = i;
      continue;
    }
    const auto& b = points[best];
    if (rule == StragglerRule::kSlowestThatFits) {
      if (p.quant_time > b.quant_time) best = i;
    } else if (p.energy < b.energy || (p.energy == b.energy && p.quant_time < b.quant_time)) {
      best = i;
    }
  }
  return best == points.size() ? fastest : best;
}

std::size_t select_target(const std::vector<PlanPoint>& points, std::string_view target) {
  if (points.empty()) throw_error(ErrorCode::kInvalidArgument, "the solution has no points");
  if (target == "fastest") return select_fastest(points);
  if (target == "min-energy") return select_min_energy(points);
  constexpr std::string_view kPrefix = "straggler:";
  if (target.substr(0, kPrefix.size()) == kPrefix) {
    std::string_view arg = target.substr(kPrefix.size());
    Seconds t_prime{0.0};
    if (!arg.empty() && (arg.back() == 'x' || arg.back() == 'X')) {
      const double factor =
          parse_double(arg.substr(0, arg.size() - 1), "--target straggler:<x>x", 0.0, 1e6);
      t_prime = factor * points[select_fastest(points)].time;
    } else {
      t_prime = Seconds(parse_double(arg, "--target straggler:<seconds>", 0.0, 1e9));
    }
    if (!(t_prime.count() > 0.0)) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("--target {}: the straggler time must be positive", printable(target)));
    }
    return select_straggler(points, t_prime);
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("--target '{}': expected fastest, min-energy, straggler:<seconds> or "
                          "straggler:<factor>x (a multiple of the fastest time)",
                          printable(target)));
}

}  // namespace zeus::pipeline_frequency
