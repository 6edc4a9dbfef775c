#include "zeus/optimizer/pipeline_frequency/planner/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {

std::string_view cost_model_name(CostModelKind kind) {
  return kind == CostModelKind::kExponential ? "exponential" : "convex";
}

CostModelKind parse_cost_model(std::string_view text) {
  if (text == "exponential") return CostModelKind::kExponential;
  if (text == "convex") return CostModelKind::kConvex;
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("unknown cost model '{}': expected 'exponential' or 'convex'", text));
}

CostCurve::CostCurve(std::int64_t min_duration, std::vector<double> costs) : min_(min_duration) {
  if (costs.empty()) throw_error(ErrorCode::kInvalidArgument, "a cost curve needs >= 1 point");
  for (double c : costs) {
    if (!std::isfinite(c)) throw_error(ErrorCode::kInvalidArgument, "a cost is not finite");
  }
  costs_ = std::make_shared<const std::vector<double>>(std::move(costs));
}

const std::vector<double>& CostCurve::costs() const {
  static const std::vector<double> kNone;
  return costs_ ? *costs_ : kNone;
}

bool CostCurve::is_convex_non_increasing(double tol) const {
  const auto& c = costs();
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i] > c[i - 1] + tol) return false;
    if (i >= 2) {
      const double d1 = c[i - 1] - c[i - 2];
      const double d2 = c[i] - c[i - 1];
      if (d2 < d1 - tol) return false;
    }
  }
  return true;
}

namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;

// Solves A x = b by Gaussian elimination with partial pivoting; false if singular.
bool solve3(Mat3 a, Vec3 b, Vec3& x) {
  for (int col = 0; col < 3; ++col) {
    int piv = col;
    for (int r = col + 1; r < 3; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[piv][col])) piv = r;
    }
    if (!(std::abs(a[piv][col]) > 0.0)) return false;
    std::swap(a[col], a[piv]);
    std::swap(b[col], b[piv]);
    for (int r = col + 1; r < 3; ++r) {
      const double f = a[r][col] / a[col][col];
      for (int k = col; k < 3; ++k) a[r][k] -= f * a[col][k];
      b[r] -= f * b[col];
    }
  }
  for (int r = 2; r >= 0; --r) {
    double s = b[r];
    for (int k = r + 1; k < 3; ++k) s -= a[r][k] * x[k];
    x[r] = s / a[r][r];
  }
  return std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]);
}

struct FitData {
  const std::vector<double>& x;
  const std::vector<double>& y;
  double x0;
};

double sse(const FitData& d, const Vec3& p) {
  double s = 0.0;
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    const double r = p[0] * std::exp(p[1] * (d.x[i] - d.x0)) + p[2] - d.y[i];
    s += r * r;
  }
  return s;
}

// Normal equations of the Gauss-Newton step at p.
void normal_equations(const FitData& d, const Vec3& p, Mat3& jtj, Vec3& jtr) {
  jtj = {};
  jtr = {};
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    const double t = d.x[i] - d.x0;
    const double e = std::exp(p[1] * t);
    const Vec3 j = {e, p[0] * t * e, 1.0};
    const double r = p[0] * e + p[2] - d.y[i];
    for (int a = 0; a < 3; ++a) {
      jtr[a] += j[a] * r;
      for (int b = 0; b < 3; ++b) jtj[a][b] += j[a] * j[b];
    }
  }
}

// Levenberg-Marquardt with Marquardt's diagonal scaling from one start.
Vec3 levenberg_marquardt(const FitData& d, Vec3 p) {
  double cur = sse(d, p);
  double lambda = 1e-3;
  for (int iter = 0; iter < 200 && std::isfinite(cur); ++iter) {
    Mat3 jtj;
    Vec3 jtr;
    normal_equations(d, p, jtj, jtr);
    bool improved = false;
    while (lambda < 1e16) {
      Mat3 a = jtj;
      for (int k = 0; k < 3; ++k) a[k][k] += lambda * std::max(jtj[k][k], 1e-300);
      Vec3 step{};
      const Vec3 neg = {-jtr[0], -jtr[1], -jtr[2]};
      if (solve3(a, neg, step)) {
        const Vec3 q = {p[0] + step[0], p[1] + step[1], p[2] + step[2]};
        const double next = sse(d, q);
        if (std::isfinite(next) && next < cur) {
          const double rel = (cur - next) / std::max(cur, 1e-300);
          bool tiny_step = true;
          for (int k = 0; k < 3; ++k) {
            tiny_step = tiny_step && std::abs(step[k]) <= 1e-12 * (std::abs(p[k]) + 1e-12);
          }
          p = q;
          cur = next;
          lambda = std::max(lambda / 10.0, 1e-12);
          improved = true;
          if (rel < 1e-14 || tiny_step) return p;
          break;
        }
      }
      lambda *= 10.0;
    }
    if (!improved) break;
  }
  return p;
}

// scipy marks the covariance inf when the Jacobian is rank deficient.
bool jacobian_full_rank(const FitData& d, const Vec3& p) {
  Mat3 jtj;
  Vec3 jtr;
  normal_equations(d, p, jtj, jtr);
  // Scale to unit diagonal so the test is about rank, not units.
  Mat3 s{};
  for (int a = 0; a < 3; ++a) {
    if (!(jtj[a][a] > 0.0)) return false;
    for (int b = 0; b < 3; ++b) s[a][b] = jtj[a][b] / std::sqrt(jtj[a][a] * jtj[b][b]);
  }
  const double det = s[0][0] * (s[1][1] * s[2][2] - s[1][2] * s[2][1]) -
                     s[0][1] * (s[1][0] * s[2][2] - s[1][2] * s[2][0]) +
                     s[0][2] * (s[1][0] * s[2][1] - s[1][1] * s[2][0]);
  return std::isfinite(det) && det > 1e-14;
}

}  // namespace

