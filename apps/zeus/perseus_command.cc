// `zeus perseus solve|plan`: a thin adapter over zeus/perseus/planner.h.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command_registry.h"
#include "optimizer/pipeline_frequency/planner/frontier_plot.h"
#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "output_checks.h"
#include "util/data_dir.h"
#include "util/text.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::cli::perseus_command {
namespace {

namespace fs = std::filesystem;
using namespace zeus::pipeline_frequency;
using zeus::ErrorCode;
using zeus::printable;
using zeus::throw_error;

// Solves estimated to take at least this long print their estimate to
// stderr even when it is not a terminal.
constexpr zeus::Seconds kAnnouncedSolveTime{10.0};

struct SolveArgs {
  std::string profile;
  int microbatches = 0;
  std::string schedule = "1f1b";
  double unit_time = 0.0;
  double p_blocking = 0.0;
  std::string cost_model = "exponential";
  std::string out;
  bool plot = false;
  bool progress = false;
  bool estimate_only = false;
  double max_hours = 24.0;
};

struct PlanArgs {
  std::string solution;
  std::string target;
  std::string out;
};

// The profiles shipped in data/ (installed under <prefix>/share/zeus), for
// messages that point users at an example.
std::string shipped_profiles() {
  return zeus::data_dir("perseus-sosp24-emulation") + "/stage_profile";
}

// "\rperseus: step 1200/3495 (34%), about 12 s left" at most 5 times a second.
std::function<void(std::int64_t, std::int64_t)> progress_printer() {
  using Clock = std::chrono::steady_clock;
  struct State {
    Clock::time_point start = Clock::now(), last;
  };
  auto st = std::make_shared<State>();
  return [st](std::int64_t done, std::int64_t total) {
    const auto now = Clock::now();
    if (done < total && now - st->last < std::chrono::milliseconds(200)) return;
    st->last = now;
    const double elapsed = std::chrono::duration<double>(now - st->start).count();
    const double frac = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    std::string left;
    if (frac > 0.0 && done < total) {
      left = fmt::format(", about {:.0f} s left", elapsed * (1.0 - frac) / frac);
    }
    std::fprintf(stderr, "\rperseus: step %lld/%lld (%.0f%%)%s   ", static_cast<long long>(done),
                 static_cast<long long>(total), 100.0 * frac, left.c_str());
    if (done >= total) std::fprintf(stderr, "\n");
  };
}

void solve(const SolveArgs& a) {
  if (a.out.empty() && !a.estimate_only) {
    throw_error(ErrorCode::kInvalidArgument, "--out DIR is required (unless --estimate-only)");
  }
  if (a.estimate_only && (!a.out.empty() || a.plot)) {
    throw_error(ErrorCode::kInvalidArgument,
                "--estimate-only writes nothing: drop --out and --plot, or drop --estimate-only");
  }
  if (!std::isfinite(a.max_hours) || a.max_hours < 0 || a.max_hours > 1e6) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("--max-hours must be between 0 (no limit) and 1e6, got {:g}", a.max_hours));
  }
  std::error_code ec;
  if (!fs::exists(a.profile, ec)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("--profile {}: no such file; example profiles ship in {}",
                            printable(a.profile), printable(shipped_profiles())));
  }
  if (!a.out.empty()) zeus::cli::check_output_dir(a.out, "--out", {"frontier.csv", "plans.json"});
  const auto profile = StageProfile::read_file(a.profile);
  PlannerOptions o;
  o.microbatches = a.microbatches;
  o.schedule = parse_schedule(a.schedule);
  o.unit_time = zeus::Seconds(a.unit_time);
  o.p_blocking = zeus::Watts(a.p_blocking);
  o.cost_model = parse_cost_model(a.cost_model);
  o.limits.max_time = zeus::Seconds(a.max_hours * 3600.0);
  if (a.estimate_only) {
    const auto e = estimate_solve(profile, o);
    std::printf("estimate: %s\n", e.summary().c_str());
    check_solve_limits(e, o.limits);
    std::printf("within this machine's limits\n");
    zeus::cli::flush_stdout();
    return;
  }
  // Long work says what it will cost even in a log (a solve can take hours);
  // the progress line that redraws itself is for terminals (or --progress).
  const bool show_progress = a.progress || isatty(STDERR_FILENO);
  if (show_progress) o.progress = progress_printer();
  o.on_estimate = [show_progress](const SolveEstimate& e) {
    if (show_progress || e.time >= kAnnouncedSolveTime) {
      std::fprintf(stderr, "perseus: %s\n", e.summary().c_str());
    }
  };
  const auto sol = solve_pipeline(profile, o);
  const auto& pts = sol.points();
  const auto& fastest = pts[select_fastest(pts)];
  const auto& star = pts[select_min_energy(pts)];
  const auto all_max = sol.all_max_frequency_point();
  std::printf("frontier: %zu steps, T_max %.6g s -> T_min %.6g s\n", pts.size() - 1,
              pts.front().time.count(), fastest.time.count());
  std::printf("all max frequency: %.6g s, %.6g J\n", all_max.time.count(), all_max.energy.value());
  std::printf("fastest plan:      %.6g s, %.6g J", fastest.time.count(), fastest.energy.value());
  if (all_max.energy.value() > 0.0) {
    std::printf(" (%.2f%% less energy)", 100.0 * (1.0 - fastest.energy / all_max.energy));
  }
  std::printf("\nminimum energy T*: %.6g s, %.6g J\n", star.time.count(), star.energy.value());
  if (!sol.frontier().stop_reason().empty()) {
    std::printf("note: %s\n", sol.frontier().stop_reason().c_str());
  }
  zeus::cli::flush_stdout();
  try {
    write_solution(sol, a.out);
  } catch (const zeus::Error&) {
    // The solve is not lost: the frontier goes to stdout before the error.
    std::fputs(frontier_csv(sol).c_str(), stdout);
    std::fflush(stdout);
    throw;
  }
  if (a.plot) render_frontier_plots(sol, a.out);
  std::printf("wrote %s/frontier.csv and %s/plans.json%s\n", printable(a.out, 4096).c_str(),
              printable(a.out, 4096).c_str(), a.plot ? " and frontier.png/.svg" : "");
  zeus::cli::flush_stdout();
}

