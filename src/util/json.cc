#include "util/json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "zeus/util/files.h"

namespace zeus {
namespace {

using nlohmann::json;

std::string type_name(const json& v) {
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

std::string place(const std::string& source, const std::string& field) {
  if (field.empty()) return source;
  return source.empty() ? field : source + ": " + field;
}

[[noreturn]] void fail_at(ErrorCode code, const std::string& source, const std::string& field,
                          const std::string& what) {
  throw FieldError(code, field, fmt::format("{}: {}", place(source, field), what));
}

std::string range_text(double min, double max) {
  const bool has_min = min > std::numeric_limits<double>::lowest();
  const bool has_max = max < std::numeric_limits<double>::max();
  if (has_min && has_max) return fmt::format("between {:g} and {:g}", min, max);
  if (has_min) return fmt::format("at least {:g}", min);
  if (has_max) return fmt::format("at most {:g}", max);
  return "finite";
}

std::string range_text(std::int64_t min, std::int64_t max) {
  const bool has_min = min > std::numeric_limits<std::int64_t>::min();
  const bool has_max = max < std::numeric_limits<std::int64_t>::max();
  if (has_min && has_max) return fmt::format("between {} and {}", min, max);
  if (has_min) return fmt::format("at least {}", min);
  if (has_max) return fmt::format("at most {}", max);
  return "a 64-bit integer";
}

}  // namespace

bool json_nesting_exceeds(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

json parse_json(std::string_view text, std::string_view source) {
  if (json_nesting_exceeds(text)) {
    throw FieldError(ErrorCode::kParse, "",
                     fmt::format("{}: nested deeper than {} levels of arrays and objects", source,
                                 kMaxJsonDepth));
  }
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::out_of_range&) {
    // nlohmann reports a number too large for a double (1e999) this way.
    throw FieldError(ErrorCode::kParse, "",
                     fmt::format("{}: a number is too large to represent", source));
  } catch (const json::parse_error& e) {
    // Line and column from the byte offset; nlohmann's own text is not for users.
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      throw FieldError(ErrorCode::kParse, "", fmt::format("{}: empty, expected JSON", source));
    }
    throw FieldError(ErrorCode::kParse, "",
                     fmt::format("{}: not valid JSON (line {}, column {})", source, line, column));
  } catch (const json::exception&) {
    // nlohmann reports a number beyond double's range (1e400) as out_of_range.
    throw FieldError(
        ErrorCode::kParse, "",
        fmt::format("{}: a number is too large to represent (beyond about 1.8e308)", source));
  }
}

json parse_json_file(const std::string& path) { return parse_json(read_file(path), path); }

namespace {

constexpr std::size_t kExcerptChars = 40;

// Appends a string quoted, only a prefix of it (enough to fill the excerpt),
// escaped by nlohmann (invalid UTF-8 replaced).
void append_string(std::string& out, std::string_view s) {
  const bool cut = s.size() > kExcerptChars;
  std::string shown = json(std::string(cut ? s.substr(0, kExcerptChars) : s))
                          .dump(-1, ' ', true, json::error_handler_t::replace);
  if (cut) shown.pop_back();  // an unfinished string has no closing quote
  out += shown;
}

void append_scalar(std::string& out, const json& v) {
  if (v.is_string()) {
    append_string(out, v.get_ref<const std::string&>());
  } else {
    out += v.dump();  // a number, boolean or null: short
  }
}

// Cuts `text` to the excerpt's length on a UTF-8 character boundary.
std::string shortened(std::string text) {
  if (text.size() <= kExcerptChars) return text;
  std::size_t end = kExcerptChars - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

}  // namespace

std::string json_excerpt(const json& value) {
  // Depth-first with an explicit stack, stopping once the excerpt is full:
  // dump() would recurse once per level and render the whole value.
  struct Open {
    const json* container;
    json::const_iterator next;
  };
  std::string out;
  std::vector<Open> stack;
  const auto enter = [&](const json& v) {
    if (v.is_array() || v.is_object()) {
      out += v.is_array() ? '[' : '{';
      stack.push_back({&v, v.cbegin()});
    } else {
      append_scalar(out, v);
    }
  };
  enter(value);
  while (!stack.empty() && out.size() <= kExcerptChars) {
    Open& top = stack.back();
    if (top.next == top.container->cend()) {
      out += top.container->is_array() ? ']' : '}';
      stack.pop_back();
      continue;
    }
    if (top.next != top.container->cbegin()) out += ',';
    if (top.container->is_object()) {
      append_string(out, top.next.key());
      out += ':';
    }
    const json& child = *top.next;
    ++top.next;
    enter(child);  // may grow the stack: `top` is not used after this
  }
  return shortened(std::move(out));
}

JsonObject::JsonObject(const json& value, std::string source, std::string path)
    : value_(&value), source_(std::move(source)), path_(std::move(path)) {
  if (!value.is_object()) {
    fail_at(ErrorCode::kParse, source_, path_,
            fmt::format("expected an object, got {}", type_name(value)));
  }
}

std::string JsonObject::field_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void JsonObject::fail(ErrorCode code, std::string_view key, const std::string& what) const {
  fail_at(code, source_, field_path(key), what);
}

bool JsonObject::has(std::string_view key) const {
  const auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

const json& JsonObject::required(std::string_view key) const {
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) fail(ErrorCode::kParse, key, "missing");
  return *it;
}

double JsonObject::check_number(const json& v, const std::string& source, const std::string& field,
                                double min, double max) {
  if (!v.is_number()) {
    fail_at(ErrorCode::kParse, source, field,
            fmt::format("expected a number, got {} {}", type_name(v), json_excerpt(v)));
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    fail_at(ErrorCode::kInvalidArgument, source, field,
            fmt::format("{} is out of range: must be {}", json_excerpt(v), range_text(min, max)));
  }
  return d;
}

std::int64_t JsonObject::check_integer(const json& v, const std::string& source,
                                       const std::string& field, std::int64_t min,
                                       std::int64_t max) {
  const auto out_of_range = [&] {
    fail_at(ErrorCode::kInvalidArgument, source, field,
            fmt::format("{} is out of range: must be {}", json_excerpt(v), range_text(min, max)));
  };
  std::int64_t i = 0;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) out_of_range();
    i = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    i = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) {
      fail_at(ErrorCode::kParse, source, field,
              fmt::format("expected an integer, got {}", json_excerpt(v)));
    }
    // 2^63 is exactly representable; anything at or beyond it does not fit.
    if (d >= 9223372036854775808.0 || d < -9223372036854775808.0) out_of_range();
    i = static_cast<std::int64_t>(d);
  } else {
    fail_at(ErrorCode::kParse, source, field,
            fmt::format("expected an integer, got {} {}", type_name(v), json_excerpt(v)));
  }
  if (i < min || i > max) out_of_range();
  return i;
}

