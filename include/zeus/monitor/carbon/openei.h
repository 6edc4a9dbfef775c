// Electricity prices from the OpenEI utility-rate API, queried as the Python
// Zeus does: GET {base}/utility_rates?version=latest&format=json&lat&lon&
// radius&detail=full&sector, then the tariff whose "label" matches (searched
// anywhere in the answer). The price of an hour is
// energyratestructure[tier][0].rate with tier = energy{weekday|weekend}
// schedule[month-1][hour], in the utility's local time. The tariff is fetched
// once and kept.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/util/units.h"

namespace zeus::carbon {

struct OpenEiOptions {
  double latitude = 0;
  double longitude = 0;
  std::string label;                   // the tariff's unique label (required)
  std::string sector = "Residential";  // Residential, Commercial, Industrial or Lighting
  int radius_miles = 0;
  std::string base_url = "https://api.openei.org";
  // The api_key query parameter. nullopt: $OPENEI_API_KEY. Required by OpenEI.
  std::optional<std::string> api_key;
  // Local time of the tariff's schedules, as hours east of UTC. nullopt: the
  // local time zone of this process (what upstream uses).
  std::optional<double> utc_offset_hours;
  Seconds timeout{10.0};
};

// A parsed tariff: 12 months x 24 hours of tier indices and a price per tier.
struct Tariff {
  std::vector<double> tier_price;         // $/kWh
  std::vector<std::vector<int>> weekday;  // [month][hour] -> tier
  std::vector<std::vector<int>> weekend;
  double price(int month /*1-12*/, int hour /*0-23*/, bool weekend_day) const;
};

// Finds the tariff labelled `label` anywhere in an OpenEI answer. kNotFound
// when no tariff has that label; kParse for a malformed schedule or structure.
Tariff parse_openei_tariff(const std::string& body, const std::string& label);

// Thread-safe: a mutex guards the cached tariff.
class OpenEiClient final : public HourlyRateProvider {
 public:
  // kInvalidArgument for a bad location, sector or empty label.
  explicit OpenEiClient(OpenEiOptions options);

  double rate(UtcHour hour) override;
  std::string description() const override;
  std::string unit() const override { return kPriceUnit; }

 private:
  const Tariff& tariff_locked();

  OpenEiOptions options_;
  std::mutex mutex_;  // guards tariff_
  std::optional<Tariff> tariff_;
};

}  // namespace zeus::carbon
