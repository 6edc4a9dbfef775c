#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "zeus/util/error.h"

namespace zeus::carbon_aware {

namespace {
constexpr std::int64_t kDay = 86'400;
}

std::vector<double> forecast_features(std::int64_t slot_utc, double previous) {
  // Time of day from UTC midnight (not from the series' first row, as the
  // released code did), so a model means the same thing for every start.
  const double phase =
      2.0 * std::numbers::pi * static_cast<double>(((slot_utc % kDay) + kDay) % kDay) / kDay;
  return {std::sin(phase), std::cos(phase), previous};
}

void SignalForecaster::fit(std::span<const double> history, std::int64_t first_utc,
                           std::int64_t step_s) {
  if (step_s <= 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("forecaster: step must be positive, got {} s", step_s));
  }
  fit_model(history, first_utc, step_s);
  double sum = 0.0;
  int n = 0;
  for (std::size_t i = 1; i < history.size(); ++i) {
    if (history[i] == 0.0) continue;
    const double f = predict(first_utc + static_cast<std::int64_t>(i) * step_s, history[i - 1]);
    sum += std::abs((f - history[i]) / history[i]);
    ++n;
  }
  mape_ = n == 0 ? std::nullopt : std::optional<double>(100.0 * sum / n);
}

void LinearForecaster::fit_model(std::span<const double> h, std::int64_t first_utc,
                                 std::int64_t step_s) {
  fitted_ = false;
  beta_.clear();
  // A day of points (each with its predecessor) before a model is trusted.
  if (h.size() < 2 || static_cast<std::int64_t>(h.size() - 1) * step_s < kDay - step_s) return;
  double a[4][5] = {};  // normal equations X'X | X'y
  for (std::size_t i = 1; i < h.size(); ++i) {
    const auto f = forecast_features(first_utc + static_cast<std::int64_t>(i) * step_s, h[i - 1]);
    const double x[4] = {1.0, f[0], f[1], f[2]};
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 4; ++c) a[r][c] += x[r] * x[c];
      a[r][4] += x[r] * h[i];
    }
  }
  // Gauss-Jordan with partial pivoting; a pivot that vanishes relative to the
  // matrix's scale means the features are collinear (a constant signal).
  double scale = 0.0;
  for (auto& row : a) {
    for (int c = 0; c < 4; ++c) scale = std::max(scale, std::abs(row[c]));
  }
  for (int col = 0; col < 4; ++col) {
    int piv = col;
    for (int r = col + 1; r < 4; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[piv][col])) piv = r;
    }
    if (std::abs(a[piv][col]) <= 1e-12 * scale) return;
    for (int c = 0; c < 5; ++c) std::swap(a[col][c], a[piv][c]);
    for (int r = 0; r < 4; ++r) {
      if (r == col) continue;
      const double k = a[r][col] / a[col][col];
      for (int c = col; c < 5; ++c) a[r][c] -= k * a[col][c];
    }
  }
  beta_ = {a[0][4] / a[0][0], a[1][4] / a[1][1], a[2][4] / a[2][2], a[3][4] / a[3][3]};
  fitted_ = std::all_of(beta_.begin(), beta_.end(), [](double b) { return std::isfinite(b); });
}

double LinearForecaster::predict(std::int64_t slot_utc, double previous) const {
  if (!fitted_) return previous;
  const auto f = forecast_features(slot_utc, previous);
  return beta_[0] + beta_[1] * f[0] + beta_[2] * f[1] + beta_[3] * f[2];
}

double OracleForecaster::predict(std::int64_t slot_utc, double) const {
  return truth_.value(truth_.index_at(slot_utc));
}

std::unique_ptr<SignalForecaster> make_forecaster(const std::string& name,
                                                  const GridSignal* truth) {
  if (name == "persistence") return std::make_unique<PersistenceForecaster>();
  if (name == "linear") return std::make_unique<LinearForecaster>();
  if (name == "svr") return std::make_unique<SvrForecaster>();
  if (name == "oracle") {
    if (truth == nullptr) {
      throw_error(ErrorCode::kInvalidArgument,
                  "forecaster 'oracle' needs the true series: it exists in the simulator only");
    }
    return std::make_unique<OracleForecaster>(*truth);
  }
  throw_error(
      ErrorCode::kInvalidArgument,
      fmt::format("unknown forecaster '{}'; expected persistence, linear, svr or oracle", name));
}

}  // namespace zeus::carbon_aware