void plan(const PlanArgs& a) {
  zeus::cli::check_output_file(a.out, "--out");
  const auto stored = read_solution(a.solution);
  const std::size_t i = select_target(stored.points, a.target);
  const std::string text = plan_json(stored, i, a.target);
  try {
    zeus::write_file_atomically(a.out, text);
  } catch (const zeus::Error&) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    throw;
  }
  std::printf("plan for %s: %.6g s, %.6g J per iteration -> %s\n", printable(a.target).c_str(),
              stored.points[i].time.count(), stored.points[i].energy.value(),
              printable(a.out, 4096).c_str());
  zeus::cli::flush_stdout();
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
      "all-slowest plan down to the fastest) with the iterative min-cut algorithm. The work is "
      "estimated first; a solve beyond this machine's memory or --max-hours is refused. "
      "Example profiles: data/perseus-sosp24-emulation/stage_profile/ (e.g. "
      "gpt3-175b+a100_sxm_bf16.csv with --unit-time 0.001 --p-blocking 83.64)");
  solve_cmd
      ->add_option("--profile", s->profile,
                   "CSV with columns stage,instruction,frequency,time,energy (time in s, "
                   "energy in J per instruction); examples in "
                   "data/perseus-sosp24-emulation/stage_profile/")
      ->required();
  solve_cmd->add_option("--microbatches", s->microbatches, "Microbatches per iteration (M >= 1)")
      ->required();
  solve_cmd->add_option("--schedule", s->schedule, "Pipeline schedule")
      ->check(CLI::IsMember({"1f1b", "gpipe"}))
      ->capture_default_str();
  solve_cmd
      ->add_option("--unit-time", s->unit_time,
                   "Time quantum τ in seconds (e.g. 0.001); smaller is finer and slower: the "
                   "solve takes (T_max - T_min) / τ steps")
      ->required();
  solve_cmd
      ->add_option("--p-blocking", s->p_blocking,
                   "GPU power while blocked on communication, in watts (e.g. 83.64 for A100)")
      ->required();
  solve_cmd->add_option("--cost-model", s->cost_model, "Energy model per computation type")
      ->check(CLI::IsMember({"exponential", "convex"}))
      ->capture_default_str();
  solve_cmd->add_option("--out", s->out,
                        "Output directory for frontier.csv and plans.json (required unless "
                        "--estimate-only); checked before solving");
  solve_cmd->add_flag("--plot", s->plot,
                      "Also draw frontier.png and frontier.svg with gnuplot (all-max-frequency, "
                      "fastest and T* points marked)");
  solve_cmd->add_flag("--progress", s->progress,
                      "Print the estimate and progress to stderr even when it is not a terminal");
  solve_cmd->add_flag("--estimate-only", s->estimate_only,
                      "Print the estimated steps, memory and time, and exit without solving");
  solve_cmd
      ->add_option("--max-hours", s->max_hours,
                   "Refuse a solve estimated to take longer (0 = no limit)")
      ->capture_default_str();
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
}  // namespace zeus::cli::perseus_command
