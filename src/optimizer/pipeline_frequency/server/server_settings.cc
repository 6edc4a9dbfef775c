#include "zeus/optimizer/pipeline_frequency/server/server_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "util/json.h"
#include "util/parse.h"
#include "util/text.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/straggler_scheduler.h"
#include "zeus/optimizer/pipeline_frequency/server/three_d_parallel.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {

namespace {

constexpr std::string_view kSchedulers =
    "PointSolution, PointSolution3D, StragglerAware, StragglerAware3D";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool env_bool(const std::string& name, const std::string& value) {
  const std::string v = lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on" || v == "y" || v == "t") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off" || v == "n" || v == "f") return false;
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("{}='{}' is not a boolean (true/false, 1/0, yes/no, on/off)", name,
                          printable(value)));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

ServerSettings apply_environment(ServerSettings s,
                                 const std::function<const char*(const char*)>& getenv) {
  const auto get = [&](const char* name) -> std::optional<std::string> {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  if (auto v = get("ZEUS_PFO_SCHEDULER")) s.scheduler = *v;
  if (auto v = get("ZEUS_PFO_SCHEDULER_ARGS")) {
    const auto doc = parse_json(*v, "ZEUS_PFO_SCHEDULER_ARGS");
    const JsonObject o(doc, "ZEUS_PFO_SCHEDULER_ARGS");
    o.reject_unknown_keys({"solution_path", "target", "straggler_tolerance"});
    if (o.has("solution_path")) s.solution_path = o.string("solution_path");
    if (o.has("target")) s.target = o.string("target", 64);
    if (o.has("straggler_tolerance")) {
      s.straggler_tolerance = o.number("straggler_tolerance", 1e-6, 10.0);
    }
  }
  if (auto v = get("ZEUS_PFO_LOG_LEVEL")) s.log_level = lower(*v);
  if (auto v = get("ZEUS_PFO_DUMP_DATA")) s.dump_data = env_bool("ZEUS_PFO_DUMP_DATA", *v);
  if (auto v = get("ZEUS_PFO_DUMP_DIR")) s.dump_dir = *v;
  if (auto v = get("ZEUS_PFO_MAX_JOB_IDLE_TIME")) {
    const double secs = parse_double(*v, "ZEUS_PFO_MAX_JOB_IDLE_TIME");
    if (!(secs >= 0.0 && secs <= 1e10)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("ZEUS_PFO_MAX_JOB_IDLE_TIME must be seconds in [0, 1e10], got {}",
                              printable(*v)));
    }
    s.max_job_idle_time = Seconds(secs);
  }
  return s;
}

SchedulerSetup make_scheduler(const ServerSettings& s) {
  const bool three_d = ends_with(s.scheduler, "3D");
  const std::string base = three_d ? s.scheduler.substr(0, s.scheduler.size() - 2) : s.scheduler;
  if (base != "PointSolution" && base != "StragglerAware") {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("unknown scheduler '{}': one of {}",
                                                         printable(s.scheduler), kSchedulers));
  }
  if (s.solution_path.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "no solution to serve: give --solution (a lowtime freqs_pipeline_NNNNN.py, a "
                "'zeus perseus plan' JSON file or a 'zeus perseus solve' directory), or "
                "ZEUS_PFO_SCHEDULER_ARGS='{\"solution_path\": ...}'");
  }
  const SolutionKind kind = solution_kind(s.solution_path);
  const std::string name = printable(std::filesystem::path(s.solution_path).filename().string());
  SchedulerSetup setup;
  std::unique_ptr<SchedulerFactory> factory;
  if (base == "StragglerAware") {
    if (kind != SolutionKind::kFrontier) {
      throw_error(ErrorCode::kInvalidArgument,
                  "StragglerAware needs a whole frontier to choose from: --solution must be a "
                  "'zeus perseus solve' directory or its plans.json");
    }
    const std::string file = frontier_file(s.solution_path);
    auto frontier = std::make_shared<const pipeline_frequency::StoredSolution>(
        pipeline_frequency::parse_plans_json(read_file(file), file));
    StragglerOptions o;
    if (!s.target.empty()) o.initial_target = s.target;
    o.tolerance = s.straggler_tolerance;
    const auto& first =
        frontier->points[pipeline_frequency::select_target(frontier->points, o.initial_target)];
    setup.description = fmt::format(
        "{} over the frontier {} ({} points), starting at {} ({:.6g} s, {:.6g} J), straggler "
        "tolerance {:g}%",
        s.scheduler, name, frontier->points.size(), o.initial_target, first.time.count(),
        first.energy.value(), 100.0 * o.tolerance);
    factory = make_straggler_aware(std::move(frontier), name, o);
  } else if (kind == SolutionKind::kFrontier) {
    if (s.target.empty()) {
      throw_error(ErrorCode::kInvalidArgument,
                  "a frontier holds many plans: choose one with --target fastest, min-energy, "
                  "straggler:<seconds> or straggler:<x>x (or \"target\" in "
                  "ZEUS_PFO_SCHEDULER_ARGS)");
    }
    const std::string file = frontier_file(s.solution_path);
    const auto frontier = pipeline_frequency::parse_plans_json(read_file(file), file);
    const std::size_t i = pipeline_frequency::select_target(frontier.points, s.target);
    const auto& p = frontier.points[i];
    const std::string source = fmt::format("{} point {} ({})", name, i, printable(s.target));
    setup.description = fmt::format("{} of {}: {:.6g} s, {:.6g} J per iteration", s.scheduler,
                                    source, p.time.count(), p.energy.value());
    factory = make_point_solution(stage_plan(frontier, i), source);
  } else {
    if (!s.target.empty()) {
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("--target picks a point of a frontier, but {} is a single plan", name));
    }
    StagePlan plan;
    std::string detail;
    if (kind == SolutionKind::kLowtimePlan) {
      auto lowtime = read_lowtime_plan(s.solution_path);
      plan = std::move(lowtime.stages);
      if (lowtime.iteration) detail += fmt::format(", lowtime iteration {}", *lowtime.iteration);
      if (lowtime.energy_j) detail += fmt::format(", {:.6g} J with P2P", *lowtime.energy_j);
    } else {
      plan = parse_plan_json(read_file(s.solution_path), s.solution_path);
    }
    setup.description =
        fmt::format("{} of {} ({} schedules{})", s.scheduler, name, plan.size(), detail);
    factory = make_point_solution(std::move(plan), name);
  }
  if (three_d) factory = make_3d_parallel(std::move(factory));
  setup.factory = std::move(factory);
  return setup;
}

}  // namespace zeus::pipeline_frequency
