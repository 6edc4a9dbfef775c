#include "pricing_flags.h"

#include <fmt/format.h>

#include <cstdlib>

#include "monitor/carbon/hourly_json.h"
#include "util/iso8601.h"
#include "zeus/monitor/carbon/provider_spec.h"
#include "zeus/monitor/carbon/rate_provider.h"

namespace zeus::cli {

namespace {

// A constant rate: a number in [0, kMaxRate], said in words (CLI11's own
// range check prints its bounds with six decimals).
std::string check_rate(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(v >= 0 && v <= carbon::kMaxRate)) {
    return fmt::format("'{}' is not a rate in [0, {:g}] (a larger one is a unit mistake)", text,
                       carbon::kMaxRate);
  }
  return "";
}

}  // namespace

void add_pricing_flags(CLI::App* cmd, PricingFlags& f) {
  auto* ci = cmd->add_option("--carbon-intensity", f.carbon_intensity,
                             "Constant carbon intensity in gCO2eq/kWh: adds carbon emissions")
                 ->check(check_rate);
  auto* cp = cmd->add_option(
      "--carbon-provider", f.carbon_provider,
      "Hourly carbon intensity: electricitymaps:LAT,LON[,direct|lifecycle][,estimate] "
      "(token from $ELECTRICITYMAPS_API_TOKEN) or csv:PATH (columns time,value)");
  ci->excludes(cp);
  auto* p = cmd->add_option("--price", f.price,
                            "Constant electricity price in $/kWh: adds electricity cost")
                ->check(check_rate);
  auto* pp = cmd->add_option("--price-provider", f.price_provider,
                             "Hourly price: openei:LAT,LON,LABEL[,SECTOR] (key from "
                             "$OPENEI_API_KEY) or csv:PATH (columns time,value)");
  p->excludes(pp);
}

std::vector<std::shared_ptr<carbon::HourlyRateProvider>> make_providers(const PricingFlags& f) {
  std::vector<std::shared_ptr<carbon::HourlyRateProvider>> out;
  if (f.carbon_intensity) {
    out.push_back(
        std::make_shared<carbon::ConstantRate>(*f.carbon_intensity, carbon::kCarbonIntensityUnit));
  } else if (!f.carbon_provider.empty()) {
    out.push_back(carbon::carbon_provider_from_spec(f.carbon_provider));
  }
  if (f.price) {
    out.push_back(std::make_shared<carbon::ConstantRate>(*f.price, carbon::kPriceUnit));
  } else if (!f.price_provider.empty()) {
    out.push_back(carbon::price_provider_from_spec(f.price_provider));
  }
  return out;
}

namespace {

const char* title(const carbon::RateResult& r) {
  return r.unit == "gCO2eq" ? "Carbon emissions" : r.unit == "$" ? "Electricity cost" : "Priced";
}

std::string amount(double v, const std::string& unit) {
  return unit == "$" ? fmt::format("${:.6f}", v) : fmt::format("{:.3f} {}", v, unit);
}

}  // namespace

void print_rates(const carbon::HourlyMeasurement& m) {
  for (const auto& r : m.rates) {
    fmt::print("{} ({}):\n", title(r), r.provider);
    if (!r.error.empty()) {
      fmt::print("  not available: {}\n", r.error);
      continue;
    }
    for (const auto& [i, v] : *r.gpu) fmt::print("  GPU {}: {}\n", i, amount(v, r.unit));
    for (const auto& [i, v] : *r.cpu) fmt::print("  CPU package {}: {}\n", i, amount(v, r.unit));
    for (const auto& [i, v] : *r.dram) fmt::print("  DRAM {}: {}\n", i, amount(v, r.unit));
    fmt::print("  Total: {}\n", amount(*r.total(), r.unit));
  }
  if (m.hours.size() > 1) {
    fmt::print("Hours (UTC):");
    for (std::size_t h = 0; h < m.hours.size(); ++h) {
      fmt::print(" {} {:.0f} s {:.3f} J", format_iso8601(m.hours[h].hour).substr(11, 5),
                 m.hours[h].time.count(), m.hours[h].total_energy().value());
      for (const auto& r : m.rates) {
        if (r.hour_rates[h]) fmt::print(" @{:g} {}", *r.hour_rates[h], r.rate_unit);
      }
      fmt::print("{}", h + 1 < m.hours.size() ? ";" : "\n");
    }
  }
}

void add_rates_json(nlohmann::json& j, const carbon::HourlyMeasurement& m) {
  for (const auto& r : m.rates) j[r.unit == "$" ? "cost" : "carbon"] = to_json(r);
  j["hours"] = carbon::hours_to_json(m);
}

}  // namespace zeus::cli
