#include "zeus/monitor/carbon/provider_spec.h"

#include <fmt/format.h>

#include "util/parse.h"
#include "zeus/monitor/carbon/electricity_maps.h"
#include "zeus/monitor/carbon/openei.h"
#include "zeus/util/error.h"

namespace zeus::carbon {
namespace {

constexpr const char* kCarbonForms =
    "electricitymaps:LAT,LON[,direct|lifecycle][,estimate] or csv:PATH (a CSV with columns "
    "time,value in gCO2eq/kWh)";
constexpr const char* kPriceForms =
    "openei:LAT,LON,LABEL[,SECTOR] or csv:PATH (a CSV with columns time,value in $/kWh)";

std::vector<std::string> fields(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

[[noreturn]] void bad(const std::string& spec, const char* forms, const std::string& why) {
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("provider '{}': {}; use {}", spec, why, forms));
}

}  // namespace

std::shared_ptr<HourlyRateProvider> carbon_provider_from_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) bad(spec, kCarbonForms, "no provider name before ':'");
  const std::string kind = spec.substr(0, colon);
  const std::string rest = spec.substr(colon + 1);
  if (kind == "csv") {
    if (rest.empty()) bad(spec, kCarbonForms, "no file after 'csv:'");
    return std::make_shared<CsvHourlyRates>(rest, kCarbonIntensityUnit);
  }
  if (kind != "electricitymaps")
    bad(spec, kCarbonForms, fmt::format("unknown provider '{}'", kind));
  const auto f = fields(rest);
  if (f.size() < 2 || f.size() > 4) bad(spec, kCarbonForms, "give a latitude and a longitude");
  ElectricityMapsOptions o;
  o.latitude = parse_double(f[0], "latitude", -90, 90);
  o.longitude = parse_double(f[1], "longitude", -180, 180);
  for (std::size_t k = 2; k < f.size(); ++k) {
    if (f[k] == "direct" || f[k] == "lifecycle") {
      o.emission_factor_type = f[k];
    } else if (f[k] == "estimate") {
      o.estimate = true;
    } else {
      bad(spec, kCarbonForms, fmt::format("unknown option '{}'", f[k]));
    }
  }
  return std::make_shared<ElectricityMapsClient>(o);
}

std::shared_ptr<HourlyRateProvider> price_provider_from_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) bad(spec, kPriceForms, "no provider name before ':'");
  const std::string kind = spec.substr(0, colon);
  const std::string rest = spec.substr(colon + 1);
  if (kind == "csv") {
    if (rest.empty()) bad(spec, kPriceForms, "no file after 'csv:'");
    return std::make_shared<CsvHourlyRates>(rest, kPriceUnit);
  }
  if (kind != "openei") bad(spec, kPriceForms, fmt::format("unknown provider '{}'", kind));
  const auto f = fields(rest);
  if (f.size() < 3 || f.size() > 4)
    bad(spec, kPriceForms, "give a latitude, a longitude and a label");
  OpenEiOptions o;
  o.latitude = parse_double(f[0], "latitude", -90, 90);
  o.longitude = parse_double(f[1], "longitude", -180, 180);
  o.label = f[2];
  if (f.size() == 4) o.sector = f[3];
  return std::make_shared<OpenEiClient>(o);
}

}  // namespace zeus::carbon
