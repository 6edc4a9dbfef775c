#include "zeus/optimizer/power_limit/selection/power_limit_selector.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/parse.h"
#include "zeus/util/error.h"

namespace zeus::power_limit {
namespace {

void require_nonempty(std::span<const PowerLimitMeasurement> m) {
  if (m.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "no power-limit measurements to choose from; profile at least one limit first");
  }
}

// Argmin of `cost` over the measurements; on equal cost the higher limit wins.
template <class Cost>
Milliwatts argmin(std::span<const PowerLimitMeasurement> m, Cost cost) {
  require_nonempty(m);
  const PowerLimitMeasurement* best = &m[0];
  double best_cost = cost(m[0]);
  for (const auto& x : m.subspan(1)) {
    const double c = cost(x);
    if (c < best_cost || (c == best_cost && x.power_limit > best->power_limit)) {
      best = &x;
      best_cost = c;
    }
  }
  return best->power_limit;
}

Milliwatts max_limit(std::span<const PowerLimitMeasurement> m) {
  require_nonempty(m);
  return std::max_element(
             m.begin(), m.end(),
             [](const auto& a, const auto& b) { return a.power_limit < b.power_limit; })
      ->power_limit;
}

}  // namespace

Milliwatts min_weighted_cost_limit(std::span<const PowerLimitMeasurement> m, double energy_weight,
                                   double time_weight) {
  return argmin(m, [&](const auto& x) {
    return energy_weight * x.energy.value() + time_weight * x.time.count();
  });
}

Milliwatts max_measured_limit(std::span<const PowerLimitMeasurement> m) { return max_limit(m); }

Milliwatts EnergySelector::select(std::span<const PowerLimitMeasurement> m) const {
  return argmin(m, [](const auto& x) { return x.energy.value(); });
}

Milliwatts TimeSelector::select(std::span<const PowerLimitMeasurement> m) const {
  return argmin(m, [](const auto& x) { return x.time.count(); });
}

ZeusCostSelector::ZeusCostSelector(double eta, int world_size)
    : eta_(eta), world_size_(world_size) {
  if (!(eta >= 0.0 && eta <= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("zeus-cost: eta must be in [0, 1], got {}", eta));
  }
  if (world_size < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("zeus-cost: world size must be at least 1, got {}", world_size));
  }
}

Milliwatts ZeusCostSelector::select(std::span<const PowerLimitMeasurement> m) const {
  require_nonempty(m);
  const Watts max_power = to_watts(max_limit(m)) * static_cast<double>(world_size_);
  // zeus_cost(E, T, eta, MaxPower) = eta*E + (1-eta)*MaxPower*T.
  return min_weighted_cost_limit(m, eta_, (1.0 - eta_) * max_power.value());
}

std::string ZeusCostSelector::name() const {
  return world_size_ == 1 ? fmt::format("zeus-cost(eta={})", eta_)
                          : fmt::format("zeus-cost(eta={}, world_size={})", eta_, world_size_);
}

MaxSlowdownSelector::MaxSlowdownSelector(double factor) : factor_(factor) {
  if (!(factor >= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("max-slowdown: factor must be >= 1.0, got {}", factor));
  }
}

Milliwatts MaxSlowdownSelector::select(std::span<const PowerLimitMeasurement> m) const {
  require_nonempty(m);
  const Milliwatts top = max_limit(m);
  const auto ref =
      std::find_if(m.begin(), m.end(), [&](const auto& x) { return x.power_limit == top; });
  const double bound = factor_ * ref->time.count();
  Milliwatts chosen = top;
  for (const auto& x : m) {
    if (x.time.count() <= bound && x.power_limit < chosen) chosen = x.power_limit;
  }
  return chosen;
}

std::string MaxSlowdownSelector::name() const { return fmt::format("max-slowdown({})", factor_); }

std::unique_ptr<PowerLimitSelector> make_power_limit_selector(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "time" && arg.empty()) return std::make_unique<TimeSelector>();
  if (kind == "energy" && arg.empty()) return std::make_unique<EnergySelector>();
  if (kind == "zeus-cost" && !arg.empty()) {
    const auto second = arg.find(':');
    const double eta = parse_double(arg.substr(0, second), "zeus-cost eta");
    const int world = second == std::string::npos
                          ? 1
                          : static_cast<int>(parse_int(arg.substr(second + 1),
                                                       "zeus-cost world size", 1, 1 << 20));
    return std::make_unique<ZeusCostSelector>(eta, world);
  }
  if (kind == "max-slowdown" && !arg.empty()) {
    return std::make_unique<MaxSlowdownSelector>(parse_double(arg, "max-slowdown factor"));
  }
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("unknown selector '{}'; expected time, energy, zeus-cost:ETA or "
                          "max-slowdown:FACTOR (e.g. zeus-cost:0.5, max-slowdown:1.1)",
                          spec));
}

}  // namespace zeus::power_limit
