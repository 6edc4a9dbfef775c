#include "optimizer/pipeline_frequency/planner/plans_json.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {

namespace {

constexpr std::string_view kFormat = "zeus-perseus-plans/1";
// A plans.json never describes more ops than a solvable pipeline has.
constexpr std::int64_t kMaxStoredOps = 100'000'000;

}  // namespace

std::string frontier_csv(const PerseusSolution& solution) {
  const auto& pts = solution.points();
  std::string csv = "time,energy\n";
  for (std::size_t i = 1; i < pts.size(); ++i) {
    fmt::format_to(std::back_inserter(csv), "{},{}\n", pts[i].time.count(), pts[i].energy.value());
  }
  return csv;
}

std::string plans_json(const PerseusSolution& solution) {
  const auto& dag = solution.dag();
  const auto& pts = solution.points();
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(
      it,
      "{{\"format\":\"{}\",\"num_stages\":{},\"num_microbatches\":{},\"schedule\":\"{}\","
      "\"unit_time_s\":{},\"p_blocking_w\":{},\"cost_model\":\"{}\",\"ops\":[",
      kFormat, dag.num_stages, dag.num_microbatches, schedule_name(dag.schedule),
      solution.unit_time().count(), solution.p_blocking().value(),
      cost_model_name(solution.cost_model()));
  for (std::size_t k = 0; k < dag.ops.size(); ++k) {
    const auto& op = dag.ops[k];
    fmt::format_to(it, "{}[{},\"{}\",{}]", k ? "," : "", op.stage, instruction_name(op.instruction),
                   op.microbatch);
  }
  out += "],\"stage_order\":[";
  for (std::size_t s = 0; s < dag.stage_order.size(); ++s) {
    out += s ? ",[" : "[";
    for (std::size_t k = 0; k < dag.stage_order[s].size(); ++k) {
      fmt::format_to(it, "{}{}", k ? "," : "", dag.stage_order[s][k]);
    }
    out += "]";
  }
  out += "],\"points\":[";
  // Point 0 lists every op; later points only the ops the solver changed
  // whose frequency differs (a shorter duration may map to the same one).
  std::vector<std::int64_t> dur = solution.frontier().durations(0);
  std::vector<std::int64_t> freq(dur.size(), -1);
  std::vector<int> touched;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    touched.clear();
    if (i == 0) {
      for (std::size_t k = 0; k < dur.size(); ++k) touched.push_back(static_cast<int>(k));
    } else {
      for (const auto& [op, d] : solution.frontier().changes(i)) {
        dur[static_cast<std::size_t>(op)] = d;
        touched.push_back(op);
      }
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    }
    fmt::format_to(it, "{}{{\"quant_time\":{},\"time_s\":{},\"energy_j\":{},\"changes\":[",
                   i ? "," : "", pts[i].quant_time, pts[i].time.count(), pts[i].energy.value());
    bool first = true;
    for (int op : touched) {
      const auto k = static_cast<std::size_t>(op);
      const auto& o = dag.ops[k];
      const std::int64_t f = solution.menu(o.stage, o.instruction).frequency_for(dur[k]).value();
      if (f == freq[k]) continue;
      freq[k] = f;
      fmt::format_to(it, "{}[{},{}]", first ? "" : ",", op, f);
      first = false;
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

void write_solution(const PerseusSolution& solution, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw_error(ErrorCode::kIo, fmt::format("cannot create {}: {}", printable(dir), ec.message()));
  }
  write_file_atomically(dir + "/frontier.csv", frontier_csv(solution));
  write_file_atomically(dir + "/plans.json", plans_json(solution));
}

std::vector<Megahertz> StoredSolution::frequencies(std::size_t i) const {
  if (i >= points.size()) throw_error(ErrorCode::kInvalidArgument, "point index out of range");
  std::vector<Megahertz> f(ops.size(), Megahertz(0));
  for (std::size_t k = 0; k <= i; ++k) {
    for (const auto& [op, mhz] : changes[k]) f[static_cast<std::size_t>(op)] = mhz;
  }
  return f;
}

namespace {

[[noreturn]] void bad(const std::string& source, const std::string& field,
                      const std::string& what) {
  throw FieldError(ErrorCode::kParse, field, fmt::format("{}: {}: {}", source, field, what));
}

const nlohmann::json& array_at(const nlohmann::json& v, const std::string& source,
                               const std::string& field, std::size_t size = 0) {
  if (!v.is_array()) bad(source, field, "expected an array");
  if (size > 0 && v.size() != size) bad(source, field, fmt::format("expected {} entries", size));
  return v;
}

nlohmann::json parse_document(std::string_view text, const std::string& source) {
  try {
    return parse_json(text, source);
  } catch (const nlohmann::json::exception&) {
    // parse_json maps syntax errors; a number beyond double range (406) is
    // reported by nlohmann as out_of_range instead.
    throw FieldError(ErrorCode::kParse, "",
                     fmt::format("{}: not valid JSON (a number out of range)", source));
  }
}

// The format and the pipeline's shape and settings; returns the number of ops.
std::int64_t parse_header(const JsonObject& j, const std::string& source, StoredSolution& s) {
  if (j.string("format", 64) != kFormat) {
    throw FieldError(ErrorCode::kParse, "format",
                     fmt::format("{}: format: expected \"{}\" (a file written by 'zeus perseus "
                                 "solve')",
                                 source, kFormat));
  }
  s.num_stages = static_cast<int>(j.integer("num_stages", 1, kMaxProfileStage + 1));
  s.num_microbatches = static_cast<int>(j.integer("num_microbatches", 1, kMaxStoredOps / 2));
  try {
    s.schedule = parse_schedule(j.string("schedule", 16));
  } catch (const FieldError&) {
    throw;
  } catch (const Error& e) {
    throw FieldError(ErrorCode::kParse, "schedule",
                     fmt::format("{}: schedule: {}", source, e.what()));
  }
  s.unit_time = Seconds(j.number("unit_time_s", 0.0, kMaxUnitTimeS));
  if (!(s.unit_time.count() > 0.0)) bad(source, "unit_time_s", "must be positive");
  s.p_blocking = Watts(j.number("p_blocking_w", 0.0, kMaxBlockingPowerW));
  const std::int64_t nops = 2 * static_cast<std::int64_t>(s.num_stages) * s.num_microbatches;
  if (nops > kMaxStoredOps) bad(source, "num_microbatches", "too many ops");
  return nops;
}

void parse_ops(const JsonObject& j, const std::string& source, std::int64_t nops,
               StoredSolution& s) {
  const auto& ops = array_at(j.required("ops"), source, "ops", static_cast<std::size_t>(nops));
  s.ops.reserve(ops.size());
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const std::string f = fmt::format("ops[{}]", k);
    const auto& o = array_at(ops[k], source, f, 3);
    PipelineOp op;
    op.stage =
        static_cast<int>(JsonObject::check_integer(o[0], source, f + "[0]", 0, s.num_stages - 1));
    if (!o[1].is_string()) bad(source, f + "[1]", "expected \"forward\" or \"backward\"");
    const auto& name = o[1].get_ref<const std::string&>();
    if (name == "forward") {
      op.instruction = Instruction::kForward;
    } else if (name == "backward") {
      op.instruction = Instruction::kBackward;
    } else {
      bad(source, f + "[1]",
          fmt::format("expected \"forward\" or \"backward\", got \"{}\"", printable(name, 40)));
    }
    op.microbatch = static_cast<int>(
        JsonObject::check_integer(o[2], source, f + "[2]", 0, s.num_microbatches - 1));
    s.ops.push_back(op);
  }
}

void parse_stage_order(const JsonObject& j, const std::string& source, std::int64_t nops,
                       StoredSolution& s) {
  const auto& order = array_at(j.required("stage_order"), source, "stage_order",
                               static_cast<std::size_t>(s.num_stages));
  std::vector<char> placed(s.ops.size(), 0);
  for (std::size_t st = 0; st < order.size(); ++st) {
    const std::string f = fmt::format("stage_order[{}]", st);
    const auto& ids = array_at(order[st], source, f);
    std::vector<int> list;
    list.reserve(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const std::string fk = fmt::format("{}[{}]", f, k);
      const auto id = static_cast<int>(JsonObject::check_integer(ids[k], source, fk, 0, nops - 1));
      const auto uid = static_cast<std::size_t>(id);
      if (s.ops[uid].stage != static_cast<int>(st)) {
        bad(source, fk, fmt::format("op {} belongs to stage {}", id, s.ops[uid].stage));
      }
      if (placed[uid]) bad(source, fk, fmt::format("op {} is listed twice", id));
      placed[uid] = 1;
      list.push_back(id);
    }
    s.stage_order.push_back(std::move(list));
  }
  if (std::find(placed.begin(), placed.end(), 0) != placed.end()) {
    bad(source, "stage_order", "does not list every op");
  }
}

void parse_points(const JsonObject& j, const std::string& source, std::int64_t nops,
                  StoredSolution& s) {
  const auto& points = array_at(j.required("points"), source, "points");
  if (points.empty()) bad(source, "points", "no points");
  std::vector<char> has_frequency(s.ops.size(), 0);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const JsonObject p(points[i], source, fmt::format("points[{}]", i));
    PlanPoint pt;
    pt.quant_time = p.integer("quant_time", 0, kMaxQuantizedDuration * 1000);
    pt.time = Seconds(p.number("time_s", 0.0, 1e12));
    pt.energy = Joules(p.number("energy_j", -1e18, 1e18));
    s.points.push_back(pt);
    const std::string f = p.field_path("changes");
    const auto& changes = array_at(p.required("changes"), source, f);
    std::vector<std::pair<int, Megahertz>> list;
    list.reserve(changes.size());
    for (std::size_t k = 0; k < changes.size(); ++k) {
      const std::string fk = fmt::format("{}[{}]", f, k);
      const auto& c = array_at(changes[k], source, fk, 2);
      const auto op =
          static_cast<int>(JsonObject::check_integer(c[0], source, fk + "[0]", 0, nops - 1));
      const auto mhz =
          JsonObject::check_integer(c[1], source, fk + "[1]", 1, kMaxProfileFrequencyMhz);
      has_frequency[static_cast<std::size_t>(op)] = 1;
      list.emplace_back(op, Megahertz(mhz));
    }
    s.changes.push_back(std::move(list));
    if (i == 0 && std::find(has_frequency.begin(), has_frequency.end(), 0) != has_frequency.end()) {
      bad(source, "points[0].changes", "must give every op a frequency");
    }
  }
}

}  // namespace

