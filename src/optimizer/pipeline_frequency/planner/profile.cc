#include "zeus/optimizer/pipeline_frequency/planner/profile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "util/csv.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

std::string_view instruction_name(Instruction instruction) {
  return instruction == Instruction::kForward ? "forward" : "backward";
}

Instruction parse_instruction(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "forward") return Instruction::kForward;
  if (lower == "backward") return Instruction::kBackward;
  throw_error(
      ErrorCode::kInvalidArgument,
      fmt::format("unknown instruction '{}': expected 'forward' or 'backward'", printable(text)));
}

namespace {

// The first problem with one entry's values, or "" if it is sensible.
std::string entry_problem(const ProfileEntry& e) {
  if (e.stage < 0 || e.stage > kMaxProfileStage) {
    return fmt::format("stage {} is out of range (0..{})", e.stage, kMaxProfileStage);
  }
  if (e.frequency.value() <= 0 || e.frequency.value() > kMaxProfileFrequencyMhz) {
    return fmt::format("frequency must be 1..{} MHz, got {}", kMaxProfileFrequencyMhz,
                       e.frequency.value());
  }
  const double t = e.time.count(), j = e.energy.value();
  if (!std::isfinite(t) || !(t > 0.0) || t > kMaxProfileTimeS) {
    return fmt::format("time must be a positive number of seconds up to {:g}, got {:g}",
                       kMaxProfileTimeS, t);
  }
  if (!std::isfinite(j) || j < 0.0 || j > kMaxProfileEnergyJ) {
    return fmt::format("energy must be a non-negative number of joules up to {:g}, got {:g}",
                       kMaxProfileEnergyJ, j);
  }
  if (j / t > kMaxProfileAveragePowerW) {
    return fmt::format(
        "{:g} J in {:g} s is an average power of {:g} W, more than one GPU draws "
        "(at most {:g} W); check the units (time in s, energy in J)",
        j, t, j / t, kMaxProfileAveragePowerW);
  }
  return {};
}

std::size_t slot(const ProfileEntry& e) {
  return static_cast<std::size_t>(e.stage) * 2 + (e.instruction == Instruction::kForward ? 0 : 1);
}

using Key = std::tuple<int, int, std::int64_t>;  // stage, instruction, MHz
Key key_of(const ProfileEntry& e) {
  return {e.stage, e.instruction == Instruction::kForward ? 0 : 1, e.frequency.value()};
}

StageProfile from_csv(const CsvTable& table) {
  table.require_columns({"stage", "instruction", "frequency", "time", "energy"});
  const std::size_t c_stage = table.column("stage"), c_instr = table.column("instruction"),
                    c_freq = table.column("frequency"), c_time = table.column("time"),
                    c_energy = table.column("energy");
  std::vector<ProfileEntry> entries;
  entries.reserve(table.num_rows());
  std::map<Key, std::size_t> first_row;  // for duplicates: the row that came first
  for (std::size_t r = 0; r < table.num_rows(); ++r) {
    const auto where = fmt::format("{}:{}", table.source(), table.line_of(r));
    ProfileEntry e;
    const long long stage = table.as_int(r, c_stage);
    if (stage < 0 || stage > kMaxProfileStage) {
      throw_error(ErrorCode::kParse, fmt::format("{}: stage {} is out of range (0..{})", where,
                                                 stage, kMaxProfileStage));
    }
    e.stage = static_cast<int>(stage);
    try {
      e.instruction = parse_instruction(table.cell(r, c_instr));
    } catch (const Error&) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: unknown instruction '{}': expected 'forward' or 'backward'",
                              where, printable(table.cell(r, c_instr))));
    }
    const long long mhz = table.as_int(r, c_freq);
    if (mhz <= 0 || mhz > kMaxProfileFrequencyMhz) {
      throw_error(ErrorCode::kParse, fmt::format("{}: frequency must be 1..{} MHz, got {}", where,
                                                 kMaxProfileFrequencyMhz, mhz));
    }
    e.frequency = Megahertz(mhz);
    e.time = Seconds(table.as_finite_double(r, c_time));
    e.energy = Joules(table.as_finite_double(r, c_energy));
    if (const auto problem = entry_problem(e); !problem.empty()) {
      throw_error(ErrorCode::kParse, fmt::format("{}: {}", where, problem));
    }
    const auto [it, inserted] = first_row.emplace(key_of(e), entries.size());
    if (!inserted) {
      const ProfileEntry& before = entries[it->second];
      if (before.time == e.time && before.energy == e.energy) continue;  // a harmless repeat
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: stage {} {} at {} MHz is measured twice with different "
                              "values (also on an earlier line: {:g} s, {:g} J); keep one row",
                              where, e.stage, instruction_name(e.instruction), mhz,
                              before.time.count(), before.energy.value()));
    }
    entries.push_back(e);
  }
  return StageProfile::from_entries(std::move(entries), table.source());
}

}  // namespace

