// One-step-ahead forecasters of a grid signal (Chase, paper eq. 1-2): the
// value of the coming period from the time of day (sin, cos of the UTC phase)
// and the last completed period's value. Fitted on a trailing window (24 h in
// Chase); each reports its one-step error (MAPE) on the history it saw.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"

namespace zeus::carbon_aware {

class SignalForecaster {
 public:
  virtual ~SignalForecaster() = default;
  // Fits on consecutive samples of `step_s` seconds, the first starting at
  // `first_utc`. Models that need a day of history and get less fall back to
  // persistence (fitted() stays false). Refitting replaces the model.
  void fit(std::span<const double> history, std::int64_t first_utc, std::int64_t step_s);
  // The forecast for the period starting at `slot_utc` given the value of the
  // period before it.
  virtual double predict(std::int64_t slot_utc, double previous) const = 0;
  virtual std::string name() const = 0;
  // Whether a model (not the persistence fallback) answers predict().
  virtual bool fitted() const { return true; }
  // Mean absolute percentage error (%) of one-step forecasts over the fitted
  // history (each point from its predecessor; points whose actual value is 0
  // are skipped). nullopt before fit() or when no point counts.
  std::optional<double> mape() const { return mape_; }

 protected:
  virtual void fit_model(std::span<const double> history, std::int64_t first_utc,
                         std::int64_t step_s) = 0;

 private:
  std::optional<double> mape_;
};

// The three features of every model: sin and cos of the UTC time of day, and
// the previous period's value.
std::vector<double> forecast_features(std::int64_t slot_utc, double previous);

// CI(t) = CI(t-1). The default: on slowly varying signals no model beats it.
class PersistenceForecaster final : public SignalForecaster {
 public:
  double predict(std::int64_t, double previous) const override { return previous; }
  std::string name() const override { return "persistence"; }

 protected:
  void fit_model(std::span<const double>, std::int64_t, std::int64_t) override {}
};

// Ordinary least squares on [1, sin, cos, previous], closed form (normal
// equations). Falls back to persistence with less than a day of history or a
// singular system (a constant signal).
class LinearForecaster final : public SignalForecaster {
 public:
  double predict(std::int64_t slot_utc, double previous) const override;
  std::string name() const override { return "linear"; }
  bool fitted() const override { return fitted_; }
  const std::vector<double>& coefficients() const { return beta_; }  // bias, sin, cos, prev

 protected:
  void fit_model(std::span<const double> history, std::int64_t first_utc,
                 std::int64_t step_s) override;

 private:
  bool fitted_ = false;
  std::vector<double> beta_;
};

// epsilon-SVR with an RBF kernel and the released Chase code's settings
// (scikit-learn's SVR is libsvm): C = 100, gamma = 1e-4, epsilon = 0.1,
// tol = 1e-3, shrinking, unscaled features. Needs libsvm (Debian libsvm-dev):
// without it the constructor throws kNotSupported saying so.
class SvrForecaster final : public SignalForecaster {
 public:
  SvrForecaster();
  ~SvrForecaster() override;
  SvrForecaster(const SvrForecaster&) = delete;
  SvrForecaster& operator=(const SvrForecaster&) = delete;
  double predict(std::int64_t slot_utc, double previous) const override;
  std::string name() const override { return "svr"; }
  bool fitted() const override;
  static bool available();  // built with libsvm

 protected:
  void fit_model(std::span<const double> history, std::int64_t first_utc,
                 std::int64_t step_s) override;

 private:
  struct Model;
  std::unique_ptr<Model> model_;
};

// The true value (simulation only): the upper bound of what forecasting buys.
class OracleForecaster final : public SignalForecaster {
 public:
  // `truth` at the forecast period's resolution; it must outlive this object.
  explicit OracleForecaster(const GridSignal& truth) : truth_(truth) {}
  explicit OracleForecaster(GridSignal&& truth) = delete;  // would dangle
  double predict(std::int64_t slot_utc, double) const override;
  std::string name() const override { return "oracle"; }

 protected:
  void fit_model(std::span<const double>, std::int64_t, std::int64_t) override {}

 private:
  const GridSignal& truth_;
};

// "persistence", "linear", "svr" or "oracle" (then `truth` is required);
// kInvalidArgument naming the accepted names otherwise.
std::unique_ptr<SignalForecaster> make_forecaster(const std::string& name,
                                                  const GridSignal* truth = nullptr);

}  // namespace zeus::carbon_aware
