#include "zeus/perseus/planner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/gnuplot.h"
#include "zeus/util/parse.h"

namespace zeus::perseus {

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

PerseusSolution solve_pipeline(const StageProfile& profile, const PlannerOptions& options) {
  if (options.microbatches < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--microbatches must be >= 1, got {}", options.microbatches));
  }
  if (!(options.unit_time_s > 0.0) || !std::isfinite(options.unit_time_s)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--unit-time must be a positive number of seconds, got {}",
                            options.unit_time_s));
  }
  if (!(options.p_blocking.value() >= 0.0) || !std::isfinite(options.p_blocking.value())) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--p-blocking must be a non-negative number of watts, got {}",
                            options.p_blocking.value()));
  }
  PerseusSolution sol;
  sol.unit_time_s_ = options.unit_time_s;
  sol.p_blocking_ = options.p_blocking;
  const int S = profile.num_stages();
  sol.dag_ = PipelineDag::build(S, options.microbatches, options.schedule);
  MenuOptions mo;
  mo.unit_time_s = options.unit_time_s;
  mo.p_blocking = options.p_blocking;
  mo.noise_retry = options.noise_retry;
  std::vector<CostCurve> curves;
  for (int s = 0; s < S; ++s) {
    for (Instruction ins : {Instruction::kForward, Instruction::kBackward}) {
      try {
        sol.menus_.push_back(OptionMenu::build(profile.entries_for(s, ins), mo));
      } catch (const Error& e) {
        throw_error(e.code(), fmt::format("{}: stage {} {}: {}", profile.source(), s,
                                          instruction_name(ins), e.what()));
      }
      CurveInfo info;
      curves.push_back(
          build_cost_curve(sol.menus_.back(), options.cost_model, options.unit_time_s, &info));
      sol.infos_.push_back(info);
    }
  }
  sol.problem_.edges = sol.dag_.edges;
  sol.problem_.ops.reserve(sol.dag_.ops.size());
  for (const auto& op : sol.dag_.ops) {
    sol.problem_.ops.push_back(curves[menu_index(op.stage, op.instruction)]);
  }
  SolverOptions so;
  so.progress = options.progress;
  sol.frontier_ = solve_frontier(sol.problem_, so);
  const double tau = options.unit_time_s;
  const double pb = options.p_blocking.value();
  for (const auto& p : sol.frontier_.points()) {
    const double t = static_cast<double>(p.time) * tau;
    sol.points_.push_back({p.time, t, p.effective_energy + static_cast<double>(S) * t * pb});
  }
  double fastest = 0.0;
  for (const auto& c : sol.problem_.ops) fastest += c.at(c.min_duration());
  const std::int64_t tmin = sol.frontier_.t_min_bound();
  const double tmin_s = static_cast<double>(tmin) * tau;
  sol.all_max_ = {tmin, tmin_s, fastest + static_cast<double>(S) * tmin_s * pb};
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
    if (p.energy_j < b.energy_j || (p.energy_j == b.energy_j && p.quant_time < b.quant_time)) {
      best = i;
    }
  }
  return best;
}

double energy_with_wait(const PlanPoint& point, double t_prime_s, int num_stages,
                        Watts p_blocking) {
  return point.energy_j + p_blocking.value() * static_cast<double>(num_stages) *
                              std::max(0.0, t_prime_s - point.time_s);
}

std::size_t select_straggler(const std::vector<PlanPoint>& points, double t_prime_s,
                             StragglerRule rule) {
  const std::size_t fastest = select_fastest(points);
  std::size_t best = points.size();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    // Tolerate the rounding of quant_time * τ against a user-given T'.
    if (p.time_s > t_prime_s * (1.0 + 1e-12)) continue;
    if (best == points.size()) {
      best = i;
      continue;
    }
    const auto& b = points[best];
    if (rule == StragglerRule::kSlowestThatFits) {
      if (p.quant_time > b.quant_time) best = i;
    } else if (p.energy_j < b.energy_j ||
               (p.energy_j == b.energy_j && p.quant_time < b.quant_time)) {
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
    double t_prime = 0.0;
    if (!arg.empty() && (arg.back() == 'x' || arg.back() == 'X')) {
      const double factor = parse_double(arg.substr(0, arg.size() - 1), "--target straggler:<x>x");
      t_prime = factor * points[select_fastest(points)].time_s;
    } else {
      t_prime = parse_double(arg, "--target straggler:<seconds>");
    }
    if (!(t_prime > 0.0) || !std::isfinite(t_prime)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("--target {}: the straggler time must be positive", target));
    }
    return select_straggler(points, t_prime);
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("--target '{}': expected fastest, min-energy, straggler:<seconds> or "
                          "straggler:<factor>x (a multiple of the fastest time)",
                          target));
}

