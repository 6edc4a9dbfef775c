// Cost models: a convex, non-increasing effective-energy curve over the integer
// durations [min, max] of one computation type, fitted to its option menu.
// Two models: lowtime's exponential fit a*exp(b*d)+c (Levenberg-Marquardt from
// a 54-point start grid, lowest MSE, with convexity/monotonicity checks), and
// the lower convex hull of the points, linearly interpolated. Plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/planner/profile.h"

namespace zeus::pipeline_frequency {

enum class CostModelKind { kExponential, kConvex };

std::string_view cost_model_name(CostModelKind kind);   // "exponential" / "convex"
CostModelKind parse_cost_model(std::string_view text);  // kInvalidArgument if unknown

// A cost tabulated at every integer duration in [min_duration, max_duration].
// The planner's costs are effective energies in joules; the frontier solver
// treats them as plain numbers. Copies share one immutable table (every op of
// one computation type carries the same curve), so they are cheap.
class CostCurve {
 public:
  CostCurve() = default;
  // `costs[i]` is the cost at min_duration + i. kInvalidArgument if empty or
  // not finite.
  CostCurve(std::int64_t min_duration, std::vector<double> costs);

  std::int64_t min_duration() const { return min_; }
  std::int64_t max_duration() const { return min_ + static_cast<std::int64_t>(costs().size()) - 1; }
  double at(std::int64_t duration) const {
    return (*costs_)[static_cast<std::size_t>(duration - min_)];
  }
  const std::vector<double>& costs() const;
  // Identifies the shared table: equal for copies of one curve.
  const void* table_id() const { return costs_.get(); }
  // True if non-increasing and convex (discrete differences), within `tol`.
  bool is_convex_non_increasing(double tol = 1e-9) const;

 private:
  std::int64_t min_ = 0;
  std::shared_ptr<const std::vector<double>> costs_;
};

// Result of the exponential fit; cost(d) = a * exp(b * (d - d0)) + c, where d0
// is the smallest duration (shifted for conditioning; same family as lowtime's).
struct ExponentialFit {
  bool ok = false;
  double a = 0.0, b = 0.0, c = 0.0, d0 = 0.0;
  double mse = 0.0;
};

// Fits (x, y) points with the start grid and checks of the reference; `unit_time`
// scales the b grid like lowtime (b0 = -k * tau / 1 ms). ok=false if no start
// gives an accepted fit (fewer than 3 points, a <= 0, b >= 0, singular, not finite).
ExponentialFit fit_exponential(const std::vector<double>& x, const std::vector<double>& y,
                               Seconds unit_time);

// Lower convex hull of (duration, cost) points, evaluated at every integer in
// range, then made non-increasing. Points need not be sorted; >= 1 point.
CostCurve convex_hull_curve(const std::vector<std::int64_t>& x, const std::vector<double>& y);

// How one curve was built (for reports).
struct CurveInfo {
  CostModelKind requested = CostModelKind::kConvex;
  CostModelKind used = CostModelKind::kConvex;  // exponential falls back to convex
  ExponentialFit fit;
};

// The effective-energy curve of a menu under `kind`. An exponential fit that
// fails its checks falls back to the convex model (recorded in `info`).
CostCurve build_cost_curve(const OptionMenu& menu, CostModelKind kind, Seconds unit_time,
                           CurveInfo* info = nullptr);

}  // namespace zeus::pipeline_frequency
