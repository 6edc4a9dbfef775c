#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "util/csv.h"
#include "util/iso8601.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::carbon_aware {
namespace {

// What a unit spelling means: the kind, the canonical unit, and the factor
// that converts a value in it to the canonical unit.
struct Unit {
  SignalKind kind;
  std::string canonical;
  double factor;
  bool operator==(const Unit& o) const {
    return kind == o.kind && canonical == o.canonical && factor == o.factor;
  }
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Parses a unit spelling ("g/kWh", "kg_CO2/kWh", "gCO₂eq/kWh", "GBP/kWh",
// "£/kWh", "$/kWh"); nullopt when it is none of them.
std::optional<Unit> parse_unit(std::string_view text) {
  const std::string s = lower(text);
  const auto slash = s.find("/kwh");
  if (slash == std::string::npos || slash + 4 != s.size()) return std::nullopt;
  const std::string num = s.substr(0, slash);
  const bool co2 =
      num.find("co2") != std::string::npos || num.find("co\xe2\x82\x82") != std::string::npos;
  if (num == "g" || (co2 && num.rfind("g", 0) == 0))
    return Unit{SignalKind::kCarbon, "gCO2/kWh", 1.0};
  if (num == "kg" || (co2 && num.rfind("kg", 0) == 0)) {
    return Unit{SignalKind::kCarbon, "gCO2/kWh", 1000.0};
  }
  if (num == "\xc2\xa3" || num == "gbp") return Unit{SignalKind::kPrice, "GBP/kWh", 1.0};
  if (num == "$" || num == "usd") return Unit{SignalKind::kPrice, "USD/kWh", 1.0};
  if (num == "\xe2\x82\xac" || num == "eur") return Unit{SignalKind::kPrice, "EUR/kWh", 1.0};
  if (num.size() == 3 &&
      std::all_of(num.begin(), num.end(), [](unsigned char c) { return std::isalpha(c) != 0; })) {
    std::string cur(text.substr(0, 3));
    std::transform(cur.begin(), cur.end(), cur.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return Unit{SignalKind::kPrice, cur + "/kWh", 1.0};
  }
  return std::nullopt;
}

// The unit a column header states: "... [kg_CO2/kWh]", or a trailing
// "gCO₂eq/kWh (direct)" style word; nullopt when it states none.
std::optional<Unit> header_unit(const std::string& header) {
  const auto open = header.find('[');
  const auto close = header.find(']');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    return parse_unit(header.substr(open + 1, close - open - 1));
  }
  std::size_t start = 0;
  while (start < header.size()) {
    const auto end = header.find(' ', start);
    const std::string word = header.substr(start, end == std::string::npos ? end : end - start);
    if (auto u = parse_unit(word)) return u;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

Unit resolve_unit(const std::optional<Unit>& stated, const SignalCsvOptions& options,
                  const std::string& source, const std::string& column) {
  if (options.unit.empty()) {
    if (!stated) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: column '{}' does not state its unit; give it (e.g. --unit "
                              "g/kWh, kg/kWh or GBP/kWh)",
                              source, printable(column)));
    }
    return *stated;
  }
  const auto given = parse_unit(options.unit);
  if (!given) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("unit '{}' is not one of g/kWh, kg/kWh or <currency>/kWh (GBP/kWh, "
                            "USD/kWh, EUR/kWh)",
                            printable(options.unit)));
  }
  if (stated && !(*stated == *given)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: column '{}' states its unit, which is not the unit given ({}); "
                            "drop the unit option or fix the file",
                            source, printable(column), printable(options.unit)));
  }
  return *given;
}

struct Shape {
  std::size_t time_col, value_col;
  std::optional<Unit> stated;
  std::optional<std::size_t> duration_col;  // minutes (the Chase trace)
};

Shape detect_shape(const CsvTable& t, const SignalCsvOptions& options) {
  const auto& cols = t.columns();
  if (t.has_column("timestamp") && t.has_column("hist") && t.has_column("duration")) {
    // The Chase code's WattTime trace: g/kWh (WattTime's MOER converted by the
    // Carbon Aware SDK); the controller read `hist`.
    return {t.column("timestamp"), t.column("hist"), Unit{SignalKind::kCarbon, "gCO2/kWh", 1.0},
            t.column("duration")};
  }
  if (t.has_column("Datetime (UTC)")) {
    const std::string want = lower(options.emission_factor);
    if (want != "lifecycle" && want != "direct") {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("emission factor '{}' is neither 'lifecycle' nor 'direct'",
                              printable(options.emission_factor)));
    }
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::string h = lower(cols[c]);
      if (h.find("carbon intensity") == std::string::npos) continue;
      const bool direct = h.find("(direct)") != std::string::npos;
      const bool lca =
          h.find("(lca)") != std::string::npos || h.find("(life cycle)") != std::string::npos;
      if ((want == "direct" && direct) || (want == "lifecycle" && lca)) {
        return {t.column("Datetime (UTC)"), c, header_unit(cols[c]), std::nullopt};
      }
    }
    throw_error(ErrorCode::kParse,
                fmt::format("{}: an ElectricityMaps export without a '{}' carbon-intensity column",
                            t.source(), want));
  }
  if (cols.size() == 2) return {0, 1, header_unit(cols[1]), std::nullopt};
  throw_error(ErrorCode::kParse,
              fmt::format("{}: unknown signal file shape; expected two columns (time,value), an "
                          "ElectricityMaps export, or the Chase trace "
                          "(location,timestamp,duration,value,hist)",
                          t.source()));
}

