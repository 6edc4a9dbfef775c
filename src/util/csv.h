// A small CSV reader for the project's input files (traces, profiles). Errors
// name the file, the line and the column, so a user can fix the input.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zeus {

class CsvTable {
 public:
  // Parses text with a header line. Quoted fields ("a,b", "say ""hi""") are
  // supported; blank lines are skipped; every row must have the header's width.
  // `source` names the input in error messages (usually the path).
  static CsvTable parse(std::string_view text, std::string source);
  // Reads (see zeus::read_file: bounded, regular files only) and parses a
  // file; a missing or unreadable file is ErrorCode::kIo. A UTF-8 byte-order
  // mark at the start is skipped.
  static CsvTable read_file(const std::string& path);

  // The references below are into this table: not on a temporary (parse and
  // read_file return by value), where they would dangle; source() then comes
  // out by value.
  const std::vector<std::string>& columns() const& { return columns_; }
  const std::vector<std::string>& columns() const&& = delete;
  std::size_t num_rows() const { return rows_.size(); }
  const std::string& source() const& { return source_; }
  std::string source() && { return std::move(source_); }

  bool has_column(std::string_view name) const;
  // Index of a column; ErrorCode::kParse naming the file and the columns it has.
  std::size_t column(std::string_view name) const;
  // Throws kParse if any of the names is missing, listing all missing ones.
  void require_columns(const std::vector<std::string>& names) const;

  const std::string& cell(std::size_t row, std::size_t col) const& { return rows_[row].cells[col]; }
  const std::string& cell(std::size_t row, std::size_t col) const&& = delete;
  // Line number in the source (1-based) of a row, for messages.
  std::size_t line_of(std::size_t row) const { return rows_[row].line; }
  // Typed access; a malformed number is kParse naming file, line and column.
  // as_double accepts "nan" and "inf" (traces use nan for "never reached").
  double as_double(std::size_t row, std::size_t col) const;
  // A finite number in [min, max], else kParse naming file, line and column.
  double as_finite_double(std::size_t row, std::size_t col,
                          double min = std::numeric_limits<double>::lowest(),
                          double max = std::numeric_limits<double>::max()) const;
  long long as_int(std::size_t row, std::size_t col) const;

 private:
  struct Row {
    std::size_t line;
    std::vector<std::string> cells;
  };
  std::string source_;
  std::vector<std::string> columns_;
  std::vector<Row> rows_;
};

// Quotes a field for CSV output when it needs it.
std::string csv_escape(std::string_view field);

}  // namespace zeus
