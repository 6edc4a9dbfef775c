// Carbon intensity from the ElectricityMaps API (v3), queried as the Python
// Zeus does: GET {base}/v3/carbon-intensity/latest and .../history with
// lat, lon, disableEstimations and emissionFactorType. The latest value
// serves the current hour; the 24-hour history serves past hours and is
// fetched again when an hour is missing, at most once per update period.
// Every hour seen is kept, so a monitor that calls refresh() hourly can
// price windows longer than the 24-hour history.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "zeus/monitor/carbon/rate_provider.h"
#include "zeus/util/units.h"

namespace zeus::carbon {

struct ElectricityMapsOptions {
  double latitude = 0;
  double longitude = 0;
  bool estimate = false;                        // false: disableEstimations=true
  std::string emission_factor_type = "direct";  // or "lifecycle"
  // API base. Tests point it at a local server.
  std::string base_url = "https://api.electricitymap.org";
  // The auth-token header. nullopt: $ELECTRICITYMAPS_API_TOKEN (never from
  // code or flags, so it does not end up in shell histories); none: no header.
  std::optional<std::string> api_token;
  Seconds timeout{10.0};
  Seconds update_period{3600.0};  // refresh() fetches the history at most this often
  // Wall time (Unix seconds) deciding which hour is current; nullptr: the system clock.
  std::function<double()> now;
};

// Thread-safe: a mutex guards the cache; HTTP requests happen under it so
// concurrent callers share one fetch.
class ElectricityMapsClient final : public HourlyRateProvider {
 public:
  // kInvalidArgument for a latitude/longitude out of range or an unknown
  // emission factor type.
  explicit ElectricityMapsClient(ElectricityMapsOptions options);

  double rate(UtcHour hour) override;
  void refresh(double unix_now) override;
  std::string description() const override;
  std::string unit() const override { return kCarbonIntensityUnit; }

  // The current carbon intensity (GET .../latest), cached for its hour.
  double latest();
  static constexpr int kHistoryHours = 24;

 private:
  std::string query() const;
  void fetch_history_locked(double unix_now);
  void fetch_latest_locked();

  ElectricityMapsOptions options_;
  std::mutex mutex_;  // guards the cache and the fetch times
  std::map<UtcHour, double> cache_;
  std::optional<double> last_history_fetch_;  // wall seconds
};

// Parses the JSON of /latest ({"carbonIntensity", "datetime", ...}) or
// /history ({"history": [...]}) into hourly values. Exposed for tests.
// kParse with what was wrong; entries whose carbonIntensity is null are skipped.
std::map<UtcHour, double> parse_electricity_maps(const std::string& body, bool history);

}  // namespace zeus::carbon