StageProfile StageProfile::read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound, fmt::format("profile {}: no such file", printable(path)));
  }
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
  std::map<Key, std::size_t> seen_key;
  std::vector<ProfileEntry> kept;
  kept.reserve(entries.size());
  for (const auto& e : entries) {
    if (const auto problem = entry_problem(e); !problem.empty()) {
      throw_error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", p.source_, problem));
    }
    const auto [it, inserted] = seen_key.emplace(key_of(e), kept.size());
    if (!inserted) {
      const auto& before = kept[it->second];
      if (before.time == e.time && before.energy == e.energy) continue;
      throw_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: stage {} {} at {} MHz is measured twice with different values",
                      p.source_, e.stage, instruction_name(e.instruction), e.frequency.value()));
    }
    max_stage = std::max(max_stage, e.stage);
    kept.push_back(e);
  }
  std::vector<int> seen(static_cast<std::size_t>(max_stage + 1) * 2, 0);
  for (const auto& e : kept) seen[slot(e)] = 1;
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
  p.entries_ = std::move(kept);
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
// Callers bound x / y by kMaxQuantizedDuration first, so the cast is exact.
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
  const double tau = options.unit_time.count();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& a = entries[i];
    bool dominated = false;
    for (std::size_t j = 0; j < entries.size() && !dominated; ++j) {
      const auto& b = entries[j];
      dominated = j != i && b.time.count() < a.time.count() * noise &&
                  b.energy.value() < a.energy.value() * noise;
    }
    if (dominated) continue;
    if (!(a.time.count() / tau <= static_cast<double>(kMaxQuantizedDuration))) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("unit time {:g} s splits a {:g} s computation into more than {} "
                              "steps: pick a larger --unit-time",
                              tau, a.time.count(), kMaxQuantizedDuration));
    }
    ExecutionOption o;
    o.time = a.time;
    o.energy = a.energy;
    o.frequency = a.frequency;
    o.duration = python_floor_div(a.time.count(), tau);
    kept.push_back(o);
  }
  // Dedup by quantized time: keep the largest energy (the closest to the floor).
  std::map<std::int64_t, ExecutionOption> by_duration;
  for (const auto& o : kept) {
    auto [it, inserted] = by_duration.emplace(o.duration, o);
    if (!inserted && o.energy > it->second.energy) it->second = o;
  }
  std::vector<ExecutionOption> out;
  for (auto& [d, o] : by_duration) {
    o.effective = o.energy - options.p_blocking * Seconds(static_cast<double>(d) * tau);
    out.push_back(o);
  }
  return out;
}

}  // namespace

OptionMenu OptionMenu::build(const std::vector<ProfileEntry>& entries, const MenuOptions& options) {
  const double tau = options.unit_time.count();
  if (!(tau > 0.0) || !std::isfinite(tau)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("unit time must be a positive number of seconds, got {:g}", tau));
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
                fmt::format("unit time {:g} s is longer than a profiled computation ({:g} s): "
                            "pick a smaller --unit-time",
                            tau, menu.options_.front().time.count()));
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

}  // namespace zeus::pipeline_frequency
