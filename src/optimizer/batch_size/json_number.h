// JSON encoding of doubles that keeps every bit: finite values as JSON numbers
// (nlohmann writes the shortest text that parses back to the same double), and
// the values JSON cannot hold as strings "inf", "-inf", "nan".
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "zeus/util/error.h"

namespace zeus::batch_size::detail {

inline nlohmann::json encode_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

inline double decode_double(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw_error(ErrorCode::kParse,
              "policy state: expected a number or \"inf\"/\"-inf\"/\"nan\", got " + j.dump());
}

// Reads a required field with a message naming it.
inline const nlohmann::json& field(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) {
    throw_error(ErrorCode::kParse, std::string("policy state: missing field '") + name + "'");
  }
  return j.at(name);
}

}  // namespace zeus::batch_size::detail
