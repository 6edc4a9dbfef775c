// The checks every numeric flag of the zeus CLI shares, so that no command
// has to remember them: finiteness, applied to every floating-point option by
// main(), and validators for the usual ranges, whose messages name the value.
#pragma once

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Adds the finiteness check to every floating-point option of `app` and its
// subcommands, however deep: "nan", "inf" and "1e999" convert to doubles in
// CLI11, and its Range validators let NaN through (every comparison with NaN
// is false). Called once, after every command registered its options.
void require_finite_numbers(CLI::App& app);

// Marks an option whose infinity means something ("--beta inf": no early
// stopping): require_finite_numbers then refuses only NaN there. Returns
// `option`, to chain.
CLI::Option* allow_infinity(CLI::Option* option);

// A number greater than 0 (and finite).
CLI::Validator positive_number();

}  // namespace zeus::cli