// "Z", "+00:00" and "+0000" are one spelling of UTC; a naive time another.
std::string offset_class(const std::string& offset) {
  if (offset == "Z" || offset == "+00:00" || offset == "+0000" || offset == "-00:00") return "UTC";
  return offset.empty() ? "no offset" : offset;
}

}  // namespace

GridSignal parse_signal_csv(std::string_view text, const std::string& source,
                            const SignalCsvOptions& options) {
  const CsvTable t = CsvTable::parse(text, source);
  const Shape shape = detect_shape(t, options);
  const Unit unit = resolve_unit(shape.stated, options, source, t.columns()[shape.value_col]);
  if (t.num_rows() < 2) {
    throw_error(ErrorCode::kParse,
                fmt::format("{}: {} row(s); a signal needs at least two (its resolution is the "
                            "step between rows)",
                            source, t.num_rows()));
  }
  std::vector<double> values;
  values.reserve(t.num_rows());
  std::int64_t first = 0, prev = 0, resolution = 0;
  std::string first_offset;
  for (std::size_t r = 0; r < t.num_rows(); ++r) {
    const std::string where = fmt::format("{}:{}", source, t.line_of(r));
    std::string offset;
    const std::int64_t ts =
        parse_iso8601(t.cell(r, shape.time_col),
                      where + ": column '" + printable(t.columns()[shape.time_col]) + "'", &offset);
    if (r == 0) {
      first = ts;
      first_offset = offset;
    } else {
      if (offset_class(offset) != offset_class(first_offset)) {
        throw_error(ErrorCode::kParse,
                    fmt::format("{}: time '{}' has UTC offset '{}' but the first row has '{}'; "
                                "mixed offsets (daylight saving?) are refused: write every time "
                                "in UTC",
                                where, printable(t.cell(r, shape.time_col)), offset_class(offset),
                                offset_class(first_offset)));
      }
      const std::int64_t step = ts - prev;
      if (step == 0) {
        throw_error(ErrorCode::kParse,
                    fmt::format("{}: duplicate time {}", where, format_iso8601(ts)));
      }
      if (step < 0) {
        throw_error(
            ErrorCode::kParse,
            fmt::format("{}: time {} is before the previous row's {}; sort the file by time", where,
                        format_iso8601(ts), format_iso8601(prev)));
      }
      if (r == 1) resolution = step;
      if (step != resolution) {
        throw_error(
            ErrorCode::kParse,
            fmt::format("{}: {} s after the previous row but the file's resolution is {} "
                        "s ({}); fill the gap (missing {} to {}) or resample",
                        where, step, resolution, step > resolution ? "a gap" : "an irregular step",
                        format_iso8601(prev + resolution), format_iso8601(ts)));
      }
    }
    prev = ts;
    const double raw = t.as_double(r, shape.value_col);
    if (!std::isfinite(raw)) {
      throw_error(ErrorCode::kParse, fmt::format("{}: column '{}' is '{}', not a finite number",
                                                 where, printable(t.columns()[shape.value_col]),
                                                 printable(t.cell(r, shape.value_col))));
    }
    if (unit.kind == SignalKind::kCarbon && raw < 0.0) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: carbon intensity {} is negative", where, raw));
    }
    const double value = raw * unit.factor;
    if (!std::isfinite(value)) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}: {} {} is out of range", where, raw, unit.canonical));
    }
    values.push_back(value);
  }
  if (shape.duration_col) {
    for (std::size_t r = 0; r < t.num_rows(); ++r) {
      const double minutes = t.as_double(r, *shape.duration_col);
      if (minutes * 60.0 != static_cast<double>(resolution)) {
        throw_error(ErrorCode::kParse,
                    fmt::format("{}:{}: duration {} min does not match the step between rows "
                                "({} s)",
                                source, t.line_of(r), minutes, resolution));
      }
    }
  }
  return GridSignal(unit.kind, unit.canonical, first, resolution, std::move(values), source);
}

GridSignal read_signal_csv(const std::string& path, const SignalCsvOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("{}: no such signal file (a CSV of carbon intensity or price)", path));
  }
  return parse_signal_csv(zeus::read_file(path), path, options);  // bounded, regular files
}

}  // namespace zeus::carbon_aware
