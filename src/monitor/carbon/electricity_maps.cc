#include "zeus/monitor/carbon/electricity_maps.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "monitor/carbon/https_client.h"
#include "monitor/carbon/provider_status.h"
#include "util/iso8601.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::carbon {
namespace {

using nlohmann::json;

std::optional<std::string> token_from(const std::optional<std::string>& option) {
  if (option) return option->empty() ? std::nullopt : option;
  const char* env = std::getenv("ELECTRICITYMAPS_API_TOKEN");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return std::string(env);
}

void add_entry(std::map<UtcHour, double>& out, const json& entry, const std::string& where) {
  if (!entry.is_object()) {
    throw_error(ErrorCode::kParse, fmt::format("{}: an entry is not a JSON object", where));
  }
  const auto ci = entry.find("carbonIntensity");
  const auto dt = entry.find("datetime");
  if (dt == entry.end() || !dt->is_string()) {
    throw_error(ErrorCode::kParse, fmt::format("{}: an entry has no 'datetime' string", where));
  }
  if (ci == entry.end() || ci->is_null()) return;  // no data for that hour
  if (!ci->is_number() || !std::isfinite(ci->get<double>()) || ci->get<double>() < 0) {
    throw_error(
        ErrorCode::kParse,
        fmt::format("{}: 'carbonIntensity' must be a number >= 0, got {}", where, ci->dump()));
  }
  const UtcHour hour = utc_hour_of(
      static_cast<double>(parse_utc_time(dt->get<std::string>(), where + " 'datetime'")));
  out[hour] = ci->get<double>();
}

}  // namespace

std::map<UtcHour, double> parse_electricity_maps(const std::string& body, bool history) {
  const std::string where = history ? "ElectricityMaps history" : "ElectricityMaps latest";
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    throw_error(ErrorCode::kParse, fmt::format("{}: the answer is not JSON ({})", where, e.what()));
  }
  if (!j.is_object()) {
    throw_error(ErrorCode::kParse, fmt::format("{}: the answer is not a JSON object", where));
  }
  std::map<UtcHour, double> out;
  if (history) {
    const auto h = j.find("history");
    if (h == j.end() || !h->is_array()) {
      throw_error(ErrorCode::kParse, fmt::format("{}: no 'history' array", where));
    }
    for (const auto& entry : *h) add_entry(out, entry, where);
  } else {
    add_entry(out, j, where);
  }
  return out;
}

ElectricityMapsClient::ElectricityMapsClient(ElectricityMapsOptions options)
    : options_(std::move(options)) {
  if (!options_.now) options_.now = wall_time_seconds;
  if (!std::isfinite(options_.latitude) || std::abs(options_.latitude) > 90 ||
      !std::isfinite(options_.longitude) || std::abs(options_.longitude) > 180) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("ElectricityMaps: location ({}, {}) is not a latitude in [-90, 90] "
                            "and a longitude in [-180, 180]",
                            options_.latitude, options_.longitude));
  }
  if (options_.emission_factor_type != "direct" && options_.emission_factor_type != "lifecycle") {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("ElectricityMaps: emission factor type '{}' is neither 'direct' nor "
                            "'lifecycle'",
                            options_.emission_factor_type));
  }
}

std::string ElectricityMapsClient::description() const {
  return fmt::format("ElectricityMaps (lat {}, lon {}, {})", options_.latitude, options_.longitude,
                     options_.emission_factor_type);
}

std::string ElectricityMapsClient::query() const {
  return fmt::format("lat={}&lon={}&disableEstimations={}&emissionFactorType={}", options_.latitude,
                     options_.longitude, options_.estimate ? "false" : "true",
                     carbon_internal::query_escape(options_.emission_factor_type));
}

namespace {

std::string fetch(const ElectricityMapsOptions& o, const std::string& what,
                  const std::string& query) {
  std::vector<std::string> headers;
  if (auto token = token_from(o.api_token)) headers.push_back("auth-token: " + *token);
  const std::string url = fmt::format("{}/v3/carbon-intensity/{}?{}", o.base_url, what, query);
  const auto response = carbon_internal::https_get(url, headers, o.timeout);
  carbon_internal::check_provider_status(
      "ElectricityMaps", response.status, response.body,
      "set ELECTRICITYMAPS_API_TOKEN to your ElectricityMaps API token",
      "ElectricityMaps has no carbon intensity for this location (check the latitude and "
      "longitude, or use --carbon-intensity with a constant)");
  return response.body;
}

}  // namespace

void ElectricityMapsClient::fetch_history_locked(double unix_now) {
  auto hours = parse_electricity_maps(fetch(options_, "history", query()), true);
  last_history_fetch_ = unix_now;
  if (hours.empty()) {
    log::warn("ElectricityMaps returned an empty history for {}", description());
  }
  for (const auto& [hour, value] : hours) cache_[hour] = value;
}

void ElectricityMapsClient::fetch_latest_locked() {
  for (const auto& [hour, value] :
       parse_electricity_maps(fetch(options_, "latest", query()), false)) {
    cache_[hour] = value;
  }
}

double ElectricityMapsClient::latest() {
  std::lock_guard lock(mutex_);
  auto hours = parse_electricity_maps(fetch(options_, "latest", query()), false);
  if (hours.empty()) {
    throw_error(ErrorCode::kNotFound, "ElectricityMaps: the latest answer has no carbon intensity");
  }
  for (const auto& [hour, value] : hours) cache_[hour] = value;
  return hours.rbegin()->second;
}

double ElectricityMapsClient::rate(UtcHour hour) {
  std::lock_guard lock(mutex_);
  if (auto it = cache_.find(hour); it != cache_.end()) return it->second;
  const UtcHour current = utc_hour_of(options_.now());
  if (hour >= current) {
    fetch_latest_locked();
    if (auto it = cache_.find(hour); it != cache_.end()) return it->second;
  }
  // A history fetched after this hour ended already had all it will ever have.
  if (!last_history_fetch_ || *last_history_fetch_ < static_cast<double>(hour + kSecondsPerHour)) {
    fetch_history_locked(options_.now());
  }
  if (auto it = cache_.find(hour); it != cache_.end()) return it->second;
  // The current hour may not be in the history yet: the latest value stands in.
  if (hour >= current - kSecondsPerHour && !cache_.empty() && cache_.rbegin()->first < hour) {
    return cache_.rbegin()->second;
  }
  throw_error(ErrorCode::kNotFound,
              fmt::format("ElectricityMaps has no carbon intensity for the hour starting {} "
                          "({}); its history covers only the last {} hours, and a monitor "
                          "keeps older hours only while it runs",
                          format_iso8601(hour), description(), kHistoryHours));
}

void ElectricityMapsClient::refresh(double unix_now) {
  std::lock_guard lock(mutex_);
  if (last_history_fetch_ && unix_now - *last_history_fetch_ < options_.update_period.count()) {
    return;
  }
  fetch_history_locked(unix_now);
}

}  // namespace zeus::carbon
