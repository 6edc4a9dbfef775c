// Rate providers from one-line specs, as front ends take them:
//   carbon: "electricitymaps:LAT,LON[,direct|lifecycle][,estimate]" or "csv:PATH"
//   price:  "openei:LAT,LON,LABEL[,SECTOR]" or "csv:PATH"
// plus constants (ConstantRate). API keys come from the environment only.
#pragma once

#include <memory>
#include <string>

#include "zeus/monitor/carbon/rate_provider.h"

namespace zeus::carbon {

// kInvalidArgument saying what the spec should look like.
std::shared_ptr<HourlyRateProvider> carbon_provider_from_spec(const std::string& spec);
std::shared_ptr<HourlyRateProvider> price_provider_from_spec(const std::string& spec);

}  // namespace zeus::carbon
