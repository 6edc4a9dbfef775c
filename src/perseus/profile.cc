#include "zeus/perseus/profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "zeus/util/csv.h"
#include "zeus/util/error.h"

namespace zeus::perseus {

std::string_view instruction_name(Instruction instruction) {
  return instruction == Instruction::kForward ? "forward" : "backward";
}

Instruction parse_instruction(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "forward") return Instruction::kForward;
  if (lower == "backward") return Instruction::kBackward;
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("unknown instruction '{}': expected 'forward' or 'backward'", text));
}

namespace {

StageProfile from_csv(const CsvTable& table) {
  table.require_columns({"stage", "instruction", "frequency", "time", "energy"});
  const std::size_t c_stage = table.column("stage"), c_instr = table.column("instruction"),
                    c_freq = table.column("frequency"), c_time = table.column("time"),
                    c_energy = table.column("energy");
  std::vector<ProfileEntry> entries;
  entries.reserve(table.num_rows());
  for (std::size_t r = 0; r < table.num_rows(); ++r) {
    const auto where = fmt::format("{}:{}", table.source(), table.line_of(r));
    ProfileEntry e;
    const long long stage = table.as_int(r, c_stage);
    if (stage < 0 || stage > 100000) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: stage {} is out of range (0..100000)", where, stage));
    }
    e.stage = static_cast<int>(stage);
    try {
      e.instruction = parse_instruction(table.cell(r, c_instr));
    } catch (const Error& err) {
      throw_error(ErrorCode::kParse, fmt::format("{}: {}", where, err.what()));
    }
    e.frequency = Megahertz(table.as_int(r, c_freq));
    e.time_s = table.as_double(r, c_time);
    e.energy_j = table.as_double(r, c_energy);
    if (!(e.time_s > 0.0) || !std::isfinite(e.time_s)) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: time must be a positive number of seconds, got {}", where,
                              table.cell(r, c_time)));
    }
    if (!std::isfinite(e.energy_j) || e.energy_j < 0.0) {
      throw_error(ErrorCode::kParse, fmt::format("{}: energy must be a non-negative number of "
                                                 "joules, got {}",
                                                 where, table.cell(r, c_energy)));
    }
    if (e.frequency.value() <= 0) {
      throw_error(ErrorCode::kParse, fmt::format("{}: frequency must be positive MHz, got {}",
                                                 where, table.cell(r, c_freq)));
    }
    entries.push_back(e);
  }
  return StageProfile::from_entries(std::move(entries), table.source());
}

}  // namespace

StageProfile StageProfile::read_file(const std::string& path) {
  return from_csv(CsvTable::read_file(path));
}

StageProfile StageProfile::parse(std::string_view text, std::string source) {
  return from_csv(CsvTable::parse(text, std::move(source)));
}

StageProfile StageProfile::from_entries(std::vector<ProfileEntry> entries, std::string source) {
  StageProfile p;
  p.source_ = std::move(source);
  if (entries.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: the profile has no measurements", p.source_));
  }
  int max_stage = 0;
  for (const auto& e : entries) {
    if (e.stage < 0) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: negative stage {}", p.source_, e.stage));
    }
    if (!(e.time_s > 0.0) || !std::isfinite(e.time_s) || !std::isfinite(e.energy_j)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: stage {} has a non-positive or non-finite time/energy",
                              p.source_, e.stage));
    }
    max_stage = std::max(max_stage, e.stage);
  }
  std::vector<int> seen(static_cast<std::size_t>(max_stage + 1) * 2, 0);
  for (const auto& e : entries) {
    seen[static_cast<std::size_t>(e.stage) * 2 + (e.instruction == Instruction::kForward ? 0 : 1)] =
        1;
  }
  for (int s = 0; s <= max_stage; ++s) {
    for (int k = 0; k < 2; ++k) {
      if (!seen[static_cast<std::size_t>(s) * 2 + static_cast<std::size_t>(k)]) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: stage {} has no {} measurements; stages must be 0..{} and "
                                "each needs forward and backward rows",
                                p.source_, s, k == 0 ? "forward" : "backward", max_stage));
      }
    }
  }
  p.num_stages_ = max_stage + 1;
  p.entries_ = std::move(entries);
  return p;
}

std::vector<ProfileEntry> StageProfile::entries_for(int stage, Instruction instruction) const {
  std::vector<ProfileEntry> out;
  for (const auto& e : entries_) {
    if (e.stage == stage && e.instruction == instruction) out.push_back(e);
  }
  return out;
}

namespace {

// Python's float floor division (exact floor of the real quotient), so that
// quantization matches lowtime's `int(real_time // unit_time)` bit for bit.
std::int64_t python_floor_div(double x, double y) {
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0.0 && ((y < 0) != (mod < 0))) div -= 1.0;
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return static_cast<std::int64_t>(floordiv);
}

std::vector<ExecutionOption> filter_options(const std::vector<ProfileEntry>& entries,
                                            const MenuOptions& options, double noise) {
  std::vector<ExecutionOption> kept;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& a = entries[i];
    bool dominated = false;
    for (std::size_t j = 0; j < entries.size() && !dominated; ++j) {
      const auto& b = entries[j];
      dominated = j != i && b.time_s < a.time_s * noise && b.energy_j < a.energy_j * noise;
    }
    if (dominated) continue;
    ExecutionOption o;
    o.time_s = a.time_s;
    o.energy_j = a.energy_j;
    o.frequency = a.frequency;
    o.duration = python_floor_div(a.time_s, options.unit_time_s);
    kept.push_back(o);
  }
  // Dedup by quantized time: keep the largest energy (the closest to the floor).
  std::map<std::int64_t, ExecutionOption> by_duration;
  for (const auto& o : kept) {
    auto [it, inserted] = by_duration.emplace(o.duration, o);
    if (!inserted && o.energy_j > it->second.energy_j) it->second = o;
  }
  std::vector<ExecutionOption> out;
  for (auto& [d, o] : by_duration) {
    o.effective_j =
        o.energy_j - options.p_blocking.value() * static_cast<double>(d) * options.unit_time_s;
    out.push_back(o);
  }
  return out;
}

}  // namespace

OptionMenu OptionMenu::build(const std::vector<ProfileEntry>& entries, const MenuOptions& options) {
  if (!(options.unit_time_s > 0.0) || !std::isfinite(options.unit_time_s)) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("unit time must be a positive number of seconds, got {}", options.unit_time_s));
  }
  if (entries.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "no profile entries for this computation");
  }
  OptionMenu menu;
  menu.options_ = filter_options(entries, options, 1.0);
  if (options.noise_retry && menu.options_.size() <= 3) {
    auto retry = filter_options(entries, options, 0.95);
    if (retry.size() > menu.options_.size()) menu.options_ = std::move(retry);
  }
  if (menu.options_.front().duration < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("unit time {} s is longer than a profiled computation ({} s): pick a "
                            "smaller --unit-time",
                            options.unit_time_s, menu.options_.front().time_s));
  }
  return menu;
}

const ExecutionOption& OptionMenu::option_for(std::int64_t duration) const {
  auto it =
      std::upper_bound(options_.begin(), options_.end(), duration,
                       [](std::int64_t d, const ExecutionOption& o) { return d < o.duration; });
  if (it == options_.begin()) return options_.front();
  return *std::prev(it);
}

}  // namespace zeus::perseus
