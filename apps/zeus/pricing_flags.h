// The --carbon-intensity/--carbon-provider/--price/--price-provider flags of
// `zeus monitor energy`, and the text/JSON shapes of their results. The
// providers and the hourly split are the library's (zeus/carbon/); this only
// translates flags and formats.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zeus/monitor/carbon/hourly_rate_monitor.h"

namespace zeus::cli {

struct PricingFlags {
  std::optional<double> carbon_intensity;  // gCO2eq/kWh
  std::string carbon_provider;
  std::optional<double> price;  // $/kWh
  std::string price_provider;
  bool any() const {
    return carbon_intensity || !carbon_provider.empty() || price || !price_provider.empty();
  }
};

void add_pricing_flags(CLI::App* cmd, PricingFlags& flags);

// Carbon provider first, then price; only those asked for. kInvalidArgument
// for a bad spec.
std::vector<std::shared_ptr<carbon::HourlyRateProvider>> make_providers(const PricingFlags& flags);

// "Carbon emissions (ElectricityMaps ...): GPU 0 12.3 gCO2eq ... total" lines.
void print_rates(const carbon::HourlyMeasurement& m);
// Adds "carbon"/"cost" (to_json(RateResult)) and "hours" to a measurement's JSON.
void add_rates_json(nlohmann::json& j, const carbon::HourlyMeasurement& m);

}  // namespace zeus::cli
