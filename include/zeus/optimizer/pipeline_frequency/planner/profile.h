// Perseus inputs: per-stage profiles of forward/backward time and energy at each
// GPU frequency, and the per-(stage, instruction) menu of execution options the
// planner derives from them (Pareto filter on raw energy, quantization to the
// unit time, effective energy). Plain values; safe to share read-only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::pipeline_frequency {

enum class Instruction { kForward, kBackward };

std::string_view instruction_name(Instruction instruction);  // "forward" / "backward"
// Parses "forward"/"backward" (case-insensitive); kInvalidArgument otherwise.
Instruction parse_instruction(std::string_view text);

// One profiled measurement: one instruction of one stage at one GPU frequency.
struct ProfileEntry {
  int stage = 0;
  Instruction instruction = Instruction::kForward;
  Megahertz frequency{0};
  Seconds time{0.0};   // mean duration of one instruction
  Joules energy{0.0};  // mean energy of one instruction
};

// What a profile may contain: finite values in physically possible ranges, so
// nothing derived from them (quantized durations, energies, plans) overflows.
inline constexpr int kMaxProfileStage = 9999;
inline constexpr std::int64_t kMaxProfileFrequencyMhz = 100'000;
inline constexpr double kMaxProfileTimeS = 86'400.0;     // one instruction, one day
inline constexpr double kMaxProfileEnergyJ = 1e9;        // one instruction
inline constexpr double kMaxProfileAveragePowerW = 1e4;  // energy / time of one GPU

// All measurements of one pipeline. Stages are 0..num_stages()-1 and every stage
// has at least one forward and one backward entry (checked on load). A
// (stage, instruction, frequency) measured twice must agree: an identical
// repeat is dropped, a conflicting one is an error.
class StageProfile {
 public:
  // CSV with columns stage,instruction,frequency,time,energy (extra columns are
  // ignored). Bad content is kParse/kInvalidArgument naming file and line;
  // a missing file kNotFound; a directory or special file kInvalidArgument.
  static StageProfile read_file(const std::string& path);
  static StageProfile parse(std::string_view text, std::string source);
  // Validates and indexes entries (same checks as the file readers).
  static StageProfile from_entries(std::vector<ProfileEntry> entries, std::string source);

  int num_stages() const { return num_stages_; }
  const std::vector<ProfileEntry>& entries() const { return entries_; }
  // Entries of one (stage, instruction), in file order.
  std::vector<ProfileEntry> entries_for(int stage, Instruction instruction) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  int num_stages_ = 0;
  std::vector<ProfileEntry> entries_;
};

// One surviving option after filtering and quantization.
struct ExecutionOption {
  std::int64_t duration = 0;  // quantized time: floor(time / unit_time), in units
  Seconds time{0.0};          // measured time
  Joules energy{0.0};         // measured (raw) energy
  Joules effective{0.0};      // energy - P_b * duration * unit_time
  Megahertz frequency{0};
};

// The most unit-time steps one computation may span (time / τ): beyond this
// the cost tables cannot be held, and the planner says to raise --unit-time.
inline constexpr std::int64_t kMaxQuantizedDuration = 1'000'000'000'000LL;

struct MenuOptions {
  Seconds unit_time{0.001};  // τ
  Watts p_blocking{0.0};     // P_b
  bool noise_retry = true;   // artifact rule: retry the Pareto filter with
                             // noise factor 0.95 if <= 3 options survive
};

// The Pareto-optimal, quantized options of one computation type, ascending by
// duration (so descending by frequency). Maps a planned duration back to the
// slowest frequency that meets it.
class OptionMenu {
 public:
  // Filters on raw energy first (the SOSP artifact's order), then quantizes,
  // dedups equal durations keeping the largest energy, then computes effective
  // energy. kInvalidArgument if nothing survives, a duration quantizes to 0 or
  // to more than kMaxQuantizedDuration units.
  static OptionMenu build(const std::vector<ProfileEntry>& entries, const MenuOptions& options);

  const std::vector<ExecutionOption>& options() const { return options_; }
  std::int64_t min_duration() const { return options_.front().duration; }
  std::int64_t max_duration() const { return options_.back().duration; }
  // The slowest option whose duration <= d; the fastest if d is below all.
  const ExecutionOption& option_for(std::int64_t duration) const;
  Megahertz frequency_for(std::int64_t duration) const { return option_for(duration).frequency; }

 private:
  std::vector<ExecutionOption> options_;
};

}  // namespace zeus::pipeline_frequency
