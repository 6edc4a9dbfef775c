// The JSON field reader (src/util/json.h) every JSON input goes through:
// parse, then typed and range-checked fields, nested objects and arrays.
#include <cmath>

#include "fuzz_support.h"
#include "util/json.h"
#include "zeus/util/error.h"

namespace {

void read_object(const zeus::JsonObject& o, int depth) {
  const double d = o.number("ratio", 0.0, 1.0);
  ZEUS_FUZZ_CHECK(std::isfinite(d) && d >= 0.0 && d <= 1.0);
  const auto i = o.optional_integer("count", 0, 1000);
  ZEUS_FUZZ_CHECK(!i || (*i >= 0 && *i <= 1000));
  const auto name = o.optional_string("name", 16);
  ZEUS_FUZZ_CHECK(!name || name->size() <= 16);
  (void)o.optional_boolean("flag");
  if (o.has("values")) {
    for (const double v : o.numbers("values", -1e6, 1e6)) {
      ZEUS_FUZZ_CHECK(std::isfinite(v) && v >= -1e6 && v <= 1e6);
    }
  }
  if (o.has("ids")) {
    for (const auto v : o.integers("ids", -5, 5)) ZEUS_FUZZ_CHECK(v >= -5 && v <= 5);
  }
  if (depth < 3 && o.has("children")) {
    for (const auto& child : o.objects("children")) read_object(child, depth + 1);
  }
  o.reject_unknown_keys({"ratio", "count", "name", "flag", "values", "ids", "children"});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto doc = zeus::parse_json(zeus::fuzz::as_text(data, size), "fuzz.json");
    read_object(zeus::JsonObject(doc, "fuzz.json"), 0);
    zeus::fuzz::accepted();
  } catch (const zeus::FieldError& e) {
    // Every field error names a place in the document (or the document itself).
    ZEUS_FUZZ_CHECK(e.field().size() < 4096);
  } catch (const zeus::Error&) {
  }
  return 0;
}
