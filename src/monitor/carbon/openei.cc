#include "zeus/monitor/carbon/openei.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "monitor/carbon/https_client.h"
#include "monitor/carbon/provider_status.h"
#include "zeus/util/error.h"

namespace zeus::carbon {
namespace {

using nlohmann::json;

// Every object (at any depth) whose "label" is `label`.
void find_labelled(const json& j, const std::string& label, std::vector<const json*>& out) {
  if (j.is_object()) {
    if (auto it = j.find("label"); it != j.end() && it->is_string() && *it == label) {
      out.push_back(&j);
    }
    for (const auto& [key, value] : j.items()) find_labelled(value, label, out);
  } else if (j.is_array()) {
    for (const auto& item : j) find_labelled(item, label, out);
  }
}

std::vector<std::vector<int>> read_schedule(const json& tariff, const char* key,
                                            std::size_t tiers) {
  const auto it = tariff.find(key);
  const auto bad = [&](const std::string& why) {
    throw_error(ErrorCode::kParse,
                fmt::format("OpenEI tariff '{}': {} {}", tariff.value("label", ""), key, why));
  };
  if (it == tariff.end() || !it->is_array()) bad("is missing (need 12 months x 24 hours)");
  if (it->size() != 12) bad(fmt::format("has {} months, not 12", it->size()));
  std::vector<std::vector<int>> out;
  for (const auto& month : *it) {
    if (!month.is_array() || month.size() != 24) bad("needs 24 hours in every month");
    std::vector<int> hours;
    for (const auto& tier : month) {
      if (!tier.is_number_integer() || tier.get<long long>() < 0 ||
          static_cast<std::size_t>(tier.get<long long>()) >= tiers) {
        bad(fmt::format("names tier {}, but the rate structure has {} tier(s)", tier.dump(),
                        tiers));
      }
      hours.push_back(tier.get<int>());
    }
    out.push_back(std::move(hours));
  }
  return out;
}

}  // namespace

double Tariff::price(int month, int hour, bool weekend_day) const {
  const auto& schedule = weekend_day ? weekend : weekday;
  return tier_price.at(static_cast<std::size_t>(
      schedule.at(static_cast<std::size_t>(month - 1)).at(static_cast<std::size_t>(hour))));
}

Tariff parse_openei_tariff(const std::string& body, const std::string& label) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    throw_error(ErrorCode::kParse, fmt::format("OpenEI: the answer is not JSON ({})", e.what()));
  }
  std::vector<const json*> found;
  find_labelled(j, label, found);
  if (found.empty()) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("OpenEI has no tariff labelled '{}' at this location and sector; look "
                            "the label up on the OpenEI utility rate database (the 'label' field)",
                            label));
  }
  const json& t = *found.front();
  const auto structure = t.find("energyratestructure");
  if (structure == t.end() || !structure->is_array() || structure->empty()) {
    throw_error(ErrorCode::kParse,
                fmt::format("OpenEI tariff '{}' has no energyratestructure (it may bill only "
                            "demand or fixed charges)",
                            label));
  }
  Tariff tariff;
  for (const auto& tier : *structure) {
    if (!tier.is_array() || tier.empty() || !tier[0].is_object() || !tier[0].contains("rate") ||
        !tier[0]["rate"].is_number() || !std::isfinite(tier[0]["rate"].get<double>())) {
      throw_error(ErrorCode::kParse,
                  fmt::format("OpenEI tariff '{}': every energyratestructure tier needs a numeric "
                              "'rate' in its first entry",
                              label));
    }
    tariff.tier_price.push_back(tier[0]["rate"].get<double>());
  }
  tariff.weekday = read_schedule(t, "energyweekdayschedule", tariff.tier_price.size());
  tariff.weekend = read_schedule(t, "energyweekendschedule", tariff.tier_price.size());
  return tariff;
}

OpenEiClient::OpenEiClient(OpenEiOptions options) : options_(std::move(options)) {
  if (!std::isfinite(options_.latitude) || std::abs(options_.latitude) > 90 ||
      !std::isfinite(options_.longitude) || std::abs(options_.longitude) > 180) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("OpenEI: location ({}, {}) is not a latitude in [-90, 90] and a "
                            "longitude in [-180, 180]",
                            options_.latitude, options_.longitude));
  }
  if (options_.label.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "OpenEI: give the tariff's label");
  }
  const std::vector<std::string> sectors{"Residential", "Commercial", "Industrial", "Lighting"};
  if (std::find(sectors.begin(), sectors.end(), options_.sector) == sectors.end()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("OpenEI: sector '{}' is not Residential, Commercial, Industrial or "
                            "Lighting",
                            options_.sector));
  }
  if (options_.radius_miles < 0 || options_.radius_miles > 200) {
    throw_error(ErrorCode::kInvalidArgument, "OpenEI: the radius must be 0-200 miles");
  }
}

std::string OpenEiClient::description() const {
  return fmt::format("OpenEI tariff '{}' (lat {}, lon {}, {})", options_.label, options_.latitude,
                     options_.longitude, options_.sector);
}

const Tariff& OpenEiClient::tariff_locked() {
  if (tariff_) return *tariff_;
  std::optional<std::string> key = options_.api_key;
  if (!key) {
    if (const char* env = std::getenv("OPENEI_API_KEY"); env != nullptr && *env != '\0') key = env;
  }
  if (!key || key->empty()) {
    throw_error(ErrorCode::kNoPermission,
                "OpenEI needs an API key: set OPENEI_API_KEY (free at openei.org), or use "
                "--price with a constant or a CSV of hourly prices");
  }
  const std::string url = fmt::format(
      "{}/utility_rates?version=latest&format=json&api_key={}&lat={}&lon={}&radius={}&detail=full"
      "&sector={}",
      options_.base_url, carbon_internal::query_escape(*key), options_.latitude, options_.longitude,
      options_.radius_miles, carbon_internal::query_escape(options_.sector));
  const auto response = carbon_internal::https_get(url, {}, options_.timeout);
  carbon_internal::check_provider_status("OpenEI", response.status, response.body,
                                         "check OPENEI_API_KEY",
                                         "OpenEI has no utility rates here");
  tariff_ = parse_openei_tariff(response.body, options_.label);
  return *tariff_;
}

double OpenEiClient::rate(UtcHour hour) {
  std::lock_guard lock(mutex_);
  const Tariff& tariff = tariff_locked();
  std::tm tm{};
  if (options_.utc_offset_hours) {
    const auto local = static_cast<std::time_t>(
        hour + static_cast<std::int64_t>(std::llround(*options_.utc_offset_hours * 3600.0)));
    gmtime_r(&local, &tm);
  } else {
    const auto t = static_cast<std::time_t>(hour);
    localtime_r(&t, &tm);
  }
  const bool weekend = tm.tm_wday == 0 || tm.tm_wday == 6;
  return tariff.price(tm.tm_mon + 1, tm.tm_hour, weekend);
}

}  // namespace zeus::carbon
