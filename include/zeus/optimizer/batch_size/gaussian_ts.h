// Gaussian Thompson sampling over batch sizes with a learned reward precision
// (the Zeus MAB stage). Rewards are negated costs (joules). Not thread-safe;
// the owner serializes calls. JSON form: state_json.h.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/util/units.h"

namespace zeus::batch_size {

struct GaussianTsOptions {
  double prior_mean = 0.0;       // prior mean of an arm's reward (-cost, J)
  double prior_precision = 0.0;  // 0 = flat, improper prior (1/J^2)
  int num_explorations = 2;      // observations an arm needs before it is sampled
  int window_size = 0;           // keep only the N most recent observations per arm; 0 = all
};

// One arm's data and posterior. precision / reward_precision are +inf when the
// observed rewards have zero variance (then a draw is exactly the mean).
struct GaussianArm {
  int batch_size = 0;
  std::deque<Joules> rewards;  // -cost, oldest first, at most window_size when windowed
  double mean = 0.0;           // J
  double precision = 0.0;      // 1/J^2
  double reward_precision = 0.0;
};

class GaussianThompsonSampling {
 public:
  // `batch_sizes` must be non-empty and distinct (kInvalidArgument); kept sorted.
  GaussianThompsonSampling(std::vector<int> batch_sizes, GaussianTsOptions options);
  // Exactly these arms (as stored, not refitted), for restoring saved state.
  static GaussianThompsonSampling restore(GaussianTsOptions options, std::vector<GaussianArm> arms);

  // Replaces an arm's observations by `costs` (oldest first; the window applies)
  // and refits it. Unknown batch size: kNotFound.
  void fit(int batch_size, std::span<const Joules> costs);
  // Adds one observation (reward = -cost), evicts beyond the window, refits.
  void observe(int batch_size, Joules cost);
  // One Thompson-sampling decision:
  //  1. a random permutation of the arms (always drawn); the first arm in it
  //     with fewer than num_explorations observations, or with none under a
  //     flat prior, is returned;
  //  2. otherwise one normal draw per arm in ascending batch-size order
  //     (drawn even when the sd is 0) and the arm with the largest sampled
  //     reward; ties go to the smaller batch size.
  int predict(Rng& rng) const;

  const std::vector<GaussianArm>& arms() const { return arms_; }
  const GaussianTsOptions& options() const { return options_; }
  bool has_arm(int batch_size) const;

 private:
  GaussianArm& arm(int batch_size);
  void refit(GaussianArm& a) const;

  GaussianTsOptions options_;
  std::vector<GaussianArm> arms_;
};

}  // namespace zeus::batch_size