void write_solution(const PerseusSolution& solution, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw_error(ErrorCode::kIo, fmt::format("cannot create {}: {}", dir, ec.message()));
  }
  const auto& pts = solution.points();
  std::string csv = "time,energy\n";
  for (std::size_t i = 1; i < pts.size(); ++i) {
    csv += fmt::format("{},{}\n", pts[i].time_s, pts[i].energy_j);
  }
  write_file_atomically(dir + "/frontier.csv", csv);

  const auto& dag = solution.dag();
  nlohmann::json j;
  j["format"] = "zeus-perseus-plans/1";
  j["num_stages"] = dag.num_stages;
  j["num_microbatches"] = dag.num_microbatches;
  j["schedule"] = schedule_name(dag.schedule);
  j["unit_time_s"] = solution.unit_time_s();
  j["p_blocking_w"] = solution.p_blocking().value();
  j["cost_model"] = cost_model_name(solution.curve_info(0, Instruction::kForward).requested);
  auto& ops = j["ops"] = nlohmann::json::array();
  for (const auto& op : dag.ops) {
    ops.push_back({op.stage, instruction_name(op.instruction), op.microbatch});
  }
  j["stage_order"] = dag.stage_order;
  auto& jp = j["points"] = nlohmann::json::array();
  // Frequencies as a change log: point 0 lists every op, later points only the
  // ops whose frequency changed.
  std::vector<std::int64_t> dur = solution.frontier().durations(0);
  std::vector<std::int64_t> freq(dur.size(), -1);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    for (const auto& [op, d] : solution.frontier().changes(i))
      dur[static_cast<std::size_t>(op)] = d;
    nlohmann::json changes = nlohmann::json::array();
    for (std::size_t k = 0; k < dur.size(); ++k) {
      const auto& o = dag.ops[k];
      const std::int64_t f = solution.menu(o.stage, o.instruction).frequency_for(dur[k]).value();
      if (f != freq[k]) {
        changes.push_back({k, f});
        freq[k] = f;
      }
    }
    jp.push_back({{"quant_time", pts[i].quant_time},
                  {"time_s", pts[i].time_s},
                  {"energy_j", pts[i].energy_j},
                  {"changes", std::move(changes)}});
  }
  write_file_atomically(dir + "/plans.json", j.dump());
}

std::vector<std::int64_t> StoredSolution::frequencies(std::size_t i) const {
  if (i >= points.size()) throw_error(ErrorCode::kInvalidArgument, "point index out of range");
  std::vector<std::int64_t> f(ops.size(), 0);
  for (std::size_t k = 0; k <= i; ++k) {
    for (const auto& [op, mhz] : changes[k]) f[static_cast<std::size_t>(op)] = mhz;
  }
  return f;
}

StoredSolution read_solution(const std::string& dir) {
  const std::string path = dir + "/plans.json";
  if (!std::filesystem::exists(path)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("{} not found: --solution must be a directory written by "
                            "'zeus perseus solve --out'",
                            path));
  }
  StoredSolution s;
  try {
    const auto j = nlohmann::json::parse(read_file(path));
    if (j.at("format").get<std::string>() != "zeus-perseus-plans/1") {
      throw_error(ErrorCode::kParse, fmt::format("{}: unknown format", path));
    }
    s.num_stages = j.at("num_stages").get<int>();
    s.num_microbatches = j.at("num_microbatches").get<int>();
    s.schedule = j.at("schedule").get<std::string>();
    s.unit_time_s = j.at("unit_time_s").get<double>();
    s.p_blocking_w = j.at("p_blocking_w").get<double>();
    for (const auto& o : j.at("ops")) {
      s.ops.push_back(
          {o.at(0).get<int>(), parse_instruction(o.at(1).get<std::string>()), o.at(2).get<int>()});
    }
    s.stage_order = j.at("stage_order").get<std::vector<std::vector<int>>>();
    const int nops = static_cast<int>(s.ops.size());
    for (const auto& order : s.stage_order) {
      for (int id : order) {
        if (id < 0 || id >= nops) throw_error(ErrorCode::kParse, "op id out of range");
      }
    }
    for (const auto& p : j.at("points")) {
      s.points.push_back({p.at("quant_time").get<std::int64_t>(), p.at("time_s").get<double>(),
                          p.at("energy_j").get<double>()});
      std::vector<std::pair<int, std::int64_t>> ch;
      for (const auto& c : p.at("changes")) {
        const int op = c.at(0).get<int>();
        if (op < 0 || op >= nops) throw_error(ErrorCode::kParse, "op id out of range");
        ch.emplace_back(op, c.at(1).get<std::int64_t>());
      }
      s.changes.push_back(std::move(ch));
    }
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::kParse, fmt::format("{}: malformed plans file: {}", path, e.what()));
  } catch (const Error& e) {
    throw_error(ErrorCode::kParse, fmt::format("{}: {}", path, e.what()));
  }
  if (s.points.empty()) throw_error(ErrorCode::kParse, fmt::format("{}: no points", path));
  return s;
}