StoredSolution parse_plans_json(std::string_view text, const std::string& source) {
  const nlohmann::json doc = parse_document(text, source);
  const JsonObject j(doc, source);
  StoredSolution s;
  const std::int64_t nops = parse_header(j, source, s);
  parse_ops(j, source, nops, s);
  parse_stage_order(j, source, nops, s);
  parse_points(j, source, nops, s);
  return s;
}

StoredSolution read_solution(const std::string& dir) {
  const std::string path = dir + "/plans.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("{} not found: --solution must be a directory written by "
                            "'zeus perseus solve --out'",
                            printable(path)));
  }
  return parse_plans_json(read_file(path), path);
}

std::vector<std::vector<std::pair<Instruction, Megahertz>>> stage_frequencies(
    const StoredSolution& solution, std::size_t i) {
  const auto freq = solution.frequencies(i);
  std::vector<std::vector<std::pair<Instruction, Megahertz>>> stages;
  stages.reserve(solution.stage_order.size());
  for (const auto& order : solution.stage_order) {
    auto& list = stages.emplace_back();
    list.reserve(order.size());
    for (const int id : order) {
      const auto k = static_cast<std::size_t>(id);
      list.emplace_back(solution.ops[k].instruction, freq[k]);
    }
  }
  return stages;
}

