#include "zeus/optimizer/batch_size/gaussian_ts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "json_number.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {

using detail::decode_double;
using detail::encode_double;
using detail::field;

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
  const double sum = std::accumulate(a.rewards.begin(), a.rewards.end(), 0.0);
  const double mean = sum / n;
  double ss = 0.0;  // two-pass population variance, like numpy.var
  for (double r : a.rewards) ss += (r - mean) * (r - mean);
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

void GaussianThompsonSampling::fit(int batch_size, std::span<const double> costs) {
  GaussianArm& a = arm(batch_size);
  a.rewards.clear();
  for (double c : costs) a.rewards.push_back(-c);
  const auto w = static_cast<std::size_t>(options_.window_size);
  while (w > 0 && a.rewards.size() > w) a.rewards.pop_front();
  refit(a);
}

void GaussianThompsonSampling::observe(int batch_size, double cost) {
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

nlohmann::json GaussianThompsonSampling::to_json() const {
  nlohmann::json arms = nlohmann::json::array();
  for (const auto& a : arms_) {
    nlohmann::json rewards = nlohmann::json::array();
    for (double r : a.rewards) rewards.push_back(encode_double(r));
    arms.push_back({{"batch_size", a.batch_size},
                    {"rewards", rewards},
                    {"mean", encode_double(a.mean)},
                    {"precision", encode_double(a.precision)},
                    {"reward_precision", encode_double(a.reward_precision)}});
  }
  return {{"prior_mean", encode_double(options_.prior_mean)},
          {"prior_precision", encode_double(options_.prior_precision)},
          {"num_explorations", options_.num_explorations},
          {"window_size", options_.window_size},
          {"arms", arms}};
}

GaussianThompsonSampling GaussianThompsonSampling::from_json(const nlohmann::json& j) {
  GaussianTsOptions o;
  o.prior_mean = decode_double(field(j, "prior_mean"));
  o.prior_precision = decode_double(field(j, "prior_precision"));
  o.num_explorations = field(j, "num_explorations").get<int>();
  o.window_size = field(j, "window_size").get<int>();
  std::vector<int> sizes;
  for (const auto& a : field(j, "arms")) sizes.push_back(field(a, "batch_size").get<int>());
  GaussianThompsonSampling ts(sizes, o);
  for (const auto& ja : field(j, "arms")) {
    GaussianArm& a = ts.arm(ja.at("batch_size").get<int>());
    for (const auto& r : field(ja, "rewards")) a.rewards.push_back(decode_double(r));
    // Stored, not refitted: the restored object must equal the saved one bit for bit.
    a.mean = decode_double(field(ja, "mean"));
    a.precision = decode_double(field(ja, "precision"));
    a.reward_precision = decode_double(field(ja, "reward_precision"));
  }
  return ts;
}

}  // namespace zeus::batch_size
