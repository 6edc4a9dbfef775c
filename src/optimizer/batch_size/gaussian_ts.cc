#include "zeus/optimizer/batch_size/gaussian_ts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "zeus/util/error.h"

namespace zeus::batch_size {

GaussianThompsonSampling::GaussianThompsonSampling(std::vector<int> batch_sizes,
                                                   GaussianTsOptions options)
    : options_(options) {
  if (batch_sizes.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "Thompson sampling needs at least one batch size");
  }
  std::sort(batch_sizes.begin(), batch_sizes.end());
  if (std::adjacent_find(batch_sizes.begin(), batch_sizes.end()) != batch_sizes.end()) {
    throw_error(ErrorCode::kInvalidArgument, "Thompson sampling: batch sizes must be distinct");
  }
  if (options.num_explorations < 0 || options.window_size < 0 ||
      !(options.prior_precision >= 0.0)) {
    throw_error(
        ErrorCode::kInvalidArgument,
        fmt::format("Thompson sampling: num_explorations ({}), window_size ({}) and "
                    "prior_precision ({}) must be >= 0",
                    options.num_explorations, options.window_size, options.prior_precision));
  }
  for (int b : batch_sizes) {
    GaussianArm a;
    a.batch_size = b;
    refit(a);
    arms_.push_back(std::move(a));
  }
}

bool GaussianThompsonSampling::has_arm(int batch_size) const {
  return std::any_of(arms_.begin(), arms_.end(),
                     [&](const auto& a) { return a.batch_size == batch_size; });
}

GaussianArm& GaussianThompsonSampling::arm(int batch_size) {
  for (auto& a : arms_) {
    if (a.batch_size == batch_size) return a;
  }
  throw_error(ErrorCode::kNotFound,
              fmt::format("Thompson sampling has no arm for batch size {}", batch_size));
}

void GaussianThompsonSampling::refit(GaussianArm& a) const {
  const double n = static_cast<double>(a.rewards.size());
  if (a.rewards.empty()) {
    a.mean = options_.prior_mean;
    a.precision = options_.prior_precision;
    a.reward_precision = 0.0;
    return;
  }
  double sum = 0.0;
  for (const Joules r : a.rewards) sum += r.value();
  const double mean = sum / n;
  double ss = 0.0;  // two-pass population variance, like numpy.var
  for (const Joules r : a.rewards) ss += (r.value() - mean) * (r.value() - mean);
  const double var = ss / n;
  if (var == 0.0) {
    a.reward_precision = std::numeric_limits<double>::infinity();
    a.mean = mean;
    a.precision = std::numeric_limits<double>::infinity();
    return;
  }
  a.reward_precision = 1.0 / var;
  a.precision = options_.prior_precision + n * a.reward_precision;
  a.mean =
      (options_.prior_precision * options_.prior_mean + a.reward_precision * sum) / a.precision;
}

void GaussianThompsonSampling::fit(int batch_size, std::span<const Joules> costs) {
  GaussianArm& a = arm(batch_size);
  a.rewards.clear();
  for (const Joules c : costs) a.rewards.push_back(-c);
  const auto w = static_cast<std::size_t>(options_.window_size);
  while (w > 0 && a.rewards.size() > w) a.rewards.pop_front();
  refit(a);
}

void GaussianThompsonSampling::observe(int batch_size, Joules cost) {
  GaussianArm& a = arm(batch_size);
  a.rewards.push_back(-cost);
  const auto w = static_cast<std::size_t>(options_.window_size);
  while (w > 0 && a.rewards.size() > w) a.rewards.pop_front();
  refit(a);
}

int GaussianThompsonSampling::predict(Rng& rng) const {
  // Exploration check in a random order, so arms that still need data are
  // spread fairly; the permutation is drawn on every call.
  std::vector<std::size_t> order(arms_.size());
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng.uniform_int(i)]);
  }
  const auto need = static_cast<std::size_t>(options_.num_explorations);
  for (std::size_t i : order) {
    const auto& a = arms_[i];
    if (a.rewards.size() < need || (a.rewards.empty() && options_.prior_precision == 0.0)) {
      return a.batch_size;
    }
  }
  int best = arms_.front().batch_size;
  double best_theta = -std::numeric_limits<double>::infinity();
  bool first = true;
  for (const auto& a : arms_) {
    const double z = rng.normal();
    const double sd = std::isinf(a.precision) ? 0.0 : 1.0 / std::sqrt(a.precision);
    const double theta = a.mean + sd * z;
    if (first || theta > best_theta) {
      best = a.batch_size;
      best_theta = theta;
      first = false;
    }
  }
  return best;
}

GaussianThompsonSampling GaussianThompsonSampling::restore(GaussianTsOptions options,
                                                           std::vector<GaussianArm> arms) {
  std::vector<int> sizes;
  for (const auto& a : arms) sizes.push_back(a.batch_size);
  GaussianThompsonSampling ts(std::move(sizes), options);
  for (auto& a : arms) ts.arm(a.batch_size) = std::move(a);
  return ts;
}

}  // namespace zeus::batch_size