double JsonObject::number(std::string_view key, double min, double max) const {
  return check_number(required(key), source_, field_path(key), min, max);
}

std::optional<double> JsonObject::optional_number(std::string_view key, double min,
                                                  double max) const {
  if (!has(key)) return std::nullopt;
  return number(key, min, max);
}

std::int64_t JsonObject::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  return check_integer(required(key), source_, field_path(key), min, max);
}

std::optional<std::int64_t> JsonObject::optional_integer(std::string_view key, std::int64_t min,
                                                         std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

std::string JsonObject::string(std::string_view key, std::size_t max_length) const {
  const json& v = required(key);
  if (!v.is_string()) {
    fail(ErrorCode::kParse, key,
         fmt::format("expected a string, got {} {}", type_name(v), json_excerpt(v)));
  }
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_length) {
    fail(ErrorCode::kInvalidArgument, key,
         fmt::format("too long ({} bytes, at most {})", s.size(), max_length));
  }
  return s;
}

std::optional<std::string> JsonObject::optional_string(std::string_view key,
                                                       std::size_t max_length) const {
  if (!has(key)) return std::nullopt;
  return string(key, max_length);
}

bool JsonObject::boolean(std::string_view key) const {
  const json& v = required(key);
  if (!v.is_boolean()) {
    fail(ErrorCode::kParse, key,
         fmt::format("expected true or false, got {} {}", type_name(v), json_excerpt(v)));
  }
  return v.get<bool>();
}

std::optional<bool> JsonObject::optional_boolean(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return boolean(key);
}

JsonObject JsonObject::object(std::string_view key) const {
  return JsonObject(required(key), source_, field_path(key));
}

namespace {
const json& require_array(const JsonObject& o, std::string_view key) {
  const json& v = o.required(key);
  if (!v.is_array()) {
    fail_at(ErrorCode::kParse, o.source(), o.field_path(key),
            fmt::format("expected an array, got {}", type_name(v)));
  }
  return v;
}
}  // namespace

std::vector<JsonObject> JsonObject::objects(std::string_view key) const {
  const json& arr = require_array(*this, key);
  std::vector<JsonObject> out;
  out.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    out.emplace_back(arr[i], source_, fmt::format("{}[{}]", field_path(key), i));
  }
  return out;
}

std::vector<double> JsonObject::numbers(std::string_view key, double min, double max) const {
  const json& arr = require_array(*this, key);
  std::vector<double> out;
  out.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    out.push_back(
        check_number(arr[i], source_, fmt::format("{}[{}]", field_path(key), i), min, max));
  }
  return out;
}

std::vector<std::int64_t> JsonObject::integers(std::string_view key, std::int64_t min,
                                               std::int64_t max) const {
  const json& arr = require_array(*this, key);
  std::vector<std::int64_t> out;
  out.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    out.push_back(
        check_integer(arr[i], source_, fmt::format("{}[{}]", field_path(key), i), min, max));
  }
  return out;
}

void JsonObject::reject_unknown_keys(std::initializer_list<std::string_view> known) const {
  for (const auto& [k, v] : value_->items()) {
    bool ok = false;
    for (const auto& name : known) ok = ok || name == k;
    if (!ok) {
      // The key is user text: show it escaped and short.
      const std::string shown = json_excerpt(json(k));
      throw FieldError(ErrorCode::kInvalidArgument, field_path(k),
                       fmt::format("{}: unknown field {} (known: {})", place(source_, path_), shown,
                                   fmt::join(known, ", ")));
    }
  }
}

}  // namespace zeus
