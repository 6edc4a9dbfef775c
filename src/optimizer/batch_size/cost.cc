#include "zeus/optimizer/batch_size/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"
#include "zeus/optimizer/power_limit/selection/zeus_cost.h"

namespace zeus::batch_size {

Joules epoch_cost(double eta, Watts average_power, Seconds time_per_epoch, Watts max_power) {
  return Joules(
      power_limit::zeus_cost(average_power * time_per_epoch, time_per_epoch, eta, max_power));
}

Milliwatts choose_power_limit(double eta, std::span<const PowerLimitEpoch> epochs) {
  std::vector<power_limit::PowerLimitMeasurement> m;
  m.reserve(epochs.size());
  for (const auto& e : epochs) {
    m.push_back({e.power_limit, e.average_power * e.time_per_epoch, e.time_per_epoch});
  }
  return power_limit::ZeusCostSelector(eta).select(m);
}

Joules cost_upper_bound(double beta, Joules min_cost) {
  if (std::isinf(beta) || std::isinf(min_cost.value())) {
    return Joules(std::numeric_limits<double>::infinity());
  }
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

double epochs_within_bound(Joules cost_upper_bound, Joules cost_per_epoch, int max_epochs) {
  const double cap = static_cast<double>(max_epochs);
  if (std::isinf(cost_upper_bound.value())) return cap;
  return std::min(python_floor_div(cost_upper_bound.value(), cost_per_epoch.value()), cap);
}

EpochVerdict judge_epoch(const StopRule& rule, Joules min_cost, Joules cost, double metric,
                         int epoch) {
  EpochVerdict v;
  v.cost_upper_bound = cost_upper_bound(rule.beta, min_cost);
  const bool within = !exceeds_cost_bound(cost, v.cost_upper_bound);
  const bool reached =
      rule.higher_is_better ? metric >= rule.target_metric : metric <= rule.target_metric;
  if (within && epoch < rule.max_epochs && !reached) {
    v.end = TrialEnd::kContinue;
  } else if (!within) {
    v.end = TrialEnd::kOverCostBound;
  } else if (reached) {
    v.end = TrialEnd::kConverged;
  } else {
    v.end = TrialEnd::kMaxEpochs;
  }
  return v;
}

}  // namespace zeus::batch_size
