#include "zeus/optimizer/batch_size/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "zeus/optimizer/power_limit_selection/power_limit_selector.h"
#include "zeus/util/metric.h"

namespace zeus::batch_size {

double epoch_cost(double eta, Watts average_power, Seconds time_per_epoch, Watts max_power) {
  return zeus_cost(average_power * time_per_epoch, time_per_epoch, eta, max_power);
}

Milliwatts choose_power_limit(double eta, std::span<const PowerLimitEpoch> epochs) {
  std::vector<PowerLimitMeasurement> m;
  m.reserve(epochs.size());
  for (const auto& e : epochs) {
    m.push_back({e.power_limit, e.average_power * e.time_per_epoch, e.time_per_epoch});
  }
  return ZeusCostSelector(eta).select(m);
}

double cost_upper_bound(double beta, double min_cost) {
  if (std::isinf(beta) || std::isinf(min_cost)) return std::numeric_limits<double>::infinity();
  return beta * min_cost;
}

double python_floor_div(double a, double b) {
  // CPython's float_floor_div: exact floor of a/b even where a/b rounds up.
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

double epochs_within_bound(double cost_upper_bound, double cost_per_epoch, int max_epochs) {
  const double cap = static_cast<double>(max_epochs);
  if (std::isinf(cost_upper_bound)) return cap;
  return std::min(python_floor_div(cost_upper_bound, cost_per_epoch), cap);
}

}  // namespace zeus::batch_size
