#include "util/csv.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus {
namespace {

// Splits one logical record starting at `pos`; advances `pos` and `line` past it.
std::vector<std::string> split_record(std::string_view text, std::size_t& pos, std::size_t& line,
                                      const std::string& source) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  const std::size_t start_line = line;
  while (pos < text.size()) {
    const char c = text[pos];
    if (quoted) {
      if (c == '"') {
        if (pos + 1 < text.size() && text[pos + 1] == '"') {
          cell += '"';
          ++pos;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      ++pos;
      ++line;
      break;
    } else if (c != '\r') {
      cell += c;
    }
    ++pos;
  }
  if (quoted) {
    throw_error(ErrorCode::kParse,
                fmt::format("{}:{}: unterminated quoted field", source, start_line));
  }
  cells.push_back(std::move(cell));
  return cells;
}

bool is_blank(const std::vector<std::string>& cells) {
  return cells.size() == 1 && cells[0].find_first_not_of(" \t") == std::string::npos;
}

}  // namespace

CsvTable CsvTable::parse(std::string_view text, std::string source) {
  // Spreadsheet programs start UTF-8 files with a byte-order mark.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  CsvTable table;
  table.source_ = std::move(source);
  std::size_t pos = 0;
  std::size_t line = 1;
  while (pos < text.size() && table.columns_.empty()) {
    auto header = split_record(text, pos, line, table.source_);
    if (!is_blank(header)) table.columns_ = std::move(header);
  }
  if (table.columns_.empty()) {
    throw_error(ErrorCode::kParse,
                fmt::format("{}: empty file, expected a CSV header line", table.source_));
  }
  for (auto& name : table.columns_) {
    const auto b = name.find_first_not_of(" \t");
    const auto e = name.find_last_not_of(" \t");
    name = b == std::string::npos ? std::string() : name.substr(b, e - b + 1);
  }
  while (pos < text.size()) {
    const std::size_t row_line = line;
    auto cells = split_record(text, pos, line, table.source_);
    if (is_blank(cells)) continue;
    if (cells.size() != table.columns_.size()) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}:{}: expected {} fields like the header, found {}", table.source_,
                              row_line, table.columns_.size(), cells.size()));
    }
    table.rows_.push_back(Row{row_line, std::move(cells)});
  }
  return table;
}

CsvTable CsvTable::read_file(const std::string& path) { return parse(zeus::read_file(path), path); }

bool CsvTable::has_column(std::string_view name) const {
  for (const auto& c : columns_) {
    if (c == name) return true;
  }
  return false;
}

std::size_t CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  throw_error(ErrorCode::kParse,
              fmt::format("{}: missing column '{}' (columns are: {})", source_, name,
                          printable(fmt::format("{}", fmt::join(columns_, ", ")), 200)));
}

void CsvTable::require_columns(const std::vector<std::string>& names) const {
  std::vector<std::string> missing;
  for (const auto& n : names) {
    if (!has_column(n)) missing.push_back(n);
  }
  if (!missing.empty()) {
    throw_error(
        ErrorCode::kParse,
        fmt::format("{}: missing column(s) {} (columns are: {})", source_, fmt::join(missing, ", "),
                    printable(fmt::format("{}", fmt::join(columns_, ", ")), 200)));
  }
}

double CsvTable::as_double(std::size_t row, std::size_t col) const {
  const std::string& s = cell(row, col);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) {
    throw_error(ErrorCode::kParse,
                fmt::format("{}:{}: column '{}': '{}' is not a number", source_, line_of(row),
                            printable(columns_[col]), printable(s)));
  }
  return v;
}

double CsvTable::as_finite_double(std::size_t row, std::size_t col, double min, double max) const {
  const double v = as_double(row, col);
  if (!std::isfinite(v) || v < min || v > max) {
    throw_error(
        ErrorCode::kParse,
        fmt::format("{}:{}: column '{}': '{}' is out of range (must be finite, between {:g} "
                    "and {:g})",
                    source_, line_of(row), printable(columns_[col]), printable(cell(row, col)), min,
                    max));
  }
  return v;
}

long long CsvTable::as_int(std::size_t row, std::size_t col) const {
  const std::string& s = cell(row, col);
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
    throw_error(ErrorCode::kParse,
                fmt::format("{}:{}: column '{}': '{}' is not an integer", source_, line_of(row),
                            printable(columns_[col]), printable(s)));
  }
  return v;
}

std::string csv_escape(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace zeus