std::string plan_json(const StoredSolution& solution, std::size_t i, std::string_view target) {
  const auto freq = solution.frequencies(i);
  const auto& p = solution.points.at(i);
  nlohmann::json j;
  j["target"] = std::string(target);
  j["time_s"] = p.time_s;
  j["energy_j"] = p.energy_j;
  j["quant_time"] = p.quant_time;
  j["unit_time_s"] = solution.unit_time_s;
  j["num_stages"] = solution.num_stages;
  j["num_microbatches"] = solution.num_microbatches;
  j["schedule"] = solution.schedule;
  // One line per stage keeps the file readable and diffable.
  std::string out = j.dump(1);
  out.pop_back();  // the closing brace
  out.pop_back();  // and the newline before it
  out += ",\n \"stages\": [\n";
  for (std::size_t s = 0; s < solution.stage_order.size(); ++s) {
    nlohmann::json list = nlohmann::json::array();
    for (int id : solution.stage_order[s]) {
      const auto k = static_cast<std::size_t>(id);
      list.push_back({instruction_name(solution.ops[k].instruction), freq[k]});
    }
    out += fmt::format("  {{\"stage\": {}, \"frequencies\": {}}}{}\n", s, list.dump(),
                       s + 1 < solution.stage_order.size() ? "," : "");
  }
  out += " ]\n}\n";
  return out;
}

std::string frontier_plot_script(const PerseusSolution& solution, const std::string& csv_path,
                                 const std::string& image_path, const std::string& terminal) {
  const auto& pts = solution.points();
  const auto& star = pts[select_min_energy(pts)];
  const auto all_max = solution.all_max_frequency_point();
  const auto& fastest = pts[select_fastest(pts)];
  std::string s;
  s += fmt::format("set terminal {}\nset output '{}'\n", terminal, image_path);
  s += "set datafile separator ','\n";
  s += fmt::format("set title 'Perseus iteration time vs energy ({} stages x {} microbatches)'\n",
                   solution.dag().num_stages, solution.dag().num_microbatches);
  s += "set xlabel 'iteration time (s)'\nset ylabel 'energy per iteration (J)'\n";
  s += "set grid\nset key top right\n";
  s += fmt::format(
      "plot '{}' skip 1 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'Perseus frontier', \\\n"
      "  '-' using 1:2 with points pt 7 ps 1.6 lc rgb '#d62728' title 'all max frequency', \\\n"
      "  '-' using 1:2 with points pt 5 ps 1.3 lc rgb '#2ca02c' title 'fastest plan (T_{{min}})', "
      "\\\n"
      "  '-' using 1:2 with points pt 9 ps 1.6 lc rgb '#ff7f0e' title 'minimum energy (T*)'\n",
      csv_path);
  s += fmt::format("{},{}\ne\n", all_max.time_s, all_max.energy_j);
  s += fmt::format("{},{}\ne\n", fastest.time_s, fastest.energy_j);
  s += fmt::format("{},{}\ne\n", star.time_s, star.energy_j);
  return s;
}

void render_frontier_plots(const PerseusSolution& solution, const std::string& dir) {
  const std::string terminal =
      gnuplot_has_terminal("pngcairo") ? "pngcairo size 1000,650" : "png size 1000,650";
  const std::string csv = dir + "/frontier.csv";
  const std::string png_script = dir + "/frontier_png.gp";
  const std::string svg_script = dir + "/frontier_svg.gp";
  write_file_atomically(png_script,
                        frontier_plot_script(solution, csv, dir + "/frontier.png", terminal));
  write_file_atomically(
      svg_script, frontier_plot_script(solution, csv, dir + "/frontier.svg", "svg size 1000,650"));
  run_gnuplot(png_script);
  run_gnuplot(svg_script);
}

}  // namespace zeus::perseus