std::string plan_json(const StoredSolution& solution, std::size_t i, std::string_view target) {
  const auto stages = stage_frequencies(solution, i);
  const auto& p = solution.points.at(i);
  nlohmann::json j;
  j["target"] = std::string(target);
  j["time_s"] = p.time.count();
  j["energy_j"] = p.energy.value();
  j["quant_time"] = p.quant_time;
  j["unit_time_s"] = solution.unit_time.count();
  j["num_stages"] = solution.num_stages;
  j["num_microbatches"] = solution.num_microbatches;
  j["schedule"] = schedule_name(solution.schedule);
  // One line per stage keeps the file readable and diffable.
  std::string out = j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.pop_back();  // the closing brace
  out.pop_back();  // and the newline before it
  out += ",\n \"stages\": [\n";
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::string list = "[";
    for (std::size_t k = 0; k < stages[s].size(); ++k) {
      fmt::format_to(std::back_inserter(list), "{}[\"{}\",{}]", k ? "," : "",
                     instruction_name(stages[s][k].first), stages[s][k].second.value());
    }
    list += "]";
    out += fmt::format("  {{\"stage\": {}, \"frequencies\": {}}}{}\n", s, list,
                       s + 1 < stages.size() ? "," : "");
  }
  out += " ]\n}\n";
  return out;
}

}  // namespace zeus::pipeline_frequency
