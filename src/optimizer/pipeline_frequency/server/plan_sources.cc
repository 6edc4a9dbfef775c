#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "util/json.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::pipeline_frequency {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxPlanFileBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxNameLength = 64;
constexpr std::int64_t kMaxFrequencyMhz = 100'000;

// The tokens of the one Python literal shape lowtime writes.
enum class Token { kOpenList, kCloseList, kOpenTuple, kCloseTuple, kComma, kString, kInt, kEnd };

// A strict scanner and recursive-descent reader for nested lists/tuples of
// (string, int) pairs. Only three levels deep by construction, so its stack
// use is bounded whatever the input.
class LowtimeReader {
 public:
  LowtimeReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  LowtimePlan read() {
    LowtimePlan plan;
    next();
    const Token open = expect_open("the plan (a list with one list per stage)");
    bool trailing = false;
    while (!closes(open)) {
      plan.stages.push_back(read_stage(plan.stages.size()));
      trailing = separator(open);
    }
    check_tuple(open, plan.stages.size(), trailing);
    next();
    if (token_ != Token::kEnd) fail("unexpected text after the plan's closing bracket");
    if (plan.stages.empty()) fail("the plan lists no stages");
    plan.iteration = iteration_;
    plan.energy_j = energy_;
    return plan;
  }

 private:
  std::vector<ScheduleEntry> read_stage(std::size_t index) {
    const Token open =
        expect_open(fmt::format("stage {}'s list of (instruction, frequency)", index));
    std::vector<ScheduleEntry> entries;
    bool trailing = false;
    while (!closes(open)) {
      entries.push_back(read_pair());
      trailing = separator(open);
    }
    check_tuple(open, entries.size(), trailing);
    if (entries.empty()) fail(fmt::format("stage {} has no instructions", index));
    next();
    return entries;
  }

  ScheduleEntry read_pair() {
    const Token open = expect_open("an (instruction, frequency) pair");
    if (token_ != Token::kString) fail("expected the instruction name as a quoted string");
    ScheduleEntry e;
    e.instruction = string_;
    next();
    if (token_ != Token::kComma) fail("expected ',' between the instruction and its frequency");
    next();
    if (token_ != Token::kInt) fail("expected the frequency as a non-negative integer (MHz)");
    e.frequency = Megahertz(int_);
    next();
    if (token_ == Token::kComma) next();
    if (!closes(open)) fail("expected the end of the (instruction, frequency) pair");
    next();
    return e;
  }

  Token expect_open(const std::string& what) {
    if (token_ != Token::kOpenList && token_ != Token::kOpenTuple) {
      fail(fmt::format("expected {} starting with '[' or '('", what));
    }
    const Token open = token_;
    next();
    return open;
  }
  bool closes(Token open) const {
    return (open == Token::kOpenList && token_ == Token::kCloseList) ||
           (open == Token::kOpenTuple && token_ == Token::kCloseTuple);
  }
  // After an element: ',' (then maybe the close) or the close. Returns
  // whether a comma was read.
  bool separator(Token open) {
    if (token_ == Token::kComma) {
      next();
      return true;
    }
    if (!closes(open))
      fail(open == Token::kOpenList ? "expected ',' or ']'" : "expected ',' or ')'");
    return false;
  }
  // "(x)" is x in parentheses, not a tuple: Python would not read a list there.
  void check_tuple(Token open, std::size_t items, bool trailing) {
    if (open == Token::kOpenTuple && items == 1 && !trailing) {
      fail("a one-element tuple needs a trailing comma: '(x,)'");
    }
  }

