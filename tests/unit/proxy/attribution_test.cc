// The attribution rule on its own: conservation, equal shares for equal
// work, a lone request's whole slices, idle energy kept apart, and the
// weights of requests whose tokens are not seen.
#include "zeus/proxy/attribution.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "zeus/util/error.h"

namespace zeus::proxy {
namespace {

double energy_of(const std::vector<FinishedRequest>& f, RequestId id) {
  for (const auto& r : f) {
    if (r.id == id) return r.energy.value();
  }
  ADD_FAILURE() << "request " << id << " did not finish";
  return -1;
}

TEST(Attribution, ConservesEnergyOverRandomTraffic) {
  std::mt19937_64 rng(42);
  Attributor a;
  std::map<RequestId, double> finished;
  std::vector<RequestId> live;
  double measured = 0;
  RequestId next = 1;
  for (int slice = 0; slice < 5000; ++slice) {
    if (live.size() < 40 && rng() % 3 == 0) {
      live.push_back(next);
      a.begin(next++, rng() % 4 != 0);
    }
    for (RequestId id : live) {
      if (rng() % 2) a.add_tokens(id, static_cast<double>(rng() % 5));
    }
    if (!live.empty() && rng() % 4 == 0) {
      const std::size_t i = rng() % live.size();
      a.end(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    const double e = static_cast<double>(rng() % 1000) / 7.0;
    measured += e;
    for (const auto& f : a.close_slice(Joules(e))) finished[f.id] = f.energy.value();
  }
  for (RequestId id : live) a.end(id);
  for (const auto& f : a.close_slice(Joules(0.0))) finished[f.id] = f.energy.value();
  double requests = 0;
  for (const auto& [id, e] : finished) {
    EXPECT_GE(e, 0.0);
    requests += e;
  }
  EXPECT_EQ(finished.size(), next - 1);
  EXPECT_EQ(a.active(), 0u);
  EXPECT_NEAR(a.measured().value(), measured, 1e-9 * measured);
  EXPECT_NEAR(requests + a.idle().value(), measured, 1e-9 * measured);
  EXPECT_NEAR(a.attributed().value(), requests, 1e-9 * measured);
  EXPECT_GT(a.idle().value(), 0.0);  // the traffic had gaps
}

TEST(Attribution, TwoIdenticalConcurrentRequestsGetEqualEnergy) {
  Attributor a;
  a.begin(1, true);
  a.begin(2, true);
  for (int s = 0; s < 10; ++s) {
    a.add_tokens(1, 3);
    a.add_tokens(2, 3);
    if (s == 9) {
      a.end(1);
      a.end(2);
    }
    const auto f = a.close_slice(Joules(10.0 + s));
    if (s == 9) {
      EXPECT_DOUBLE_EQ(energy_of(f, 1), energy_of(f, 2));
      EXPECT_NEAR(energy_of(f, 1) + energy_of(f, 2), 145.0, 1e-9);
    }
  }
}

TEST(Attribution, LoneRequestGetsAllActiveEnergyAndIdleStaysApart) {
  Attributor a;
  a.close_slice(Joules(5.0));  // before it: idle
  a.begin(7, true);
  a.close_slice(Joules(20.0));  // waiting for its first token: still its slice
  a.add_tokens(7, 4);
  a.end(7);
  const auto f = a.close_slice(Joules(30.0));
  EXPECT_DOUBLE_EQ(energy_of(f, 7), 50.0);
  a.close_slice(Joules(2.0));  // after it: idle
  EXPECT_DOUBLE_EQ(a.idle().value(), 7.0);
  EXPECT_DOUBLE_EQ(a.measured().value(), 57.0);
  EXPECT_EQ(a.slices(), 4u);
}

TEST(Attribution, SharesFollowTheTokensOfTheSlice) {
  Attributor a;
  a.begin(1, true);
  a.begin(2, true);
  a.add_tokens(1, 3);
  a.add_tokens(2, 1);
  a.close_slice(Joules(8.0));
  EXPECT_DOUBLE_EQ(a.energy_of(1)->value(), 6.0);
  EXPECT_DOUBLE_EQ(a.energy_of(2)->value(), 2.0);
  // A slice where only 2 produced: 1 (waiting) gets nothing of it.
  a.add_tokens(2, 2);
  a.close_slice(Joules(4.0));
  EXPECT_DOUBLE_EQ(a.energy_of(1)->value(), 6.0);
  EXPECT_DOUBLE_EQ(a.energy_of(2)->value(), 6.0);
  // No token at all (both waiting for prefill): an equal split.
  a.close_slice(Joules(2.0));
  EXPECT_DOUBLE_EQ(a.energy_of(1)->value(), 7.0);
  EXPECT_DOUBLE_EQ(a.energy_of(2)->value(), 7.0);
}

TEST(Attribution, UnobservedRequestsWeighTheMeanOfTheStreamingOnes) {
  Attributor a;
  a.begin(1, true);
  a.begin(2, true);
  a.begin(3, false);  // non-streaming: its tokens are not seen
  a.add_tokens(1, 4);
  a.add_tokens(2, 2);
  a.close_slice(Joules(12.0));  // weights 4, 2, mean 3 -> 12 * 4/9, 2/9, 3/9
  EXPECT_NEAR(a.energy_of(1)->value(), 12.0 * 4 / 9, 1e-12);
  EXPECT_NEAR(a.energy_of(2)->value(), 12.0 * 2 / 9, 1e-12);
  EXPECT_NEAR(a.energy_of(3)->value(), 12.0 * 3 / 9, 1e-12);
  // Only unobserved requests: equal shares.
  Attributor b;
  b.begin(1, false);
  b.begin(2, false);
  b.close_slice(Joules(10.0));
  EXPECT_DOUBLE_EQ(b.energy_of(1)->value(), 5.0);
  EXPECT_DOUBLE_EQ(b.energy_of(2)->value(), 5.0);
}

TEST(Attribution, EndedRequestsLeaveWithTheirSliceAndOthersStay) {
  Attributor a;
  a.begin(1, true);
  a.begin(2, true);
  a.add_tokens(1, 1);
  a.add_tokens(2, 1);
  a.end(1);
  const auto f = a.close_slice(Joules(4.0));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, 1u);
  EXPECT_DOUBLE_EQ(f[0].energy.value(), 2.0);
  EXPECT_DOUBLE_EQ(f[0].tokens, 1.0);
  EXPECT_EQ(a.active(), 1u);
  EXPECT_FALSE(a.energy_of(1).has_value());
  a.add_tokens(2, 1);
  a.close_slice(Joules(4.0));  // 2 is alone now
  EXPECT_DOUBLE_EQ(a.energy_of(2)->value(), 6.0);
  a.begin(1, true);  // an id may come back once it left
  EXPECT_EQ(a.active(), 2u);
}

TEST(Attribution, RejectsMistakesWithClearErrors) {
  Attributor a;
  a.begin(1, true);
  EXPECT_THROW(a.begin(1, true), Error);
  EXPECT_THROW(a.add_tokens(2, 1), Error);
  EXPECT_THROW(a.add_tokens(1, -1), Error);
  EXPECT_THROW(a.end(3), Error);
  EXPECT_THROW(a.close_slice(Joules(-1.0)), Error);
  EXPECT_THROW(a.close_slice(Joules(std::nan(""))), Error);
  EXPECT_EQ(a.slices(), 0u);
}

}  // namespace
}  // namespace zeus::proxy
