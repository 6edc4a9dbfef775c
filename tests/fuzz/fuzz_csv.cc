// CsvTable::parse, the reader of traces and profiles, and its typed cells.
#include <cmath>

#include "fuzz_support.h"
#include "util/csv.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto table = zeus::CsvTable::parse(zeus::fuzz::as_text(data, size), "fuzz.csv");
    zeus::fuzz::accepted();
    ZEUS_FUZZ_CHECK(!table.columns().empty());
    for (std::size_t r = 0; r < table.num_rows(); ++r) {
      ZEUS_FUZZ_CHECK(table.line_of(r) >= 2);
      for (std::size_t c = 0; c < table.columns().size(); ++c) {
        (void)table.cell(r, c);
        try {
          const double v = table.as_finite_double(r, c);
          ZEUS_FUZZ_CHECK(std::isfinite(v));
        } catch (const zeus::Error&) {
        }
        try {
          (void)table.as_int(r, c);
        } catch (const zeus::Error&) {
        }
      }
    }
  } catch (const zeus::Error&) {
  }
  return 0;
}
