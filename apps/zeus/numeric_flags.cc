#include "numeric_flags.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "util/text.h"

namespace zeus::cli {
namespace {

// The value of a token that reads wholly as a number (strtod's grammar, which
// CLI11's conversion follows); nullopt for anything else.
std::optional<double> number_in(const std::string& token) {
  const char* begin = token.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin || *end != '\0') return std::nullopt;
  return value;
}

std::string finite_number(std::string& token) {
  const auto value = number_in(token);
  if (!value || std::isfinite(*value)) return {};  // not a number: CLI11's conversion says so
  return "must be a finite number, got " + printable(token);
}

std::string not_nan(std::string& token) {
  const auto value = number_in(token);
  if (!value || !std::isnan(*value)) return {};
  return "must be a number, got " + printable(token);
}

std::set<const CLI::Option*>& infinity_allowed() {
  static std::set<const CLI::Option*> options;
  return options;
}

}  // namespace

CLI::Option* allow_infinity(CLI::Option* option) {
  infinity_allowed().insert(option);
  return option;
}

void require_finite_numbers(CLI::App& app) {
  const CLI::Validator finite(finite_number, "", "FINITE");
  const CLI::Validator number(not_nan, "", "NOT_NAN");
  for (CLI::Option* opt : app.get_options()) {
    if (!opt->get_type_name().starts_with("FLOAT")) continue;
    opt->check(infinity_allowed().contains(opt) ? number : finite);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    require_finite_numbers(*sub);
  }
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& token) -> std::string {
        const auto value = number_in(token);
        if (!value) return {};
        if (std::isfinite(*value) && *value > 0) return {};
        return "must be a finite number greater than 0, got " + printable(token);
      },
      "POSITIVE", "POSITIVE");
}

}  // namespace zeus::cli
