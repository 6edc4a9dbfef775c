#include "zeusd/toml_subset.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::zeusd {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  TomlDocument parse() {
    TomlDocument doc;
    for (;;) {
      skip_blank_lines();
      if (at_end()) break;
      if (peek() == '[') {
        const int line = line_;
        ++pos_;
        skip_spaces();
        const std::string name = bare_name("table name");
        skip_spaces();
        expect(']');
        end_of_line();
        for (const auto& t : doc.tables) {
          if (t.first.name == name) fail(fmt::format("table [{}] appears twice", name));
        }
        doc.tables.push_back({TomlName{name, line}, {}});
        continue;
      }
      const int line = line_;
      const std::string key = bare_name("key");
      if (doc.tables.empty()) fail(fmt::format("key '{}' outside of any [table]", key));
      skip_spaces();
      expect('=');
      skip_spaces();
      TomlValue v = value(0);
      end_of_line();
      auto& entries = doc.tables.back().second;
      for (const auto& e : entries) {
        if (e.first.name == key) fail(fmt::format("key '{}' appears twice in its table", key));
      }
      entries.push_back({TomlName{key, line}, std::move(v)});
    }
    return doc;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw_error(ErrorCode::kParse, fmt::format("{}:{}: {}", source_, line_, why));
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void expect(char c) {
    if (peek() != c) {
      fail(at_end()
               ? fmt::format("expected '{}' but the file ended", c)
               : fmt::format("expected '{}' but found '{}'", c, printable(std::string(1, peek()))));
    }
    ++pos_;
  }
  void skip_spaces() {
    while (!at_end() && (peek() == ' ' || peek() == '\t')) ++pos_;
  }
  void skip_comment() {
    if (peek() == '#') {
      while (!at_end() && peek() != '\n') ++pos_;
    }
  }
  bool newline() {
    if (peek() == '\r' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') ++pos_;
    if (peek() == '\n') {
      ++pos_;
      ++line_;
      return true;
    }
    return false;
  }
  void skip_blank_lines() {
    for (;;) {
      skip_spaces();
      skip_comment();
      if (!newline()) return;
    }
  }
  // Inside arrays: spaces, comments and newlines.
  void skip_whitespace() {
    for (;;) {
      skip_spaces();
      skip_comment();
      if (!newline()) return;
    }
  }
  void end_of_line() {
    skip_spaces();
    skip_comment();
    if (!at_end() && !newline()) {
      fail(fmt::format("unexpected '{}' after the value; one key = value per line",
                       printable(std::string(1, peek()))));
    }
  }
  std::string bare_name(const char* what) {
    const std::size_t start = pos_;
    while (!at_end() &&
           (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '-')) {
      ++pos_;
    }
    if (pos_ == start) {
      fail(fmt::format("expected a bare {} (letters, digits, _ and -)", what));
    }
    return s_.substr(start, pos_ - start);
  }
  TomlValue value(int depth) {
    if (depth > 8) fail("arrays nest too deeply");
    TomlValue v;
    const char c = peek();
    if (c == '"') {
      if (s_.compare(pos_, 3, "\"\"\"") == 0) fail("multi-line strings are not supported here");
      v.text = basic_string();
    } else if (c == '\'') {
      if (s_.compare(pos_, 3, "'''") == 0) fail("multi-line strings are not supported here");
      ++pos_;
      const auto end = s_.find_first_of("'\n", pos_);
      if (end == std::string::npos || s_[end] != '\'') fail("unterminated literal string");
      v.text = s_.substr(pos_, end - pos_);
      pos_ = end + 1;
    } else if (c == '[') {
      v.kind = TomlValue::Kind::kArray;
      ++pos_;
      for (;;) {
        skip_whitespace();
        if (peek() == ']') {
          ++pos_;
          break;
        }
        v.array.push_back(value(depth + 1));
        if (v.array.size() > 4096) fail("array too long");
        skip_whitespace();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        break;
      }
    } else if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = TomlValue::Kind::kInteger;
      const std::size_t start = pos_;
      if (c == '+' || c == '-') ++pos_;
      while (!at_end() && (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '_'))
        ++pos_;
      std::string digits;
      for (std::size_t i = start; i < pos_; ++i) {
        if (s_[i] != '_' && s_[i] != '+') digits.push_back(s_[i]);
      }
      if (!at_end() && (peek() == '.' || peek() == 'e' || peek() == 'E' || peek() == ':')) {
        fail("only whole numbers are supported here");
      }
      const auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), v.integer);
      if (ec != std::errc() || end != digits.data() + digits.size()) {
        fail("malformed or out-of-range integer");
      }
    } else if (c == '{') {
      fail("inline tables are not supported here");
    } else {
      fail(at_end() ? "a value is missing" : "expected a string, an integer or an array");
    }
    return v;
  }
  std::string basic_string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (at_end() || peek() == '\n') fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (at_end()) fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) fail("short \\u escape");
          unsigned cp = 0;
          const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
          if (ec != std::errc() || end != s_.data() + pos_ + 4 || (cp >= 0xD800 && cp < 0xE000)) {
            fail("bad \\u escape");
          }
          pos_ += 4;
          if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default:
          fail(fmt::format("unknown escape \\{}", printable(std::string(1, e))));
      }
    }
  }

  const std::string& s_;
  const std::string& source_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

TomlDocument parse_toml_subset(const std::string& text, const std::string& source) {
  return Parser(text, source).parse();
}

}  // namespace zeus::zeusd