  void next() {
    skip_space_and_comments();
    token_start_ = pos_;
    if (pos_ >= text_.size()) {
      token_ = Token::kEnd;
      return;
    }
    const char c = text_[pos_];
    switch (c) {
      case '[':
        token_ = Token::kOpenList;
        ++pos_;
        return;
      case ']':
        token_ = Token::kCloseList;
        ++pos_;
        return;
      case '(':
        token_ = Token::kOpenTuple;
        ++pos_;
        return;
      case ')':
        token_ = Token::kCloseTuple;
        ++pos_;
        return;
      case ',':
        token_ = Token::kComma;
        ++pos_;
        return;
      case '\'':
      case '"':
        read_string(c);
        return;
      default:
        break;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      read_int();
      return;
    }
    if (c == '-') fail("a frequency cannot be negative");
    fail(
        fmt::format("unexpected '{}': only lists, tuples, quoted names and integers may appear "
                    "(the file is read as data, never run)",
                    printable(text_.substr(pos_, 1))));
  }

  void read_string(char quote) {
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const auto u = static_cast<unsigned char>(text_[pos_]);
      if (text_[pos_] == '\\') fail("escapes are not allowed in instruction names");
      if (u < 0x20 || u >= 0x7f) fail("instruction names must be printable ASCII on one line");
      ++pos_;
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    string_ = std::string(text_.substr(start, pos_ - start));
    ++pos_;
    if (string_.empty() || string_.size() > kMaxNameLength) {
      fail(fmt::format("instruction names must have 1 to {} characters", kMaxNameLength));
    }
    token_ = Token::kString;
  }

  void read_int() {
    std::string digits;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      if (text_[pos_] == '_') {
        // Python: an underscore only between digits.
        if (pos_ + 1 >= text_.size() ||
            !std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
          fail("'_' in a number must stand between digits");
        }
      } else {
        digits.push_back(text_[pos_]);
      }
      ++pos_;
    }
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      fail("frequencies must be decimal integers");
    }
    if (digits.size() > 1 && digits.front() == '0' &&
        digits.find_first_not_of('0') != std::string::npos) {
      fail("leading zeros are not allowed in a decimal integer");
    }
    if (digits.size() > 9) fail(fmt::format("frequency {} MHz is out of range", digits));
    std::int64_t v = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (v > kMaxFrequencyMhz) {
      fail(fmt::format("frequency {} MHz is out of range (at most {})", v, kMaxFrequencyMhz));
    }
    int_ = v;
    token_ = Token::kInt;
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        const auto end = text_.find('\n', pos_);
        comment(text_.substr(pos_ + 1, end == std::string_view::npos ? end : end - pos_ - 1));
        pos_ = end == std::string_view::npos ? text_.size() : end + 1;
      } else {
        break;
      }
    }
  }

  // lowtime's trailer: "# Iteration N total cost with P2P: X".
  void comment(std::string_view c) {
    constexpr std::string_view kIteration = " Iteration ";
    if (c.substr(0, kIteration.size()) != kIteration) return;
    c.remove_prefix(kIteration.size());
    int n = 0;
    const auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), n);
    if (ec != std::errc()) return;
    iteration_ = n;
    constexpr std::string_view kEnergy = " total cost with P2P: ";
    const std::string_view rest(p, static_cast<std::size_t>(c.data() + c.size() - p));
    if (rest.substr(0, kEnergy.size()) == kEnergy) {
      const std::string number(rest.substr(kEnergy.size()));
      char* end = nullptr;
      const double e = std::strtod(number.c_str(), &end);
      if (end != number.c_str() && std::isfinite(e)) energy_ = e;
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1, column = 1;
    const std::size_t at = std::min(token_start_ < pos_ ? pos_ : token_start_, text_.size());
    for (std::size_t i = 0; i < at; ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw_error(ErrorCode::kParse,
                fmt::format("{}:{}:{}: {} (expected lowtime's plan format: a list with one list "
                            "of ('forward'|'backward', MHz) pairs per stage)",
                            source_, line, column, what));
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  std::size_t token_start_ = 0;
  Token token_ = Token::kEnd;
  std::string string_;
  std::int64_t int_ = 0;
  std::optional<int> iteration_;
  std::optional<double> energy_;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

LowtimePlan parse_lowtime_plan(std::string_view text, const std::string& source) {
  return LowtimeReader(text, source).read();
}

LowtimePlan read_lowtime_plan(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound, fmt::format("plan file {} not found", printable(path)));
  }
  if (!ends_with(path, ".py")) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is not a lowtime plan file (freqs_pipeline_NNNNN.py)", printable(path)));
  }
  return parse_lowtime_plan(read_file(path, kMaxPlanFileBytes), path);
}

