// `zeus perseus solve|plan`: a thin adapter over zeus/perseus/planner.h.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command_registry.h"
#include "zeus/perseus/planner.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace {

using namespace zeus::perseus;

struct SolveArgs {
  std::string profile;
  int microbatches = 0;
  std::string schedule = "1f1b";
  double unit_time = 0.0;
  double p_blocking = 0.0;
  std::string cost_model = "exponential";
  std::string out;
  bool plot = false;
};

struct PlanArgs {
  std::string solution;
  std::string target;
  std::string out;
};

void solve(const SolveArgs& a) {
  if (!std::filesystem::exists(a.profile)) {
    zeus::throw_error(zeus::ErrorCode::kNotFound,
                      fmt::format("--profile {}: no such file", a.profile));
  }
  const auto profile = StageProfile::read_file(a.profile);
  PlannerOptions o;
  o.microbatches = a.microbatches;
  o.schedule = parse_schedule(a.schedule);
  o.unit_time_s = a.unit_time;
  o.p_blocking = zeus::Watts(a.p_blocking);
  o.cost_model = parse_cost_model(a.cost_model);
  if (isatty(STDERR_FILENO)) {
    auto last = std::make_shared<std::chrono::steady_clock::time_point>();
    o.progress = [last](std::int64_t done, std::int64_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (done < total && now - *last < std::chrono::milliseconds(200)) return;
      *last = now;
      std::fprintf(
          stderr, "\rperseus: step %lld/%lld (%.0f%%)", static_cast<long long>(done),
          static_cast<long long>(total),
          total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0);
      if (done >= total) std::fprintf(stderr, "\n");
    };
  }
  const auto sol = solve_pipeline(profile, o);
  write_solution(sol, a.out);
  if (a.plot) render_frontier_plots(sol, a.out);
  const auto& pts = sol.points();
  const auto& fastest = pts[select_fastest(pts)];
  const auto& star = pts[select_min_energy(pts)];
  const auto all_max = sol.all_max_frequency_point();
  std::printf("frontier: %zu steps, T_max %.6g s -> T_min %.6g s\n", pts.size() - 1,
              pts.front().time_s, fastest.time_s);
  std::printf("all max frequency: %.6g s, %.6g J\n", all_max.time_s, all_max.energy_j);
  std::printf("fastest plan:      %.6g s, %.6g J (%.2f%% less energy)\n", fastest.time_s,
              fastest.energy_j, 100.0 * (1.0 - fastest.energy_j / all_max.energy_j));
  std::printf("minimum energy T*: %.6g s, %.6g J\n", star.time_s, star.energy_j);
  if (!sol.frontier().stop_reason().empty()) {
    std::printf("note: %s\n", sol.frontier().stop_reason().c_str());
  }
  std::printf("wrote %s/frontier.csv and %s/plans.json%s\n", a.out.c_str(), a.out.c_str(),
              a.plot ? " and frontier.png/.svg" : "");
}

void plan(const PlanArgs& a) {
  const auto stored = read_solution(a.solution);
  const std::size_t i = select_target(stored.points, a.target);
  zeus::write_file_atomically(a.out, plan_json(stored, i, a.target));
  std::printf("plan for %s: %.6g s, %.6g J per iteration -> %s\n", a.target.c_str(),
              stored.points[i].time_s, stored.points[i].energy_j, a.out.c_str());
}

void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "perseus",
      "Perseus (SOSP '24): per-computation GPU frequency plans for pipeline-parallel training "
      "from the iteration-time vs energy frontier");
  cmd->require_subcommand(1);

  auto s = std::make_shared<SolveArgs>();
  auto* solve_cmd = cmd->add_subcommand(
      "solve",
      "Compute the whole time-energy frontier (one point per --unit-time step from the "
      "all-slowest plan down to the fastest) with the iterative min-cut algorithm");
  solve_cmd
      ->add_option("--profile", s->profile,
                   "CSV with columns stage,instruction,frequency,time,energy (time in s, "
                   "energy in J per instruction)")
      ->required();
  solve_cmd->add_option("--microbatches", s->microbatches, "Microbatches per iteration (M >= 1)")
      ->required();
  solve_cmd->add_option("--schedule", s->schedule, "Pipeline schedule")
      ->check(CLI::IsMember({"1f1b", "gpipe"}))
      ->capture_default_str();
  solve_cmd
      ->add_option("--unit-time", s->unit_time,
                   "Time quantum τ in seconds (e.g. 0.001); smaller is finer and slower")
      ->required();
  solve_cmd
      ->add_option("--p-blocking", s->p_blocking,
                   "GPU power while blocked on communication, in watts (e.g. 83.64 for A100)")
      ->required();
  solve_cmd->add_option("--cost-model", s->cost_model, "Energy model per computation type")
      ->check(CLI::IsMember({"exponential", "convex"}))
      ->capture_default_str();
  solve_cmd->add_option("--out", s->out, "Output directory (frontier.csv, plans.json)")->required();
  solve_cmd->add_flag("--plot", s->plot,
                      "Also draw frontier.png and frontier.svg with gnuplot (all-max-frequency, "
                      "fastest and T* points marked)");
  solve_cmd->callback([s] { solve(*s); });

  auto p = std::make_shared<PlanArgs>();
  auto* plan_cmd = cmd->add_subcommand(
      "plan", "Pick one frontier point and write its per-stage frequency schedule as JSON");
  plan_cmd->add_option("--solution", p->solution, "Directory written by 'zeus perseus solve'")
      ->required();
  plan_cmd
      ->add_option("--target", p->target,
                   "fastest (T_min), min-energy (T*), straggler:<seconds> or straggler:<x>x "
                   "(the slowest plan that still meets the straggler's iteration time)")
      ->required();
  plan_cmd->add_option("--out", p->out, "Output JSON file")->required();
  plan_cmd->callback([p] { plan(*p); });
}

const bool registered = zeus::cli::register_command(50, &setup);

}  // namespace
