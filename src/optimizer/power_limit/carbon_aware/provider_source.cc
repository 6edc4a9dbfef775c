#include "zeus/optimizer/power_limit/carbon_aware/provider_source.h"

#include <algorithm>

namespace zeus::carbon_aware {

double ProviderSignalSource::value(std::int64_t start_utc, std::int64_t period_s) {
  const std::int64_t end = start_utc + std::max<std::int64_t>(period_s, 1);
  double sum = 0.0;
  for (std::int64_t t = start_utc; t < end;) {
    const carbon::UtcHour hour =
        t - (((t % carbon::kSecondsPerHour) + carbon::kSecondsPerHour) % carbon::kSecondsPerHour);
    const std::int64_t next = std::min(end, hour + carbon::kSecondsPerHour);
    sum += provider_.rate(hour) * static_cast<double>(next - t);
    t = next;
  }
  return sum / static_cast<double>(end - start_utc);
}

SignalKind ProviderSignalSource::kind() const {
  return provider_.unit() == carbon::kCarbonIntensityUnit ? SignalKind::kCarbon
                                                          : SignalKind::kPrice;
}

}  // namespace zeus::carbon_aware
