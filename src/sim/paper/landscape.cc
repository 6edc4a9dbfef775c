#include "zeus/sim/paper/landscape.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "zeus/util/error.h"

namespace zeus::sim::paper {

std::vector<ConfigPoint> configurations(const WorkloadTrace& t) {
  std::vector<ConfigPoint> out;
  for (const auto& b : t.batch_sizes) {
    double sum = 0, lo = 0, hi = 0;
    int converged = 0;
    for (double e : b.target_epochs) {
      if (std::isnan(e) || e > static_cast<double>(t.spec.max_epochs)) continue;
      lo = converged == 0 ? e : std::min(lo, e);
      hi = converged == 0 ? e : std::max(hi, e);
      sum += e;
      ++converged;
    }
    const double mean = converged > 0 ? sum / converged : 0.0;
    for (const auto& p : b.limits) {
      ConfigPoint c;
      c.batch_size = b.batch_size;
      c.power_limit = p.power_limit;
      c.average_power = p.average_power;
      c.runs = static_cast<int>(b.target_epochs.size());
      c.runs_converged = converged;
      c.eta = mean * p.energy_per_epoch;
      c.tta = mean * p.time_per_epoch;
      c.eta_min = lo * p.energy_per_epoch;
      c.eta_max = hi * p.energy_per_epoch;
      out.push_back(c);
    }
  }
  return out;
}

std::vector<std::size_t> pareto_front(const std::vector<ConfigPoint>& points) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].feasible()) order.push_back(i);
  }
  // By time, then energy: a point is on the front iff its energy is below
  // every earlier point's (earlier = no slower).
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].tta != points[b].tta) return points[a].tta < points[b].tta;
    return points[a].eta < points[b].eta;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    if (front.empty() || points[i].eta < points[front.back()].eta) front.push_back(i);
  }
  return front;
}

Opportunity opportunity(const WorkloadTrace& t) {
  const auto points = configurations(t);
  const int b0 = t.default_batch_size;
  const Milliwatts max_pl = t.batch(b0).limits.front().power_limit;
  Opportunity o;
  bool have_default = false;
  for (const auto& c : points) {
    if (c.batch_size == b0 && c.power_limit == max_pl) {
      if (c.runs_converged == 0) break;
      o.default_eta = c.eta;
      have_default = true;
    }
  }
  if (!have_default) {
    throw_error(ErrorCode::kInvalidArgument,
                t.name() + " on " + t.gpu +
                    ": no run of the default batch size reaches the target, so there is no "
                    "default energy to compare with");
  }
  o.best_batch_size_eta = o.best_power_limit_eta = o.best_eta = o.default_eta;
  o.best_batch_size = o.best_joint_batch_size = b0;
  o.best_power_limit = o.best_joint_power_limit = max_pl;
  for (const auto& c : points) {
    const bool is_b0 = c.batch_size == b0;
    if (!c.feasible() && !is_b0) continue;
    if (is_b0 && c.eta < o.best_power_limit_eta) {
      o.best_power_limit_eta = c.eta;
      o.best_power_limit = c.power_limit;
    }
    if (c.power_limit == max_pl && c.eta < o.best_batch_size_eta) {
      o.best_batch_size_eta = c.eta;
      o.best_batch_size = c.batch_size;
    }
    if (c.eta < o.best_eta) {
      o.best_eta = c.eta;
      o.best_joint_batch_size = c.batch_size;
      o.best_joint_power_limit = c.power_limit;
    }
  }
  return o;
}

}  // namespace zeus::sim::paper
