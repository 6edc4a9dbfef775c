// A batch-size and power-limit policy of your own, compiled into a plug-in
// and chosen by name: `zeus simulate --policy-plugin build/lib/libzeus_policy_epsilon_greedy.so
// --strategy epsilon-greedy`, or a batch-size job registered with
// "policy": "epsilon-greedy" on `zeus bso serve --policy-plugin ...`
// (docs/extending.md).
//
// The policy: run every batch size once (b0 first, then the others
// ascending), then use the batch size with the lowest mean cost among those
// that ever converged, except that one run in ten explores a random batch
// size. Power limits: profile each batch size the first time it runs and keep
// the cheapest limit. It uses only the seam's header (zeus/optimizer/batch_size/policy.h),
// so the plug-in links against nothing of the library.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "zeus/optimizer/batch_size/policy.h"

namespace {

namespace bs = zeus::batch_size;

// splitmix64: small and fully determined by the seed, so replays repeat.
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : x_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (x_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t x_;
};

class EpsilonGreedy final : public bs::BatchSizePolicy {
 public:
  explicit EpsilonGreedy(const bs::PolicyContext& c) : rng_(c.seed) {
    order_.push_back(c.default_batch_size);
    for (int b : c.batch_sizes) {
      if (b != c.default_batch_size) order_.push_back(b);
    }
  }
  bs::BatchSizeChoice predict() override {
    if (next_ < order_.size()) return {0, order_[next_++], bs::TrialKind::kExploration};
    if (rng_.uniform() < kEpsilon) {
      const int b = order_[static_cast<std::size_t>(rng_.next() % order_.size())];
      return {0, b, bs::TrialKind::kExploration};
    }
    return {0, best(), bs::TrialKind::kSampling};
  }
  void observe(const bs::BatchSizeChoice& choice, zeus::Joules cost, bool converged) override {
    auto& s = stats_[choice.batch_size];
    s.sum += cost.value();
    s.runs += 1;
    s.converged = s.converged || converged;
  }

 private:
  static constexpr double kEpsilon = 0.1;
  struct Stats {
    double sum = 0.0;
    int runs = 0;
    bool converged = false;
  };
  int best() const {
    int best = order_.front();  // b0 until something converges
    double best_mean = std::numeric_limits<double>::infinity();
    for (const auto& [b, s] : stats_) {
      if (s.converged && s.sum / s.runs < best_mean) {
        best_mean = s.sum / s.runs;
        best = b;
      }
    }
    return best;
  }
  SplitMix rng_;
  std::vector<int> order_;
  std::size_t next_ = 0;
  std::map<int, Stats> stats_;
};

class CheapestProfiledLimit final : public bs::PowerLimitPolicy {
 public:
  std::optional<zeus::Milliwatts> predict(int batch_size) override {
    auto it = best_.find(batch_size);
    if (it == best_.end()) return std::nullopt;  // profile it first
    return it->second.first;
  }
  void observe(int batch_size, zeus::Milliwatts power_limit, zeus::Joules epoch_cost) override {
    auto it = best_.find(batch_size);
    if (it == best_.end() || epoch_cost < it->second.second) {
      best_[batch_size] = {power_limit, epoch_cost};
    }
  }

 private:
  std::map<int, std::pair<zeus::Milliwatts, zeus::Joules>> best_;
};

}  // namespace

// The entry point load_policy_plugin() looks for.
extern "C" void zeus_policy_plugin_v1(std::vector<bs::PolicyInfo>& out) {
  out.push_back({"epsilon-greedy",
                 "each batch size once, then the cheapest converged one, exploring 1 run in 10",
                 /*early_stopping=*/true, [](const bs::PolicyContext& c) {
                   return bs::Policy{std::make_unique<EpsilonGreedy>(c),
                                     std::make_unique<CheapestProfiledLimit>()};
                 }});
}