StagePlan parse_plan_json(std::string_view text, const std::string& source) {
  const auto doc = parse_json(text, source);
  const JsonObject o(doc, source);
  StagePlan plan;
  for (const auto& stage : o.objects("stages")) {
    const auto index = stage.integer("stage", 0, 1'000'000);
    if (index != static_cast<std::int64_t>(plan.size())) {
      throw FieldError(ErrorCode::kInvalidArgument, stage.field_path("stage"),
                       fmt::format("{}: {}: stages must be listed in order 0, 1, ...", source,
                                   stage.field_path("stage")));
    }
    const auto& list = stage.required("frequencies");
    const std::string field = stage.field_path("frequencies");
    if (!list.is_array() || list.empty()) {
      throw FieldError(ErrorCode::kParse, field,
                       fmt::format("{}: {}: expected a non-empty list of pairs", source, field));
    }
    auto& entries = plan.emplace_back();
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string f = fmt::format("{}[{}]", field, k);
      const auto& pair = list[k];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() ||
          pair[0].get_ref<const std::string&>().size() > kMaxNameLength) {
        throw FieldError(ErrorCode::kParse, f,
                         fmt::format("{}: {}: expected [instruction, MHz]", source, f));
      }
      entries.push_back(ScheduleEntry{
          pair[0].get<std::string>(),
          Megahertz(JsonObject::check_integer(pair[1], source, f + "[1]", 0, kMaxFrequencyMhz))});
    }
  }
  if (plan.empty()) {
    throw FieldError(ErrorCode::kInvalidArgument, "stages",
                     fmt::format("{}: stages: the plan lists no stages", source));
  }
  return plan;
}

StagePlan stage_plan(const pipeline_frequency::StoredSolution& solution, std::size_t i) {
  StagePlan plan;
  for (const auto& stage : pipeline_frequency::stage_frequencies(solution, i)) {
    auto& entries = plan.emplace_back();
    entries.reserve(stage.size());
    for (const auto& [instruction, mhz] : stage) {
      entries.push_back(
          ScheduleEntry{std::string(pipeline_frequency::instruction_name(instruction)), mhz});
    }
  }
  return plan;
}

std::string frontier_file(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? path + "/plans.json" : path;
}

SolutionKind solution_kind(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("solution {} not found: give a lowtime plan file "
                            "(freqs_pipeline_NNNNN.py), a 'zeus perseus plan' JSON file, or a "
                            "'zeus perseus solve' output directory",
                            printable(path)));
  }
  if (fs::is_directory(path, ec)) {
    if (!fs::exists(path + "/plans.json", ec)) {
      throw_error(ErrorCode::kNotFound,
                  fmt::format("{} has no plans.json: is it a 'zeus perseus solve --out' directory?",
                              printable(path)));
    }
    return SolutionKind::kFrontier;
  }
  if (ends_with(path, ".py")) return SolutionKind::kLowtimePlan;
  if (fs::path(path).filename() == "plans.json") return SolutionKind::kFrontier;
  if (ends_with(path, ".json")) {
    // A frontier names its format; a plan has "stages".
    const auto doc = parse_json_file(path);
    if (doc.is_object() && doc.contains("format")) return SolutionKind::kFrontier;
    if (doc.is_object() && doc.contains("stages")) return SolutionKind::kPlan;
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("{} is neither a lowtime plan file (.py), a plan from 'zeus perseus "
                          "plan' nor a frontier from 'zeus perseus solve' (plans.json)",
                          printable(path)));
}

}  // namespace zeus::pipeline_frequency
