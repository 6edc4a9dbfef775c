#include "optimizer/power_limit/power_limit_profile_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "util/json.h"
#include "zeus/util/error.h"

namespace zeus::power_limit_internal {
namespace {

double watts(Milliwatts mw) { return to_watts(mw).value(); }

// Physically sensible bounds: no GPU draws 100 kW, and a profile of a few
// steps does not take a year. Large enough for any real measurement, small
// enough that nothing computed from them overflows.
constexpr double kMaxLimitWatts = 100000.0;
constexpr double kMaxEnergyJoules = 1e15;
constexpr double kMaxTimeSeconds = 3.2e7;
constexpr double kTiny = 1e-12;

}  // namespace

std::vector<power_limit::PowerLimitMeasurement> parse_power_limit_profile(
    std::string_view text, const std::string& source, const std::vector<Milliwatts>& candidates) {
  const std::string advice = ". Delete the file to profile again";
  try {
    const nlohmann::json doc = parse_json(text, source);
    const JsonObject top(doc, source);
    const std::vector<JsonObject> items = top.objects("measurements");
    top.reject_unknown_keys({"measurements"});
    if (items.empty()) {
      throw FieldError(ErrorCode::kParse, "measurements",
                       fmt::format("{}: \"measurements\" is empty", source));
    }
    std::vector<power_limit::PowerLimitMeasurement> out;
    std::set<std::int64_t> seen;
    for (const JsonObject& item : items) {
      const double w = item.number("power_limit", kTiny, kMaxLimitWatts);
      const double e = item.number("energy", kTiny, kMaxEnergyJoules);
      const double t = item.number("time", kTiny, kMaxTimeSeconds);
      item.reject_unknown_keys({"power_limit", "energy", "time"});
      const Milliwatts limit = to_milliwatts(Watts(w));
      if (std::find(candidates.begin(), candidates.end(), limit) == candidates.end()) {
        throw FieldError(
            ErrorCode::kInvalidArgument, item.field_path("power_limit"),
            fmt::format("{}: {} is {} W, which is not a candidate limit of these GPUs ({} W down "
                        "to {} W in steps of {} W); it was made on other GPUs or with another "
                        "pl_step",
                        source, item.field_path("power_limit"), w, watts(candidates.front()),
                        watts(candidates.back()),
                        candidates.size() > 1 ? watts(candidates[0]) - watts(candidates[1]) : 0.0));
      }
      if (!seen.insert(limit.value()).second) {
        throw FieldError(ErrorCode::kInvalidArgument, item.field_path("power_limit"),
                         fmt::format("{}: power limit {} W is measured twice", source, w));
      }
      out.push_back(power_limit::PowerLimitMeasurement{limit, Joules(e), Seconds(t)});
    }
    return out;
  } catch (const FieldError& e) {
    throw FieldError(e.code(), e.field(),
                     fmt::format("power-limit profile: {}{}", e.what(), advice));
  }
}

std::string power_limit_profile_json(
    const std::vector<power_limit::PowerLimitMeasurement>& measurements) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& x : measurements) {
    nlohmann::ordered_json item;
    if (x.power_limit.value() % 1000 == 0) {
      item["power_limit"] = x.power_limit.value() / 1000;
    } else {
      item["power_limit"] = watts(x.power_limit);
    }
    item["energy"] = x.energy.value();
    item["time"] = x.time.count();
    list.push_back(std::move(item));
  }
  nlohmann::ordered_json doc;
  doc["measurements"] = std::move(list);
  return doc.dump(4) + "\n";
}

}  // namespace zeus::power_limit_internal