ExponentialFit fit_exponential(const std::vector<double>& x, const std::vector<double>& y,
                               Seconds unit_time) {
  const double unit_time_s = unit_time.count();
  ExponentialFit best;
  // scipy's covariance is inf unless there are more points than parameters.
  if (x.size() != y.size() || x.size() < 4) return best;
  const FitData data{x, y, *std::min_element(x.begin(), x.end())};
  const double n = static_cast<double>(x.size());
  for (double a0 : {10.0, 100.0, 1000.0}) {
    for (double k : {0.01, 0.02, 0.03, 0.04, 0.05, 0.1}) {
      for (double c0 : {10.0, 100.0, 1000.0}) {
        const Vec3 p = levenberg_marquardt(data, {a0, -k * unit_time_s / 0.001, c0});
        const double mse = sse(data, p) / n;
        if (!std::isfinite(mse) || !std::isfinite(p[0]) || !std::isfinite(p[1]) ||
            !std::isfinite(p[2])) {
          continue;
        }
        // lowtime requires a >= 0 (convex); we also require b < 0 (decreasing).
        if (!(p[0] > 0.0) || !(p[1] < 0.0)) continue;
        if (!jacobian_full_rank(data, p)) continue;
        if (!best.ok || mse < best.mse) {
          best = {true, p[0], p[1], p[2], data.x0, mse};
        }
      }
    }
  }
  return best;
}

CostCurve convex_hull_curve(const std::vector<std::int64_t>& x, const std::vector<double>& y) {
  if (x.empty() || x.size() != y.size()) {
    throw_error(ErrorCode::kInvalidArgument, "convex hull needs >= 1 (x, y) point");
  }
  std::vector<std::size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(),
            [&](std::size_t a, std::size_t b) { return x[a] != x[b] ? x[a] < x[b] : y[a] < y[b]; });
  // Andrew's monotone chain, lower hull; equal x keeps the lowest y.
  std::vector<std::pair<double, double>> hull;
  for (std::size_t i : idx) {
    const double px = static_cast<double>(x[i]), py = y[i];
    if (!hull.empty() && hull.back().first == px) continue;
    while (hull.size() >= 2) {
      const auto& [ax, ay] = hull[hull.size() - 2];
      const auto& [bx, by] = hull.back();
      // Drop b if it lies on or above segment a -> p.
      if ((by - ay) * (px - ax) >= (py - ay) * (bx - ax)) {
        hull.pop_back();
      } else {
        break;
      }
    }
    hull.emplace_back(px, py);
  }
  const std::int64_t lo = x[idx.front()];
  const std::int64_t hi = x[idx.back()];
  std::vector<double> costs(static_cast<std::size_t>(hi - lo + 1));
  std::size_t seg = 0;
  for (std::int64_t d = lo; d <= hi; ++d) {
    const double dd = static_cast<double>(d);
    while (seg + 1 < hull.size() && hull[seg + 1].first < dd) ++seg;
    double v;
    if (seg + 1 >= hull.size() || hull[seg].first == dd) {
      v = hull[seg].second;
    } else if (hull[seg + 1].first == dd) {
      v = hull[seg + 1].second;
    } else {
      const auto& [ax, ay] = hull[seg];
      const auto& [bx, by] = hull[seg + 1];
      v = ay + (by - ay) * (dd - ax) / (bx - ax);
    }
    costs[static_cast<std::size_t>(d - lo)] = v;
  }
  // A slower option never costs more: flatten any rising tail (stays convex).
  for (std::size_t i = 1; i < costs.size(); ++i) costs[i] = std::min(costs[i], costs[i - 1]);
  return CostCurve(lo, std::move(costs));
}

CostCurve build_cost_curve(const OptionMenu& menu, CostModelKind kind, Seconds unit_time,
                           CurveInfo* info) {
  std::vector<std::int64_t> xi;
  std::vector<double> xd, y;
  for (const auto& o : menu.options()) {
    xi.push_back(o.duration);
    xd.push_back(static_cast<double>(o.duration));
    y.push_back(o.effective.value());
  }
  CurveInfo local;
  local.requested = kind;
  local.used = CostModelKind::kConvex;
  if (kind == CostModelKind::kExponential && menu.min_duration() < menu.max_duration()) {
    local.fit = fit_exponential(xd, y, unit_time);
    if (local.fit.ok) {
      const auto& f = local.fit;
      std::vector<double> costs;
      for (std::int64_t d = menu.min_duration(); d <= menu.max_duration(); ++d) {
        costs.push_back(f.a * std::exp(f.b * (static_cast<double>(d) - f.d0)) + f.c);
      }
      CostCurve curve(menu.min_duration(), std::move(costs));
      if (curve.is_convex_non_increasing(1e-9)) {
        local.used = CostModelKind::kExponential;
        if (info) *info = local;
        return curve;
      }
      local.fit.ok = false;
    }
    log::debug("perseus: exponential fit rejected ({} options); using the convex model",
               menu.options().size());
  }
  if (info) *info = local;
  return convex_hull_curve(xi, y);
}

}  // namespace zeus::pipeline_frequency
