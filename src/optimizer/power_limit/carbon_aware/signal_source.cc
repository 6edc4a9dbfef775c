#include "zeus/optimizer/power_limit/carbon_aware/signal_source.h"

#include <algorithm>

namespace zeus::carbon_aware {

double GridSignalSource::value(std::int64_t start_utc, std::int64_t period_s) {
  // Every sample that overlaps the period, weighted by the overlap.
  const std::int64_t end = start_utc + std::max<std::int64_t>(period_s, 1);
  double sum = 0.0;
  std::int64_t covered = 0;
  for (std::int64_t t = start_utc; t < end;) {
    const std::size_t i = signal_.index_at(t);  // kNotFound outside the series
    const std::int64_t next = std::min(end, signal_.sample_start(i) + signal_.resolution_s());
    sum += signal_.value(i) * static_cast<double>(next - t);
    covered += next - t;
    t = next;
  }
  return sum / static_cast<double>(covered);
}

}  // namespace zeus::carbon_aware
