// One way to read JSON input (files, HTTP bodies, stored state): parse with a
// message that names the source, never nlohmann's exception text; then read
// fields with their type and range checked before any narrowing. Every error
// is a FieldError naming the place ("profile.json: measurements[2].energy").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/util/error.h"

namespace zeus {

// A JSON value that is missing, of the wrong type (kParse) or out of range
// (kInvalidArgument). field() is the path inside the document ("" for the
// document itself), so an HTTP adapter can list the offending fields.
class FieldError : public Error {
 public:
  FieldError(ErrorCode code, std::string field, const std::string& message)
      : Error(code, message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// The deepest nesting of arrays and objects that untrusted JSON may have.
// nlohmann's parser is iterative, but copying, comparing and serializing a
// value recurse once per level, so a body of a few hundred kilobytes nested
// a few hundred thousand levels deep would overflow the stack later. No
// document this project reads comes near this depth.
inline constexpr std::size_t kMaxJsonDepth = 256;

// True when `text` nests arrays and objects deeper than `max_depth` (a scan
// of the bytes outside strings, without parsing). For valid JSON this is the
// exact depth; for invalid JSON the answer does not matter (the parse fails).
// Parsers that call nlohmann directly check this first.
bool json_nesting_exceeds(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

// Parses `text`. kParse naming `source` and the line and column on bad JSON,
// and on JSON nested deeper than kMaxJsonDepth.
nlohmann::json parse_json(std::string_view text, std::string_view source);
// Reads the file (bounded, regular files only: see read_file) and parses it.
nlohmann::json parse_json_file(const std::string& path);

// A short, printable rendering of a JSON value for messages (at most ~40
// characters, control characters escaped). It renders only the prefix it
// shows, without recursion, so quoting a huge or deeply nested untrusted
// value costs no more than quoting a small one.
std::string json_excerpt(const nlohmann::json& value);

// Read access to one JSON object. `source` names the document ("plans.json",
// "request body"); `path` is where the object sits in it ("" at the top).
class JsonObject {
 public:
  // FieldError(kParse) unless `value` is an object. `value` must outlive this.
  JsonObject(const nlohmann::json& value, std::string source, std::string path = {});

  bool has(std::string_view key) const;  // present and not null
  // The raw value; FieldError(kParse) if absent or null.
  const nlohmann::json& required(std::string_view key) const;

  // A finite number in [min, max].
  double number(std::string_view key, double min = std::numeric_limits<double>::lowest(),
                double max = std::numeric_limits<double>::max()) const;
  std::optional<double> optional_number(std::string_view key,
                                        double min = std::numeric_limits<double>::lowest(),
                                        double max = std::numeric_limits<double>::max()) const;
  // An integer in [min, max] (a float with an integral value is accepted).
  std::int64_t integer(std::string_view key,
                       std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  std::optional<std::int64_t> optional_integer(
      std::string_view key, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
      std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  // A string of at most max_length bytes.
  std::string string(std::string_view key, std::size_t max_length = 4096) const;
  std::optional<std::string> optional_string(std::string_view key,
                                             std::size_t max_length = 4096) const;
  bool boolean(std::string_view key) const;
  std::optional<bool> optional_boolean(std::string_view key) const;

  JsonObject object(std::string_view key) const;
  // The elements of an array of objects / numbers / integers, each checked.
  std::vector<JsonObject> objects(std::string_view key) const;
  std::vector<double> numbers(std::string_view key,
                              double min = std::numeric_limits<double>::lowest(),
                              double max = std::numeric_limits<double>::max()) const;
  std::vector<std::int64_t> integers(
      std::string_view key, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
      std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;

  // FieldError(kInvalidArgument) naming the first key not in `known`.
  void reject_unknown_keys(std::initializer_list<std::string_view> known) const;

  // "path.key" (or "key" at the top), as used in messages and FieldError::field().
  std::string field_path(std::string_view key) const;
  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }
  const nlohmann::json& value() const { return *value_; }

  // Checks one value (not necessarily inside an object) the same way; `field`
  // is its path. Exposed for arrays at the top level of a document.
  static double check_number(const nlohmann::json& v, const std::string& source,
                             const std::string& field, double min, double max);
  static std::int64_t check_integer(const nlohmann::json& v, const std::string& source,
                                    const std::string& field, std::int64_t min, std::int64_t max);

 private:
  [[noreturn]] void fail(ErrorCode code, std::string_view key, const std::string& what) const;

  const nlohmann::json* value_;
  std::string source_;
  std::string path_;
};

}  // namespace zeus
