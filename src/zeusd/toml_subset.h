// The subset of TOML that zeusd's command-override file uses, read without a
// TOML library: [table] headers with bare names, `key = value` lines with
// bare keys, values that are basic ("...", with \" \\ \n \t \r \uXXXX
// escapes) or literal ('...') strings, decimal integers, or arrays of those
// (nested, spanning lines, trailing comma allowed), and # comments. Anything
// else (dotted keys, inline tables, floats, dates, multi-line strings,
// duplicate keys or tables) is kParse naming the source and line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeus::zeusd {

struct TomlValue {
  enum class Kind { kString, kInteger, kArray } kind = Kind::kString;
  std::string text;
  std::int64_t integer = 0;
  std::vector<TomlValue> array;
  bool is_string() const { return kind == Kind::kString; }
  bool is_integer() const { return kind == Kind::kInteger; }
  bool is_array() const { return kind == Kind::kArray; }
};

struct TomlName {
  std::string name;
  int line = 0;
};

struct TomlDocument {
  // Tables in file order, each with its keys in order. Keys before the first
  // table header are refused (the override file has none).
  std::vector<std::pair<TomlName, std::vector<std::pair<TomlName, TomlValue>>>> tables;
};

TomlDocument parse_toml_subset(const std::string& text, const std::string& source);

}  // namespace zeus::zeusd
